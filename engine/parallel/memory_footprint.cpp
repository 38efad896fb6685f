#include "engine/parallel/memory_footprint.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "engine/core/error.hpp"
#include "engine/parallel/layer_split.hpp"
#include "engine/parallel/strategy_check.hpp"

namespace pathfinder {
namespace {

using I64 = std::int64_t;

double d(I64 v) { return static_cast<double>(v); }
double element_bytes(DataType t) { return bytes_per_element(t).in(units::bytes); }
bool is_interleaved(const Strategy& s) { return s.schedule == PipelineSchedule::kInterleaved; }

// Sequences per micro-batch and micro-batches per pipeline for a per-replica batch of `rows`.
struct MicroBatching {
  I64 size;
  I64 count;
};
MicroBatching micro_batching(I64 rows, const Strategy& s) {
  const I64 b = s.micro_batch > 0 ? s.micro_batch : rows;
  return {b, rows / b};
}

// Of the larger total, the earlier stage on a tie.
MemoryFootprint larger(const MemoryFootprint& a, const MemoryFootprint& b) {
  return b.total() > a.total() ? b : a;
}

}  // namespace

Bytes MemoryFootprint::total() const {
  return weights + gradients + optimizer + activations + workspace;
}

MemoryFootprint model_state_footprint(double parameters, Optimizer o, DataType precision, int zero,
                                      int dp, const MemoryModel& mm) {
  PF_ASSERT(parameters >= 0.0 && zero >= 0 && zero <= kMaxZeroStage && dp >= 1);
  const bool mixed = precision != DataType::kFp32;
  const double p = element_bytes(precision);
  const double master = mixed ? 4.0 : 0.0;                   // fp32 copy of the weights
  // Adam's m and v in fp32, or as the stack keeps them (MemoryModel::moment_bytes).
  const double moments = o == Optimizer::kAdam ? (mm.moment_bytes > 0.0 ? mm.moment_bytes : 8.0) : 0.0;
  const double n = d(dp);
  MemoryFootprint f;
  f.weights = bytes(parameters * p / (zero >= 3 ? n : 1.0));
  const double g = mm.gradient_bytes > 0.0 ? mm.gradient_bytes : p;
  f.gradients = bytes(parameters * g / (zero >= 2 ? n : 1.0));
  f.optimizer = bytes(parameters * (master + moments) / (zero >= 1 ? n : 1.0));
  if (mm.fp32_gradient_buffer) f.gradients += bytes(parameters * 4.0 / (zero >= 2 ? n : 1.0));
  if (zero >= 1) {
    f.gradients += bytes(parameters * mm.zero_unsharded_bytes);
    f.optimizer += bytes(parameters * mm.zero_sharded_bytes / n);
  }
  return f;
}

int in_flight_micro_batches(const Strategy& s, I64 micro_batches, int stage) {
  PF_ASSERT(micro_batches >= 1 && stage >= 0 && stage < s.pp);
  I64 held = micro_batches;
  switch (s.schedule) {
    case PipelineSchedule::kGpipe:
      break;
    case PipelineSchedule::kOneFOneB:
      held = std::min<I64>(s.pp - stage, micro_batches);
      break;
    case PipelineSchedule::kInterleaved:
      held = std::min<I64>(2 * (s.pp - 1 - stage) + I64{s.virtual_stages - 1} * s.pp + 1,
                           micro_batches * s.virtual_stages);
      break;
    case PipelineSchedule::kDualPipe:
      // DeepSeek-V3 report Table 2: DualPipe's activation memory PP + 1 (1F1B's PP), on each
      // device over its two stages.
      held = std::min<I64>(s.pp + 1, micro_batches);
      break;
  }
  return static_cast<int>(held);
}

// Korthikanti et al. 2022 §4.1, per layer and micro-batch, with s sequence, b micro-batch,
// h hidden, a heads, t tp, f ffn, p bytes per activation element (their 2) and 1-byte dropout
// masks (when the workload has dropout). With f = 4h, p = 2, dropout and the GPT-3 layout the
// three groups are their eq. 2, s·b·h·(10 + 24/t + 5·a·s/(h·t)):
//   replicated   s·b·h·(4p + 2): inputs of both norms, of the QKV and of the first MLP GEMM
//                (p each), the attention-output and MLP-output dropout masks (1 each)
//   split by t   s·b·p·(q + 2·kv + h/t + m·f/t): Q, K, V (q = a·d/t query columns, kv = g_t·d
//                key/value columns, g_t = local_kv_heads: GQA stores fewer) and the projection
//                input; the MLP's stored tensors, m = 2 for GeLU (its input and output) and 3
//                for SwiGLU (gate, up and SiLU(gate)·up, the down GEMM's input); a mixture of
//                experts: k·imbalance·(h + m·f_e/t) (each chosen row and its expert's
//                tensors) + m·shared·f_e/t; multi-head latent attention: K of d and V of
//                d_v per local head, the projection input a·d_v/t, and on every rank the
//                latents 2·q_r + 2·c + d_r (before and after their norms)
//   scores       unfused: a·s²·b·(p + dropout? p + 1)/t: softmax output, dropout mask and output;
//                FlashAttention: only the fp32 logsumexp, 4·a·s·b/t (Dao 2023: O and the
//                logsumexp are all its backward needs; O is the projection input above)
// Sequence parallel splits the replicated group by t too (their eq. 3: s·b·h·(34 + 5as/h)/t).
// Selective recomputation stores no scores (recomputes the attention core: 10 + 24/t, or 34/t
// with sp); full recomputation stores only the layer input, s·b·h·p (/t with sp): Table 2.
// A stack whose quantized linear layers save their inputs quantized (c bytes an element,
// Transformer Engine's FP8 casts) stores the norms' outputs before QKV and the first MLP GEMM,
// the MLP's activation output and the experts' rows at c, and the output projection keeps a
// cast of the attention output beside it: GeLU, dense, replicated s·b·h·(2p + 2c + 2), split
// s·b·(p·(q + 2·kv) + (h/t)·(p + c) + (f/t)·(p + c)); the 22B layer at t = 8 331 -> 301 MB
// with c = 1.
Bytes gpt_layer_activations(const GptSpec& w, const Strategy& s, I64 b, double linear_input_bytes) {
  PF_ASSERT(s.tp >= 1 && b >= 1 && linear_input_bytes >= 0.0);
  const double p = element_bytes(w.precision);
  // A quantized linear layer's saved input (MemoryModel::linear_input_bytes), else p.
  const bool quantized = linear_input_bytes > 0.0;
  const double qb = quantized ? linear_input_bytes : p;
  const double t = d(s.tp);
  const double sb = d(w.sequence) * d(b);
  const double sbh = sb * d(w.hidden);
  const double masks = w.dropout ? 2.0 : 0.0;
  const double tokens_share = s.sequence_parallel ? t : 1.0;
  // The norms' outputs: the first feeds the QKV (or MLA's down) projections, the second the
  // MLP; in a mixture of experts the router's 16-bit GEMM keeps the second, and quantized shared
  // experts keep their own cast of it.
  const double norm_out = qb + (w.moe() ? p : qb);
  const double shared_cast = w.moe() && w.shared_experts > 0 && quantized ? qb : 0.0;
  const double replicated = sbh * (2.0 * p + norm_out + shared_cast + masks) / tokens_share;
  const double q = d(w.heads / s.tp * w.head_dim());
  // K and V per local head (MLA: keys of d, values of d_v, up-projected per head).
  const double kv = d(local_kv_heads(w, s.tp)) * d(w.head_dim() + w.value_dim()) / 2.0;
  const double per_width = w.mlp == MlpKind::kSwiglu ? 3.0 : 2.0;
  // A mixture of experts stores, per token, its top_k permuted rows (the experts' input, h
  // each, times the busiest rank's imbalance) and their MLP tensors, and the shared experts'.
  // Experts split over the tensor group see all its tokens' rows, f_e/t wide; whole experts
  // (etp1) only this rank's T/t tokens' rows, f_e wide. Of an MLP's per_width tensors the last
  // (the activation output) is the second GEMM's input.
  // Selective recomputation by module (Megatron-Core's --recompute-modules) stores less:
  // layernorm discards both norms' outputs; mla_up_proj the up projections' Q, K and V (and
  // their inputs' casts: the checkpoint keeps the latents); mlp a dense layer's MLP tensors
  // and moe a sparse layer's routed and shared experts' (each block's input is the norm
  // output, kept); moe_act the experts' activation output; shared_experts the shared experts'.
  const unsigned mods = selective_modules(s.recompute, s.recompute_modules);
  const auto on = [mods](unsigned m) { return (mods & m) != 0; };
  const double norm_outputs = on(kRecomputeLayernorm) ? norm_out * sbh / tokens_share : 0.0;
  const double te = d(s.expert_tp());
  const double widths = (per_width - 1.0) * p;  // per f of width, before the activation output
  const double routed =
      d(w.top_k) * w.expert_imbalance * (te / t) *
      (d(w.hidden) * qb + (widths + (on(kRecomputeMoeAct) ? 0.0 : qb)) * d(w.expert_width()) / te);
  const double shared = on(kRecomputeSharedExperts)
                            ? 0.0
                            : (widths + qb) * d(w.shared_experts * w.expert_width()) / t;
  const double mlp = w.moe() ? (on(kRecomputeMoe) ? 0.0 : routed + shared)
                             : (on(kRecomputeMlp) ? 0.0 : (widths + qb) * d(w.ffn) / t);
  const bool up_recomputed = w.mla() && on(kRecomputeMlaUpProj);
  const double up_proj = up_recomputed ? 0.0 : p * (q + 2.0 * kv);
  // MLA's latents on every rank of the tensor group: the query latent and the key/value latent
  // with its rotary part before their norms, the normalised latents (the up projections'
  // inputs) after.
  const double latents = w.mla() ? p * d(w.q_lora_rank + w.kv_lora_rank + w.rope_head_dim) +
                                       (up_recomputed ? p : qb) * d(w.q_lora_rank + w.kv_lora_rank)
                                 : 0.0;
  // The attention output (the core keeps it for its backward), and the projection's own cast.
  const double attention_out = d(w.value_width()) / t * (p + (quantized ? qb : 0.0));
  const double split = sb * (up_proj + attention_out + mlp + latents);
  const double heads = d(w.heads) * sb / t;
  const double scores = w.attention == AttentionKind::kFlash
                            ? heads * 4.0
                            : heads * d(w.sequence) * (w.dropout ? 2.0 * p + 1.0 : p);
  switch (s.recompute) {
    case Recompute::kNone:
      return bytes(replicated + split + scores);
    case Recompute::kSelective:
      return bytes(replicated - norm_outputs + split +
                   (w.attention == AttentionKind::kFlash || !on(kRecomputeCoreAttn) ? scores
                                                                                     : 0.0));
    case Recompute::kFull:
      return bytes(sbh * p / (s.sequence_parallel ? t : 1.0));
  }
  return bytes(0.0);
}

// gpt_layer_parameters (engine/graph/workload.hpp: GQA, SwiGLU, biases, norms) per layer of the
// stage; stage 0 adds the vocabulary-parallel token embedding V·h/t and the replicated learned
// positions s·h (none with rotary); the last stage the final norm (layernorm 2h, rmsnorm h) and
// the logits weight V·h/t when untied or, tied, when pp > 1 (Megatron keeps a copy of the tied
// token embedding there and all-reduces its gradient).
namespace {

// With the stage's layers already placed (`span`).
I64 stage_parameters(const GptSpec& w, const Strategy& s, int stage, StageSpan span) {
  PF_ASSERT(stage >= 0 && stage < s.pp && s.tp >= 1);
  const I64 h = w.hidden;
  const I64 embedding = w.vocabulary * h / s.tp;
  const I64 layers = span.count;
  const I64 dense = w.dense_layers_in(span.first, layers);
  I64 n = gpt_layer_parameters(w, s.tp, s.ep, s.etp) * (layers - dense) +
          gpt_layer_parameters(w.dense_layer_spec(), s.tp, 1) * dense;
  if (stage == 0) n += embedding + (w.position == PositionKind::kLearned ? w.sequence * h : 0);
  if (stage == s.pp - 1) {
    n += (w.norm == NormKind::kLayerNorm ? 2 * h : h) +
         (s.pp > 1 || !w.tied_embeddings ? embedding : 0);
    // Multi-token prediction's modules (GptSpec::mtp_depth), each a block of the model's own
    // kind, the 2h -> h projection split over the tensor group, and three RMSNorms (the two
    // inputs' and the shared head's); the head itself is the main model's.
    n += w.mtp_depth * (gpt_layer_parameters(w, s.tp, s.ep, s.etp) + 2 * h * h / s.tp + 3 * h);
  }
  return n;
}

}  // namespace

I64 gpt_stage_parameters(const GptSpec& w, const Strategy& s, int stage, LayerSplit split) {
  PF_ASSERT(stage >= 0 && stage < s.pp);
  return stage_parameters(w, s, stage, gpt_stage_span(w, s.pp, stage, split));
}

// Activations held by stage `stage`:
//   layers     held forwards (in_flight_micro_batches) × layers per model chunk (l/(pp·v)) ×
//              gpt_layer_activations
//   stage 0    the embedding's dropout mask (with dropout), s·b·h bytes (/t with sp), for each micro-batch its
//              first chunk holds: GPipe m, 1F1B min(pp, m), DualPipe min(pp + 1, m),
//              interleaved min(2pp − 1, m) (chunk 0
//              keeps its first pp micro-batches until their group's backward reaches it, and
//              runs pp − 1 more during the warm-up); Korthikanti §4.3 count s·b·h/t for each of
//              1F1B's pp
//   last       the output layer (Korthikanti §4.3, 4·s·b·h/t·(1 + V/h) with sp): inputs of the
//              final layernorm and of the logits GEMM, s·b·h·p each (/t with sp), and the
//              logits kept in fp32 for the vocabulary-parallel cross-entropy, 4·s·b·V/t; held
//              for m micro-batches by GPipe, one otherwise (each backward follows its forward)
// Workspace, an allowance of ours (Korthikanti count stored activations only):
//   recompute  the backward of one layer rematerializes its activations for one micro-batch:
//              full, the whole layer as without recomputation; selective, its attention scores
//   ZeRO-3     gathered from the data-parallel group, p bytes each: the running layer's
//              weights and the next layer's, prefetched (FSDP's rate limiter,
//              limit_all_gathers, on by default, keeps two gathered units at most; Zhao et
//              al. 2023), and the running layer's unsharded gradients until their
//              reduce-scatter: three layers' parameters
namespace {

Bytes first_stage_activations(const GptSpec& w, const Strategy& s, I64 b, I64 m) {
  if (!w.dropout) return bytes(0.0);  // no mask to keep
  const double sbh = d(w.sequence) * d(b) * d(w.hidden);
  I64 held = m;
  if (s.schedule == PipelineSchedule::kOneFOneB) held = std::min<I64>(s.pp, m);
  if (is_interleaved(s)) held = std::min<I64>(2 * I64{s.pp} - 1, m);
  if (s.schedule == PipelineSchedule::kDualPipe) held = std::min<I64>(s.pp + 1, m);
  return bytes(d(held) * sbh / (s.sequence_parallel ? d(s.tp) : 1.0));
}

Bytes last_stage_activations(const GptSpec& w, const Strategy& s, I64 b, I64 m) {
  const double p = element_bytes(w.precision), t = d(s.tp);
  const double sbh = d(w.sequence) * d(b) * d(w.hidden);
  const double inputs = 2.0 * sbh * p / (s.sequence_parallel ? t : 1.0);
  const double logits = 4.0 * d(w.sequence) * d(b) * d(w.vocabulary) / t;
  const I64 held = s.schedule == PipelineSchedule::kGpipe ? m : 1;
  return bytes(d(held) * (inputs + logits));
}

// The quantized copies of the stage's linear-layer weights a stack keeps (MemoryModel::
// linear_weight_copy_bytes each), less their 16-bit weights when it keeps them only quantized;
// sharded as the weights are under ZeRO-3 (over the expert-data group for routed experts).
// Multi-token-prediction blocks count as sparse layers; biases are left out.
Bytes quantized_weight_copies(const GptSpec& w, const Strategy& s, StageSpan span, I64 mtp,
                              int expert_data, const MemoryModel& mm) {
  const double per_weight = mm.linear_weight_copy_bytes -
                            (mm.quantized_parameters ? element_bytes(w.precision) : 0.0);
  if (per_weight == 0.0) return bytes(0.0);
  const I64 dense = w.dense_layers_in(span.first, span.count);
  const I64 sparse = span.count - dense + mtp;
  GptSpec unbiased = w;
  unbiased.bias = false;
  const double experts =
      d(gpt_layer_expert_parameters(unbiased, s.expert_tp(), s.ep)) * d(sparse);
  const double linear = d(gpt_layer_linear_weights(w, s.tp, s.ep, s.etp)) * d(sparse) +
                        d(gpt_layer_linear_weights(w.dense_layer_spec(), s.tp, 1)) * d(dense);
  const bool sharded = s.zero >= 3;
  return bytes(per_weight * ((linear - experts) / (sharded ? d(s.dp * s.cp) : 1.0) +
                             experts / (sharded ? d(expert_data) : 1.0)));
}

Bytes gpt_workspace(const GptSpec& w, const Strategy& s, I64 b, double linear_input_bytes) {
  Bytes out = bytes(0.0);
  if (s.recompute != Recompute::kNone) {
    Strategy stored = s;
    stored.recompute = Recompute::kNone;
    const Bytes whole = gpt_layer_activations(w, stored, b, linear_input_bytes);
    out += s.recompute == Recompute::kFull
               ? whole
               : whole - gpt_layer_activations(w, s, b, linear_input_bytes);
  }
  if (s.zero >= 3) {  // the larger of a sparse and a dense layer
    const I64 layer = std::max(gpt_layer_parameters(w, s.tp, s.ep, s.etp),
                               gpt_layer_parameters(w.dense_layer_spec(), s.tp, 1));
    out += bytes(3.0 * d(layer) * element_bytes(w.precision));
  }
  return out;
}

}  // namespace

MemoryFootprint gpt_stage_memory_footprint(const GptSpec& w, const Strategy& s, int stage,
                                           const MemoryModel& mm) {
  PF_ASSERT(is_valid_strategy(s, w, s.devices()) && stage >= 0 && stage < s.pp);
  const auto [b, m] = micro_batching(w.global_batch / s.dp, s);
  // Context parallelism: model states sharded over the data-context group (dp·cp ranks, the
  // distributed optimizer's), every activation for this rank's s/cp tokens of each sequence.
  // A mixture of experts' routed experts shard over the expert-data-parallel group instead:
  // dp·cp/ep ranks hold the same experts (Megatron-Core's expert data parallelism).
  const StageSpan span = gpt_stage_span(w, s.pp, stage, mm.layer_split);
  const I64 layers_here = span.count;
  const I64 first_here = span.first;
  // The last stage's multi-token-prediction blocks are sparse layers too (GptSpec::mtp_depth).
  const I64 mtp_here = stage == s.pp - 1 ? w.mtp_depth : 0;
  const double experts = d(gpt_layer_expert_parameters(w, s.expert_tp(), s.ep)) *
                         d(layers_here - w.dense_layers_in(first_here, layers_here) + mtp_here);
  // LoRA: the frozen weights held (sharded with ZeRO-3 like the rest), gradients and optimizer
  // states for the adapters only (the embedding, head and norms frozen too).
  const double base = d(stage_parameters(w, s, stage, span)) - experts;
  const double adapters =
      w.lora() ? d(gpt_layer_trainable_parameters(w, s.tp, s.ep, s.etp) * span.count) : 0.0;
  MemoryFootprint f = model_state_footprint(w.lora() ? adapters : base, w.optimizer,
                                            w.precision, s.zero, s.dp * s.cp, mm);
  if (w.lora()) {
    f.weights +=
        model_state_footprint(base, w.optimizer, w.precision, s.zero, s.dp * s.cp, mm).weights;
  }
  // Over the expert-data-parallel group: dp·cp/ep ranks, or tp·cp·dp/ep with whole experts.
  const int expert_data = s.tp / s.expert_tp() * s.dp * s.cp / s.ep;
  if (experts > 0.0) {
    const MemoryFootprint e =
        model_state_footprint(experts, w.optimizer, w.precision, s.zero, expert_data, mm);
    f.weights += e.weights;
    f.gradients += e.gradients;
    f.optimizer += e.optimizer;
  }
  f.weights += quantized_weight_copies(w, s, span, mtp_here, expert_data, mm);
  GptSpec local = w;
  local.sequence = w.sequence / s.cp;
  f.stage = stage;
  f.in_flight_micro_batches = in_flight_micro_batches(s, m, stage);
  // Interleaved: the stage's fuller chunk (chunks of pp x v over the layers differ by one at
  // most, stage_layers).
  const I64 chunk_layers = is_interleaved(s)
                               ? (layers_here + s.virtual_stages - 1) / s.virtual_stages
                               : layers_here;
  // Interleaved chunks hold about the same layers' counts: their dense layers as the stage's
  // share.
  const I64 dense_chunk =
      is_interleaved(s) ? w.dense_layers_in(first_here, layers_here) * chunk_layers /
                              std::max<I64>(layers_here, 1)
                        : w.dense_layers_in(first_here, layers_here);
  // The layers' stored tensors at the stack's precision for them (MemoryModel::activation_bytes).
  const double stored = mm.activation_bytes > 0.0 ? mm.activation_bytes / element_bytes(w.precision) : 1.0;
  const double qb = mm.linear_input_bytes;
  f.activations = d(f.in_flight_micro_batches) * stored *
                  (d(chunk_layers - dense_chunk) * gpt_layer_activations(local, s, b, qb) +
                   d(dense_chunk) * gpt_layer_activations(local.dense_layer_spec(), s, b, qb));
  if (stage == 0) f.activations += first_stage_activations(local, s, b, m);
  if (stage == s.pp - 1) {
    f.activations += last_stage_activations(local, s, b, m);
    // Multi-token prediction: each module's block held like a layer's, and its pass through
    // the output head and loss like the main one's.
    f.activations += d(w.mtp_depth) * (d(f.in_flight_micro_batches) * stored *
                                           gpt_layer_activations(local, s, b, qb) +
                                       last_stage_activations(local, s, b, m));
  }
  f.activations = mm.activation_factor * f.activations;
  f.workspace = gpt_workspace(local, s, b, qb);
  if (s.cp > 1 && !s.ulysses) {  // the ring's two K/V receive buffers (one in use, one arriving)
    f.workspace += bytes(2.0 * d(b) * d(local.sequence) * d(local_kv_heads(w, s.tp)) *
                         d(w.head_dim() + w.value_dim()) * element_bytes(w.precision));
  }
  if (s.cp > 1 && s.ulysses) {  // the all-to-all's regrouped Q, K, V and O of one layer
    const double kv_heads = std::max(d(local_kv_heads(w, s.tp)) / d(s.cp), 1.0) * d(s.cp);
    f.workspace += bytes(d(b) * d(local.sequence) *
                         (d(w.heads / s.tp) * (d(w.head_dim()) + d(w.value_dim())) +
                          kv_heads * d(w.head_dim() + w.value_dim())) *
                         element_bytes(w.precision));
  }
  if (s.pp > 1) {
    f.workspace += bytes(mm.pipeline_buffers * d(b) * d(local.sequence) * d(w.hidden) *
                         element_bytes(w.precision));
  }
  return f;
}

MemoryFootprint gpt_memory_footprint(const GptSpec& w, const Strategy& s, const MemoryModel& mm) {
  if (s.schedule == PipelineSchedule::kDualPipe && s.pp > 1) {
    // Device d holds stage d and stage pp - 1 - d (DeepSeek-V3 report Table 2: parameters 2x):
    // both stages' model states, and the larger stage's activations and workspace for the
    // PP + 1 micro-batches in flight over the two.
    MemoryFootprint f;
    for (int d = 0; d < s.pp / 2; ++d) {
      const MemoryFootprint a = gpt_stage_memory_footprint(w, s, d, mm);
      const MemoryFootprint b = gpt_stage_memory_footprint(w, s, s.pp - 1 - d, mm);
      MemoryFootprint pair = a;
      pair.weights += b.weights;
      pair.gradients += b.gradients;
      pair.optimizer += b.optimizer;
      pair.activations = std::max(a.activations, b.activations);
      pair.workspace = std::max(a.workspace, b.workspace);
      f = d == 0 ? pair : larger(f, pair);
    }
    return f;
  }
  MemoryFootprint f = larger(gpt_stage_memory_footprint(w, s, 0, mm),
                             gpt_stage_memory_footprint(w, s, s.pp - 1, mm));
  // With uneven stages the second holds one layer more than the first and keeps more
  // micro-batches in flight than the last: it can be the fullest. Split by cost, any can.
  if (mm.layer_split == LayerSplit::kByCost) {
    for (int stage = 1; stage + 1 < s.pp; ++stage) {
      f = larger(f, gpt_stage_memory_footprint(w, s, stage, mm));
    }
  } else if (s.pp > 2 &&
             w.layers % (I64{s.pp} * (is_interleaved(s) ? s.virtual_stages : 1)) != 0) {
    f = larger(f, gpt_stage_memory_footprint(w, s, 1, mm));
  }
  return f;
}

MemoryFootprint lstm_memory_footprint(const LstmSpec& w, const Strategy& s) {
  PF_ASSERT(is_valid_strategy(s, w, s.devices()));
  // Not a structured binding: the lambdas below capture these (clang 14 cannot capture one).
  const auto batching = micro_batching(w.batch / s.dp, s);
  const I64 b = batching.size;
  const I64 m = batching.count;
  const double weight_shard = d(s.split == KernelSplit::kRowColumn ? s.tp2 : s.tp);
  const double activation_shard = d(s.tp) * d(s.tp2);
  const double p = element_bytes(w.precision);
  const I64 D = w.hidden, V = w.vocabulary;
  const bool own_stages = s.pp > 2;  // embedding and softmax alone (deepflow-reference §3.8)
  const I64 layers_per_stage = w.layers / (own_stages ? s.pp - 2 : s.pp);
  const auto stage = [&](int i) {
    const bool embedding = i == 0, softmax = i == s.pp - 1;
    const I64 layers = own_stages && (embedding || softmax) ? 0 : layers_per_stage;
    I64 params = layers * (2 * D + 1) * 4 * D;
    if (embedding) params += V * D;
    if (softmax) params += (D + 1) * V;
    MemoryFootprint f =
        model_state_footprint(d(params) / weight_shard, w.optimizer, w.precision, s.zero, s.dp);
    f.stage = i;
    f.in_flight_micro_batches = in_flight_micro_batches(s, m, i);
    const double per_step = d(layers) * 7.0 * d(b) * d(D) + (softmax ? d(b) * d(D + V) : 0.0);
    f.activations =
        bytes(d(f.in_flight_micro_batches) * d(w.sequence) * per_step * p / activation_shard);
    return f;
  };
  // 1F1B holds fewer forwards on later stages, so stage 1 is the fullest middle stage.
  MemoryFootprint f = larger(stage(0), stage(s.pp - 1));
  return s.pp > 2 ? larger(f, stage(1)) : f;
}

MemoryFootprint gemm_memory_footprint(const GemmSpec& w, const Strategy& s) {
  PF_ASSERT(is_valid_strategy(s, w, s.devices()));
  const double p = element_bytes(w.precision);
  const bool rc = s.split == KernelSplit::kRowColumn;
  const double kp1 = d(s.tp), kp2 = d(s.tp2);
  MemoryFootprint f;
  f.weights = bytes(d(w.k) * d(w.n) * p / (rc ? kp2 : kp1));
  f.activations = bytes((d(w.m) * d(w.k) / kp1 + d(w.m) * d(w.n) / (rc ? kp1 * kp2 : 1.0)) * p);
  return f;
}

MemoryFootprint memory_footprint(const WorkloadSpec& w, const Strategy& s, const MemoryModel& mm) {
  return std::visit(
      [&](const auto& spec) -> MemoryFootprint {
        using T = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<T, GemmSpec>) {
          return gemm_memory_footprint(spec, s);
        } else if constexpr (std::is_same_v<T, LstmSpec>) {
          return lstm_memory_footprint(spec, s);
        } else {
          return gpt_memory_footprint(spec, s, mm);
        }
      },
      w);
}

}  // namespace pathfinder
