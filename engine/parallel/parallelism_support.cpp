#include "engine/parallel/parallelism_support.hpp"

namespace pathfinder {

std::string ParallelismSupport::refuses(const Strategy& s, std::string_view stack) const {
  if (runs(s)) return {};
  const auto no = [&](const std::string& what, const std::string& key) {
    return std::string(stack) + " runs no " + what + " (its software profile's parallelism." +
           key + ")";
  };
  if (s.pp > 1 && !offers(s.schedule)) {
    return no(std::string(to_string(s.schedule)) + " pipeline schedule", "schedules");
  }
  if (!offers_zero(s.zero)) return no("ZeRO stage " + std::to_string(s.zero), "zero");
  if (s.cp > 1 && s.ulysses && !ulysses) return no("all-to-all context parallelism", "context");
  if (s.cp > 1 && !s.ulysses && !ring_context) return no("ring context parallelism", "context");
  if (s.ep > 1 && !expert) return no("expert parallelism", "expert");
  if (s.sequence_parallel && s.tp > 1 && !sequence_parallel) {
    return no("sequence parallelism", "sequence_parallel");
  }
  return {};
}

}  // namespace pathfinder
