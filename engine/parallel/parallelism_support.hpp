// What a software stack can run: the pipeline schedules, ZeRO stages, context- and
// expert-parallel forms its code offers (a software profile's `parallelism:` block,
// templates/software/*.yaml). A strategy outside them is a design that stack cannot train: an
// infeasible result with the reason, never a time for a run nobody can make.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/parallel/strategy.hpp"

namespace pathfinder {

struct ParallelismSupport {
  // bit (1 << PipelineSchedule): the schedules offered; by default every one but DualPipe
  // (DeepSeek's own framework's: a profile lists it).
  std::uint8_t schedules = 0b0111;
  std::uint8_t zero_stages = 0b1111;  // bit (1 << stage): ZeRO stages 0..3 offered
  bool ring_context = true;           // context parallelism passing KV blocks around a ring
  bool ulysses = true;                // context parallelism by all-to-all (heads split)
  bool expert = true;                 // expert parallelism
  bool sequence_parallel = true;      // Korthikanti et al.'s sequence parallelism

  [[nodiscard]] bool offers(PipelineSchedule s) const {
    return (schedules >> static_cast<unsigned>(s) & 1U) != 0;
  }
  [[nodiscard]] bool offers_zero(int stage) const {
    return stage >= 0 && stage <= 3 && (zero_stages >> static_cast<unsigned>(stage) & 1U) != 0;
  }
  // Whether the stack runs all of `s` (no message built: the search's inner loop asks).
  [[nodiscard]] bool runs(const Strategy& s) const {
    return (s.pp <= 1 || offers(s.schedule)) && offers_zero(s.zero) &&
           (s.cp <= 1 || (s.ulysses ? ulysses : ring_context)) && (s.ep <= 1 || expert) &&
           (!s.sequence_parallel || s.tp <= 1 || sequence_parallel);
  }
  // What of `s` the stack named `stack` cannot run, as a reason; empty when it runs all of it.
  // A single-stage pipeline runs no schedule; one context- or expert-parallel rank is none.
  [[nodiscard]] std::string refuses(const Strategy& s, std::string_view stack) const;
  friend bool operator==(const ParallelismSupport&, const ParallelismSupport&) = default;
};

}  // namespace pathfinder
