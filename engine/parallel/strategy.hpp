// Parallelism strategies (issue 4): how one training iteration spreads over devices.
//
// Two notations name the same value type:
//   Megatron-LM, order-free tokens joined by '-':   tp8-pp8-dp16-mb1-1f1b-recompute=selective
//     tpN    tensor parallel (Shoeybi et al. 2019): column/row split of attention and MLP
//     ppN    pipeline stages, each a contiguous range of layers
//     dpN    data-parallel replicas
//     cpN    context parallel (Megatron-Core / Transformer Engine): each sequence's tokens split
//            over N devices, attention's keys and values passed around their ring
//     ulysses  with cpN: the context group's attention by all-to-all instead (DeepSpeed-Ulysses,
//            Jacobs et al. 2023): heads split over the N devices for the whole sequence
//     epN    expert parallel (mixture of experts): each layer's experts split over N of the
//            data-parallel ranks, tokens sent to their experts and back by all-to-all
//     mbN    sequences per micro-batch (mb0: the whole per-replica batch at once)
//     gpipe | 1f1b | interleaved   the pipeline schedule (Huang et al. 2019; Narayanan et al.
//            2021); vN model chunks per device, with interleaved only
//     sp     sequence parallel (Korthikanti et al. 2022)
//     zero0..zero3                 ZeRO stage (Rajbhandari et al. 2020)
//     recompute=none|selective|full  activation recomputation (Korthikanti et al. 2022)
//   DeepFlow (paper §3.3): RC-{kp1}-{kp2}-d{dp}-p{lp} and CR-{kp1}-d{dp}-p{lp}
//     RC (row-column, inner product): the first matrix split by rows kp1 ways, the second by
//     columns kp2 ways; CR (column-row, outer product): the inner dimension split kp1 ways.
//     kp1 is `tp`, kp2 `tp2`, d `dp`, p `pp`; micro_batch 0 (no micro-batching, as the paper).
//     The Megatron option tokens (mb, schedule, v, sp, zero, recompute) may follow.
// Absent tokens take the defaults of Strategy. Parsing checks the syntax only; check_strategy
// (strategy_check.hpp) checks a strategy against a workload and a device count.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"  // Recompute

namespace pathfinder {

class ConfigNode;

// kDualPipe: DeepSeek-V3's bidirectional schedule (DeepSeek-V3 technical report §3.2.1;
// github.com/deepseek-ai/DualPipe): each device holds stage d and stage pp - 1 - d, half the
// micro-batches enter at each end, one micro-batch's forward chunk overlaps another's backward.
enum class PipelineSchedule { kGpipe, kOneFOneB, kInterleaved, kDualPipe };
enum class KernelSplit { kTensor, kRowColumn, kColumnRow };  // Megatron TP; the paper's RC, CR

[[nodiscard]] std::string_view to_string(PipelineSchedule s);  // gpipe, 1f1b, interleaved, dualpipe
[[nodiscard]] std::string_view to_string(KernelSplit k);       // tensor, rc, cr
[[nodiscard]] std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view s);
[[nodiscard]] std::optional<KernelSplit> parse_kernel_split(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_pipeline_schedules();
[[nodiscard]] std::vector<std::string> valid_kernel_splits();

inline constexpr int kMaxZeroStage = 3;

struct Strategy {
  KernelSplit split = KernelSplit::kTensor;
  int tp = 1;           // tensor parallel degree (Megatron); the paper's kp1
  int tp2 = 1;          // the paper's RC second kernel dimension kp2 (1 otherwise)
  int pp = 1;           // pipeline stages
  int dp = 1;           // data-parallel replicas
  int cp = 1;           // context-parallel degree: each sequence split over cp devices
  bool ulysses = false;  // context parallel by all-to-all (heads split) rather than a ring
  int ep = 1;           // expert-parallel degree, within the data-parallel ranks (not a factor)
  // Expert tensor parallelism: 0, the routed experts split over the tensor group like the dense
  // layers (Megatron-Core before --expert-tensor-parallel-size); 1, each expert whole on its
  // rank, the tensor group's ranks routing their own tokens to expert groups made of tensor
  // and data ranks (--expert-tensor-parallel-size 1: Megatron-Core's MoE README, "ETP", and
  // NVIDIA's DeepSeek-V3 and Qwen3 configurations in Megatron-MoE-ModelZoo).
  int etp = 0;
  int micro_batch = 1;  // sequences per micro-batch; 0 = the whole per-replica batch at once
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int virtual_stages = 1;  // model chunks per device (interleaved only)
  bool sequence_parallel = false;
  int zero = 0;  // ZeRO stage 0..3
  Recompute recompute = Recompute::kNone;
  // With selective recomputation, the modules re-run (workload.hpp kRecompute*; 0: the
  // attention core, Korthikanti's), written recompute=mla_up_proj+mlp.
  unsigned recompute_modules = 0;
  [[nodiscard]] int devices() const { return tp * tp2 * cp * pp * dp; }
  // The tensor-parallel degree of the routed experts' weights.
  [[nodiscard]] int expert_tp() const { return etp > 0 ? etp : tp; }
  friend bool operator==(const Strategy&, const Strategy&) = default;
};

// Where problems with a strategy given as a string (a command-line option) are reported: the
// pseudo-file "strategy", no line.
[[nodiscard]] SourceLoc strategy_source();

// Throws ConfigError (one Diagnostic at strategy_source()) naming the bad token and
// what is valid: an unknown token (with a did-you-mean), a token given twice, a degree of 0, a
// ZeRO stage above 3, vN without interleaved, a malformed paper notation.
[[nodiscard]] Strategy parse_strategy(std::string_view text);

// From YAML: a scalar in either notation, or a map with keys tp, tp2, pp, dp, cp, ep, etp, micro_batch,
// schedule, virtual_stages, sequence_parallel, zero, recompute and split (tensor | rc | cr).
// Absent keys take the defaults of Strategy, except micro_batch, 0 when split is rc or cr.
// Strict: unknown keys are errors. Errors carry the file, line and key path.
[[nodiscard]] Strategy read_strategy(const ConfigNode& n);

// A strategy as written, before a workload and a device count complete it
// (complete_strategy, strategy_check.hpp): the fields not written hold Strategy's defaults, and
// the flags say whether dp and the micro-batch size were written. The paper notation writes
// d{dp} and defines micro-batch 0, so both count as written for RC and CR; in a YAML map, a key
// counts when present.
struct PartialStrategy {
  Strategy strategy;
  bool has_dp = false;
  bool has_micro_batch = false;
  friend bool operator==(const PartialStrategy&, const PartialStrategy&) = default;
};
[[nodiscard]] PartialStrategy parse_partial_strategy(std::string_view text);
[[nodiscard]] PartialStrategy read_partial_strategy(const ConfigNode& n);

// The canonical spelling: tp, pp, dp (cp, ep and etp when not 1 or tp), mb and the schedule always (v
// after interleaved), then
// sp, zeroN and recompute=X when they differ from the defaults; the paper notation for RC and
// CR, followed by the options that differ from its defaults. parse_strategy(to_string(s)) == s
// for every strategy parse_strategy can return.
[[nodiscard]] std::string to_string(const Strategy& s);

// Layers of pipeline stage (or model chunk) `stage` of `stages`: layers/stages each, and when
// they do not divide, one more on each of the stages after the first (the first also holds the
// embedding; Megatron's --decoder-first-pipeline-num-layers and torchtitan's split points give
// the first stages fewer, e.g. Llama 3 405B's 126 layers over 8 stages as 15, 16 x 6, 15).
[[nodiscard]] std::int64_t stage_layers(std::int64_t layers, int stages, int stage);
// The first (0-based) of stage `stage`'s layers under stage_layers.
[[nodiscard]] std::int64_t stage_first_layer(std::int64_t layers, int stages, int stage);

}  // namespace pathfinder
