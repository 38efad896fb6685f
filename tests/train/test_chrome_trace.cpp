// Timelines as Chrome/Perfetto trace-event JSON (engine/train/chrome_trace.hpp).
#include "engine/train/chrome_trace.hpp"

#include <catch2/catch.hpp>

namespace pathfinder {

TEST_CASE("chrome trace: named processes and threads, complete events in microseconds",
          "[train][trace]") {
  Timeline t;
  t.stages = 2;
  t.iteration_time = seconds(0.5);
  t.spans = {{0, TraceTrack::kCompute, "F 0", "forward", seconds(0.0), seconds(0.1), 0, 0},
             {0, TraceTrack::kSendForward, "act 0", "pipeline", seconds(0.1), seconds(0.002), 0,
              0},
             {1, TraceTrack::kCompute, "F 0", "forward", seconds(0.102), seconds(0.1), 0, 1},
             {1, TraceTrack::kHost, "host", "host", seconds(0.49), seconds(0.01), -1, -1}};
  const nlohmann::ordered_json j =
      chrome_trace(t, {{"template", "A100 \"80GB\"\nSXM"}, {"strategy", "tp1-pp2"}});
  const auto& ev = j.at("traceEvents");
  // Per stage: its name, its order, and one name per track (6): 2 x 8 metadata events.
  std::size_t meta = 0, complete = 0;
  for (const auto& e : ev) {
    if (e.at("ph") == "M") ++meta;
    if (e.at("ph") == "X") ++complete;
  }
  CHECK(meta == 2 * (2 + kTraceTracks));
  CHECK(complete == 4);
  CHECK(ev[0] == nlohmann::ordered_json::parse(
                     R"({"ph":"M","name":"process_name","pid":0,"args":{"name":"stage 0"}})"));
  CHECK(ev[3].at("args").at("name") == "send activations");  // stage 0, thread 1
  // The third span: stage 1's forward at 0.102 s = 102,000 us for 100,000 us, compute thread.
  const auto& f1 = ev[meta + 2];
  CHECK(f1.at("pid") == 1);
  CHECK(f1.at("tid") == 0);
  CHECK(f1.at("ts").get<double>() == Approx(102000.0));
  CHECK(f1.at("dur").get<double>() == Approx(100000.0));
  CHECK(f1.at("args").at("chunk") == 1);
  CHECK_FALSE(ev[meta + 3].contains("args"));  // the host span has no micro-batch
  // What was traced, text escaped by the JSON writer (a quote and a newline stay in the string).
  CHECK(j.at("otherData").at("template") == "A100 \"80GB\"\nSXM");
  CHECK(j.dump().find("\\\"80GB\\\"\\nSXM") != std::string::npos);
  CHECK(j.at("otherData").at("iteration_s") == 0.5);
  CHECK(j.at("displayTimeUnit") == "ms");
}

}  // namespace pathfinder
