// The board's power limiter (engine/perf/power_limiter.hpp): the clock a kernel settles at.
#include "engine/perf/power_limiter.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace pathfinder;

namespace {

// N7's V-f curve (techlib/logic.yaml): Vn 0.75 V, Vt 0.30 V, Vmin 0.55 V, Vmax 1.0 V, alpha 1.5;
// a 400 W board idling at 76 W, rated at the nominal voltage (the A100 template's point).
PowerLimit a100_like() {
  PowerLimit p;
  p.cap = 400.0;
  p.idle = 76.0;
  p.rated_voltage = 0.75;
  p.vf = {Voltage::from_si(0.75), Voltage::from_si(0.30), Voltage::from_si(0.55),
          Voltage::from_si(1.0), 1.5};
  return p;
}

// The window's power at a throttle, from the limiter's own definition: the clocked part at
// 1/rate, its core-supply energy at (V/V_r)².
double power(const PowerLimit& p, const PowerWindow& w, const Throttle& th) {
  const double t = w.clocked / th.rate + w.unclocked;
  return p.idle + (w.core_energy * th.energy + w.memory_energy) / t;
}

// rate(V)/rate(V_r) with rate ~ (V - Vt)^a / V (engine/arch/vf_scaling.hpp).
double rate_at(double v) {
  return (std::pow(v - 0.30, 1.5) / v) / (std::pow(0.75 - 0.30, 1.5) / 0.75);
}

}  // namespace

TEST_CASE("work within the board's power runs at the rated clock", "[perf][power]") {
  const PowerLimit p = a100_like();
  // 1 J on the core's supply over 4 ms: 250 W + 76 W idle = 326 W <= 400 W.
  const PowerWindow w{1.0, 0.0, 4e-3, 0.0};
  const Throttle th = settle(p, w);
  CHECK_FALSE(th.throttled());
  CHECK(th.rate == 1.0);
  CHECK(th.energy == 1.0);
  CHECK_FALSE(exceeds(p, w));
  // No limiter (a single timed call): never throttled, whatever the draw.
  PowerLimit off = p;
  off.cap = 0.0;
  CHECK_FALSE(settle(off, PowerWindow{100.0, 0.0, 1e-3, 0.0}).throttled());
}

TEST_CASE("work above the board's power settles where it draws exactly the limit",
          "[perf][power]") {
  const PowerLimit p = a100_like();
  // 2 J over 4 ms: 500 W dynamic + 76 W = 576 W at the rated clock.
  const PowerWindow w{2.0, 0.05, 4e-3, 1e-5};
  REQUIRE(exceeds(p, w));
  const Throttle th = settle(p, w);
  REQUIRE(th.throttled());
  CHECK(power(p, w, th) == Approx(400.0).epsilon(1e-9));
  // The voltage is where the V-f curve runs at the chosen rate, above the minimum: energy
  // ratio (V/0.75)² with rate_at(V) = rate.
  const double v = 0.75 * std::sqrt(th.energy);
  CHECK(v > 0.55);
  CHECK(rate_at(v) == Approx(th.rate).epsilon(1e-9));
  // More work in the same time: a lower clock; a lower limit: lower still.
  const Throttle more = settle(p, PowerWindow{2.5, 0.05, 4e-3, 1e-5});
  CHECK(more.rate < th.rate);
  PowerLimit lower = p;
  lower.cap = 350.0;
  CHECK(settle(lower, w).rate < th.rate);
}

TEST_CASE("below the minimum voltage the clock falls alone", "[perf][power]") {
  PowerLimit p = a100_like();
  p.cap = 100.0;  // 24 W of dynamic power for 576 W's work
  const PowerWindow w{2.0, 0.0, 4e-3, 0.0};
  const Throttle th = settle(p, w);
  // At Vmin = 0.55 V: energy (0.55/0.75)², and the power linear in the clock below it.
  CHECK(th.energy == Approx((0.55 / 0.75) * (0.55 / 0.75)));
  CHECK(th.rate < rate_at(0.55));
  CHECK(power(p, w, th) == Approx(100.0).epsilon(1e-9));
  // A device rated at its minimum voltage only lowers its clock.
  p.rated_voltage = 0.55;
  const Throttle at_floor = settle(p, w);
  CHECK(at_floor.energy == 1.0);
  CHECK(power(p, w, at_floor) == Approx(100.0).epsilon(1e-9));
}

TEST_CASE("unclocked time is not stretched, and work without any is not slowed",
          "[perf][power]") {
  const PowerLimit p = a100_like();
  // Half the time on the core's clock, half waiting on latencies: only the first stretches.
  const PowerWindow half{2.0, 0.0, 2e-3, 2e-3};
  const Throttle th = settle(p, half);
  CHECK(power(p, half, th) == Approx(400.0).epsilon(1e-9));
  // A kernel bound by main memory (nothing on the core's clock) over the limit: only its
  // voltage can fall, to the minimum; the clock it reports is finite and positive.
  const PowerWindow memory{0.5, 1.0, 0.0, 1e-3};
  const Throttle m = settle(p, memory);
  CHECK(m.rate > 0.0);
  CHECK(m.rate <= 1.0);
  CHECK(std::isfinite(m.energy));
  // Nothing to time: nothing to limit.
  CHECK_FALSE(settle(p, PowerWindow{1.0, 0.0, 0.0, 0.0}).throttled());
}
