// Every valid strategy for a workload on a device count (issue 5's strategy search walks them).
//
// Each listed strategy passes is_valid_strategy, and no two describe the same execution. Where
// two spellings would, one representative is listed:
//   GPT    split tensor; every (tp, cp, pp, dp) with tp·cp·pp·dp = devices (cp > 1 only with
//          flash attention and the sequence in 2·cp chunks); for a mixture of experts every ep
//          dividing dp and the experts; micro-batch sizes dividing
//          global_batch/dp (never mb0: it equals mb = global_batch/dp); with pp = 1 only 1f1b
//          (one stage has no pipeline to schedule); interleaved with every v ≥ 2 that fits;
//          sp on and off when tp > 1 (off only when tp = 1); ZeRO stages when dp > 1 (stage 0
//          only when dp = 1); every recompute mode.
//   LSTM   RC with every (kp1, kp2, dp, lp) and CR with kp1 > 1 (CR-1 equals RC-1-1); mb0 and
//          1f1b only (DeepFlow's model has no micro-batches); ZeRO stages when dp > 1.
//   GEMM   RC (kp1·kp2 = devices) and CR (kp1 = devices > 1), dp = pp = 1.
// Order: by split, then tp, tp2, cp, pp (ascending, so dp descending), micro-batch, schedule, v,
// sp, ZeRO stage, recompute — stable, so a search's answer does not depend on it.
//
// Cost: the factorizations are pruned with the strategy rules before the option loops, and
// each candidate is checked without building messages; the only allocations are the divisor
// lists and the result.
#pragma once

#include <vector>

#include "engine/parallel/parallelism_support.hpp"
#include "engine/parallel/strategy.hpp"

namespace pathfinder {

// Narrows the enumeration; the defaults list every valid strategy.
struct EnumerateOptions {
  // GPT pipeline schedules tried when pp > 1 (pp = 1 runs 1f1b if gpipe or 1f1b is listed).
  std::vector<PipelineSchedule> schedules{PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                                          PipelineSchedule::kInterleaved};
  // GPT recompute modes.
  std::vector<Recompute> recompute{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  // With selective: module sets (workload.hpp kRecompute*) tried beside the attention core,
  // the first of them whose every module the model has (each set a recipe published for a
  // kind of model; written sets are the user's): DeepSeek's own for latent attention, every
  // RMSNorm and MLA up-projection (DeepSeek-V3 report §3.3.3), and Qwen3's on H100 for a
  // mixture of experts, moe_act+layernorm (Megatron-MoE-ModelZoo best_practice/qwen3).
  std::vector<unsigned> recompute_modules{kRecomputeMlaUpProj | kRecomputeLayernorm,
                                          kRecomputeMoeAct | kRecomputeLayernorm};
  // ZeRO stages tried when dp > 1.
  std::vector<int> zero_stages{0, 1, 2, 3};
  // LSTM and GEMM kernel splits; tensor is skipped (with tp 1 it equals RC-1-1).
  std::vector<KernelSplit> kernel_splits{KernelSplit::kRowColumn, KernelSplit::kColumnRow};
  bool sequence_parallel = true;  // also try sp when tp > 1
  bool context_parallel = true;   // also try cp > 1 (GPT with flash attention)
  bool expert_parallel = true;    // also try ep > 1 (mixtures of experts)
  int max_micro_batch = 0;        // GPT micro-batch sizes up to this; 0: no limit
  int max_virtual_stages = 0;     // 0: no limit
  // Degrees and micro-batch sizes powers of two only (DeepFlow's main.py search).
  bool powers_of_two = false;
};

[[nodiscard]] std::vector<Strategy> enumerate_strategies(const WorkloadSpec& w, int devices,
                                                         const EnumerateOptions& options = {});
// The defaults, with DualPipe when the stack offers it (no stack does unless its profile lists
// it: ParallelismSupport's default).
[[nodiscard]] EnumerateOptions enumerate_options(const ParallelismSupport& support);

}  // namespace pathfinder
