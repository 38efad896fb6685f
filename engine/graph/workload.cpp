#include "engine/graph/workload.hpp"

#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>
#include <variant>

#include "engine/core/error.hpp"
#include "engine/core/enum_table.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<WorkloadKind, 3> kWorkloadKinds{{
    {WorkloadKind::kGemm, "gemm"},
    {WorkloadKind::kLstm, "lstm"},
    {WorkloadKind::kGpt, "gpt"},
}};
constexpr enum_table::Table<Optimizer, 2> kOptimizers{{
    {Optimizer::kSgd, "sgd"},
    {Optimizer::kAdam, "adam"},
}};
constexpr enum_table::Table<Recompute, 3> kRecomputes{{
    {Recompute::kNone, "none"},
    {Recompute::kSelective, "selective"},
    {Recompute::kFull, "full"},
}};
constexpr enum_table::Table<LstmBatching, 2> kLstmBatchings{{
    {LstmBatching::kPerStep, "per_step"},
    {LstmBatching::kSequence, "sequence"},
}};

constexpr enum_table::Table<MlpKind, 2> kMlpKinds{{
    {MlpKind::kGelu, "gelu"},
    {MlpKind::kSwiglu, "swiglu"},
}};
constexpr enum_table::Table<NormKind, 2> kNormKinds{{
    {NormKind::kLayerNorm, "layernorm"},
    {NormKind::kRmsNorm, "rmsnorm"},
}};
constexpr enum_table::Table<PositionKind, 2> kPositionKinds{{
    {PositionKind::kLearned, "learned"},
    {PositionKind::kRotary, "rotary"},
}};
constexpr enum_table::Table<AttentionKind, 2> kAttentionKinds{{
    {AttentionKind::kUnfused, "unfused"},
    {AttentionKind::kFlash, "flash"},
}};

}  // namespace

std::string_view to_string(MlpKind k) { return enum_table::name(kMlpKinds, k); }
std::string_view to_string(NormKind k) { return enum_table::name(kNormKinds, k); }
std::string_view to_string(PositionKind k) { return enum_table::name(kPositionKinds, k); }
std::string_view to_string(AttentionKind k) { return enum_table::name(kAttentionKinds, k); }
std::optional<MlpKind> parse_mlp_kind(std::string_view s) { return enum_table::parse(kMlpKinds, s); }
std::optional<NormKind> parse_norm_kind(std::string_view s) {
  return enum_table::parse(kNormKinds, s);
}
std::optional<PositionKind> parse_position_kind(std::string_view s) {
  return enum_table::parse(kPositionKinds, s);
}
std::optional<AttentionKind> parse_attention_kind(std::string_view s) {
  return enum_table::parse(kAttentionKinds, s);
}
std::vector<std::string> valid_mlp_kinds() { return enum_table::names(kMlpKinds); }
std::vector<std::string> valid_norm_kinds() { return enum_table::names(kNormKinds); }
std::vector<std::string> valid_position_kinds() { return enum_table::names(kPositionKinds); }
std::vector<std::string> valid_attention_kinds() { return enum_table::names(kAttentionKinds); }

std::int64_t local_kv_heads(const GptSpec& s, int tp) {
  PF_ASSERT(tp >= 1 && (s.kv() % tp == 0 || tp % s.kv() == 0));
  return s.kv() % tp == 0 ? s.kv() / tp : 1;
}

// Per layer on one of t ranks (Megatron-LM's sharding, Shoeybi et al. 2019), d = h/a, g_t the
// local KV heads, f the FFN width, β = 1 with biases:
//   QKV (column-parallel)   h·(a/t + 2·g_t)·d weights + β·(a/t + 2·g_t)·d biases
//   projection (row)        (h/t)·h + β·h (bias added after the reduction: replicated)
//   gelu MLP                h·f/t + β·f/t, (f/t)·h + β·h
//   swiglu MLP              gate and up h·f/t each (+ β·f/t each), down (f/t)·h + β·h
//   two norms               layernorm γ and β: 4h; rmsnorm γ only: 2h
// GPT-3 defaults (g = a, gelu, layernorm, biases): (4h² + 2h·f + 3h + f)/t + 6h.
namespace {
// One MLP of width f on a device: gelu 2·h·f (+ biases f + h), swiglu 3·h·f (+ 2f + h).
std::int64_t mlp_parameters(const GptSpec& s, std::int64_t f) {
  const std::int64_t h = s.hidden, beta = s.bias ? 1 : 0;
  return s.mlp == MlpKind::kGelu ? 2 * h * f + beta * (f + h) : 3 * h * f + beta * (2 * f + h);
}
// Multi-head latent attention on one of t ranks (no biases): the replicated down projections
// and latent norms h·q_r + q_r and h·(c + d_r) + c, the column-parallel up projections
// q_r·(a/t)·d (h·(a/t)·d without a query latent) and c·(a/t)·(d − d_r + d_v).
std::int64_t mla_parameters(const GptSpec& s, int tp) {
  const std::int64_t h = s.hidden, a = s.heads / tp, d = s.head_dim(), c = s.kv_lora_rank,
                     qr = s.q_lora_rank, r = s.rope_head_dim;
  const std::int64_t q = qr > 0 ? h * qr + qr + qr * a * d : h * a * d;
  return q + h * (c + r) + c + c * a * (d - r + s.value_dim());
}

}  // namespace

std::int64_t gpt_layer_expert_parameters(const GptSpec& s, int tp, int ep) {
  return s.moe() ? (s.experts / ep) * mlp_parameters(s, s.expert_width() / tp) : 0;
}

std::int64_t gpt_layer_parameters(const GptSpec& s, int tp, int ep, int etp) {
  const std::int64_t h = s.hidden, d = s.head_dim(), beta = s.bias ? 1 : 0;
  const std::int64_t qkv_out = (s.heads / tp + 2 * local_kv_heads(s, tp)) * d;
  std::int64_t n = (s.mla() ? mla_parameters(s, tp) : h * qkv_out + beta * qkv_out) +
                   (s.value_width() / tp) * h + beta * h;
  if (s.moe()) {  // router (replicated), routed experts, shared experts
    n += h * s.experts + gpt_layer_expert_parameters(s, etp > 0 ? etp : tp, ep);
    if (s.shared_experts > 0) n += mlp_parameters(s, s.shared_experts * s.expert_width() / tp);
  } else {
    n += mlp_parameters(s, s.ffn / tp);
  }
  n += s.norm == NormKind::kLayerNorm ? 4 * h : 2 * h;
  return n;
}

// LoRA adapters of one layer on one rank (GptSpec::lora_targets), from the local widths the
// graph builds: beside a column-parallel layer (QKV; the MLP's first layer, gate and up each)
// A in × ceil(r/t) and B r × out/t; beside a row-parallel one (projection, the MLP's second)
// A in/t × r and B r × out.
std::int64_t gpt_layer_trainable_parameters(const GptSpec& s, int tp, int ep, int etp) {
  if (!s.lora()) return gpt_layer_parameters(s, tp, ep, etp);
  const std::int64_t h = s.hidden, r = s.lora_rank, ra = (r + tp - 1) / tp;
  const std::int64_t qkv_out = (s.heads / tp + 2 * local_kv_heads(s, tp)) * s.head_dim();
  const std::int64_t f = s.ffn / tp;
  std::int64_t n = 0;
  if (s.lora_on(kLoraQkv)) n += h * ra + r * qkv_out;
  if (s.lora_on(kLoraProj)) n += (s.value_width() / tp) * r + r * h;
  if (s.lora_on(kLoraFc1)) n += (s.mlp == MlpKind::kGelu ? 1 : 2) * (h * ra + r * f);
  if (s.lora_on(kLoraFc2)) n += f * r + r * h;
  return n;
}

std::int64_t gpt_layer_linear_weights(const GptSpec& s, int tp, int ep, int etp) {
  GptSpec w = s;
  w.bias = false;
  const std::int64_t h = s.hidden;
  const std::int64_t latent_norms = s.mla() ? s.q_lora_rank + s.kv_lora_rank : 0;
  const std::int64_t router = s.moe() ? h * s.experts : 0;
  return gpt_layer_parameters(w, tp, ep, etp) - (s.norm == NormKind::kLayerNorm ? 4 * h : 2 * h) -
         latent_norms - router;
}

// Layers, the token table V·h, learned positions s·h, an untied output head V·h and the final
// norm (layernorm 2h, rmsnorm h).
std::int64_t gpt_parameters(const GptSpec& s) {
  const std::int64_t h = s.hidden, dense = s.dense_layers_in(0, s.layers);
  std::int64_t n = (s.layers - dense) * gpt_layer_parameters(s, 1) +
                   dense * gpt_layer_parameters(s.dense_layer_spec(), 1) + s.vocabulary * h;
  if (s.position == PositionKind::kLearned) n += s.sequence * h;
  if (!s.tied_embeddings) n += s.vocabulary * h;
  return n + (s.norm == NormKind::kLayerNorm ? 2 * h : h);
}

// Per token of the forward pass, 2 FLOPs per multiply-add: QKV 2·h·(h + 2·g·d) (MLA: its down
// and up projections), projection 2·h·a·d_v, MLP 2·2h·f (gelu) or 2·3h·f (swiglu), scores and
// context 2·s·a·(d + d_v) (the whole s×s, as Megatron and PaLM's MFU count it, causal or not),
// logits 2·h·V; forward + backward = 3×. Packed documents (GptSpec::document) attend over
// their own d tokens: 2·d·a·(d + d_v). LoRA counts what runs: the frozen layers forward and
// their data gradients (2×), the attention core 3×, each adapter's 2·r·(in + out) 3×.

// A mixture of experts counts what a token activates: the router 2·h·E, top_k routed and the
// shared experts' MLPs of width expert_ffn; its leading dense layers their MLP of width f.
double gpt_model_flops(const GptSpec& s) {
  const double h = static_cast<double>(s.hidden), f = static_cast<double>(s.ffn),
               sq = static_cast<double>(s.attention_span()), V = static_cast<double>(s.vocabulary),
               kvd = static_cast<double>(s.kv() * s.head_dim());
  const double per_width = (s.mlp == MlpKind::kGelu ? 4.0 : 6.0) * h;
  const double sparse =
      2.0 * h * static_cast<double>(s.experts) +
      per_width * static_cast<double>((s.top_k + s.shared_experts) * s.expert_width());
  const double ad = static_cast<double>(s.attention_width());  // a·d, h unless head_size
  const double av = static_cast<double>(s.value_width());      // a·d_v, a·d unless MLA
  // MLA: the down and up projections (mla_parameters' weights at t = 1, 2 FLOPs each).
  const double qkv = s.mla() ? 2.0 * static_cast<double>(mla_parameters(s, 1) - s.q_lora_rank -
                                                           s.kv_lora_rank)
                             : 2.0 * h * (ad + 2.0 * kvd);
  const double core = 2.0 * sq * (ad + av);
  const auto dense = static_cast<double>(s.dense_layers_in(0, s.layers));
  const double L = static_cast<double>(s.layers);
  const double mlps = s.moe() ? dense * per_width * f + (L - dense) * sparse : L * per_width * f;
  const double tokens = static_cast<double>(s.global_batch) * static_cast<double>(s.sequence);
  const double linear = L * (qkv + 2.0 * h * av) + mlps + 2.0 * h * V;
  if (!s.lora()) return 3.0 * tokens * (linear + L * core);
  const double r = static_cast<double>(s.lora_rank), kv = 2.0 * kvd;
  double adapters = 0.0;  // per token and layer, forward
  if (s.lora_on(kLoraQkv)) adapters += 2.0 * r * (h + ad + kv);
  if (s.lora_on(kLoraProj)) adapters += 2.0 * r * (av + h);
  if (s.lora_on(kLoraFc1)) adapters += (s.mlp == MlpKind::kGelu ? 1.0 : 2.0) * 2.0 * r * (h + f);
  if (s.lora_on(kLoraFc2)) adapters += 2.0 * r * (f + h);
  return tokens * (2.0 * linear + 3.0 * L * (core + adapters));
}

std::string_view to_string(Recompute r) { return enum_table::name(kRecomputes, r); }
std::optional<Recompute> parse_recompute(std::string_view s) {
  return enum_table::parse(kRecomputes, s);
}
std::vector<std::string> valid_recomputes() { return enum_table::names(kRecomputes); }

namespace {
constexpr std::array<std::pair<unsigned, std::string_view>, 7> kRecomputeModules{{
    {kRecomputeCoreAttn, "core_attn"},
    {kRecomputeMlaUpProj, "mla_up_proj"},
    {kRecomputeMlp, "mlp"},
    {kRecomputeMoe, "moe"},
    {kRecomputeMoeAct, "moe_act"},
    {kRecomputeLayernorm, "layernorm"},
    {kRecomputeSharedExperts, "shared_experts"},
}};
}  // namespace

std::string recompute_modules_name(unsigned mask) {
  std::string out;
  for (const auto& [bit, name] : kRecomputeModules) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  return out;
}

std::optional<unsigned> parse_recompute_modules(std::string_view s) {
  unsigned mask = 0;
  for (;;) {
    const std::size_t plus = s.find('+');
    const std::string_view name = s.substr(0, plus);
    const auto it = std::find_if(kRecomputeModules.begin(), kRecomputeModules.end(),
                                 [&](const auto& m) { return m.second == name; });
    if (it == kRecomputeModules.end()) return std::nullopt;
    mask |= it->first;
    if (plus == std::string_view::npos) return mask;
    s.remove_prefix(plus + 1);
  }
}

std::vector<std::string> valid_recompute_modules() {
  std::vector<std::string> out;
  for (const auto& m : kRecomputeModules) out.emplace_back(m.second);
  return out;
}

std::string_view to_string(LstmBatching b) { return enum_table::name(kLstmBatchings, b); }
std::optional<LstmBatching> parse_lstm_batching(std::string_view s) {
  return enum_table::parse(kLstmBatchings, s);
}
std::vector<std::string> valid_lstm_batchings() { return enum_table::names(kLstmBatchings); }
std::string_view to_string(WorkloadKind k) { return enum_table::name(kWorkloadKinds, k); }
std::string_view to_string(Optimizer o) { return enum_table::name(kOptimizers, o); }
std::optional<WorkloadKind> parse_workload_kind(std::string_view s) {
  return enum_table::parse(kWorkloadKinds, s);
}
std::optional<Optimizer> parse_optimizer(std::string_view s) {
  return enum_table::parse(kOptimizers, s);
}
std::vector<std::string> valid_workload_kinds() { return enum_table::names(kWorkloadKinds); }
std::vector<std::string> valid_optimizers() { return enum_table::names(kOptimizers); }

WorkloadKind kind_of(const WorkloadSpec& spec) {
  if (std::holds_alternative<GemmSpec>(spec)) return WorkloadKind::kGemm;
  if (std::holds_alternative<LstmSpec>(spec)) return WorkloadKind::kLstm;
  return WorkloadKind::kGpt;
}

UpdateCost update_cost(Optimizer o, DataType precision) {
  const double p = bytes_per_element(precision).in(units::bytes);
  const bool mixed = precision != DataType::kFp32;
  UpdateCost c;
  switch (o) {
    case Optimizer::kSgd:
      // w -= lr · g / n: a division by the replica count, a multiply by lr, a subtraction
      // (reference applyGrad, deepflow-reference.md §3.8: 3 FLOPs per element).
      c.flops = 3.0;
      // Read g and w, write w; mixed precision reads/writes the fp32 master w and also writes
      // the low-precision copy: read p + 4, write 4 + p.
      c.bytes_read = mixed ? p + 4.0 : 8.0;
      c.bytes_written = mixed ? 4.0 + p : 4.0;
      break;
    case Optimizer::kAdam:
      // AdamW (Loshchilov & Hutter 2019) per element: m = β1·m + (1−β1)·g (3),
      // v = β2·v + (1−β2)·g² (4), bias corrections m̂, v̂ (2), sqrt(v̂) + ε (2), m̂ / (…) (1),
      // + wd·w (2), w -= lr·(…) (2): 16 FLOPs.
      c.flops = 16.0;
      // fp32: the fused Adam kernel reads g, w, m, v and writes w, m, v: 16 read, 12 written.
      // Mixed precision keeps fp32 master weights and moments (16 bytes of state per
      // parameter, ZeRO's count) and the step is several passes over them (Megatron's
      // Float16OptimizerWithFloat16Params.step, Narayanan et al. 2021):
      //   copy the p-byte model gradient to the fp32 main gradient     read p, write 4
      //   fp16 only: unscale by the loss scale, check for inf/nan       read 4, write 4
      //   gradient norm for clipping (multi_tensor_l2norm)             read 4
      //   Adam on g, w, m, v                                           read 16, write 12
      //   copy the fp32 master weights to the p-byte model weights     read 4, write p
      // fp16: read p + 28, write 20 + p; bf16/fp8 (no loss scaling): read p + 24, write 16 + p.
      const double unscale = precision == DataType::kFp16 ? 4.0 : 0.0;
      c.bytes_read = mixed ? p + 24.0 + unscale : 16.0;
      c.bytes_written = mixed ? 16.0 + unscale + p : 12.0;
      break;
  }
  return c;
}

Kernel update_kernel(std::string name, Optimizer o, DataType precision, std::int64_t elements,
                     int layer, std::vector<KernelId> deps) {
  PF_ASSERT(elements > 0);
  const UpdateCost c = update_cost(o, precision);
  const double n = static_cast<double>(elements);
  Kernel k = stream_kernel(std::move(name), KernelKind::kOptimizerUpdate, Phase::kUpdate,
                           precision, flops(c.flops * n), bytes(c.bytes_read * n),
                           bytes(c.bytes_written * n), std::move(deps));
  k.layer = layer;
  return k;
}

ComputeGraph build_gemm_graph(const GemmSpec& spec, const GemmPartition& part) {
  PF_ASSERT(spec.m > 0 && spec.n > 0 && spec.k > 0 && part.kp1 > 0 && part.kp2 > 0);
  const bool rc = part.split == GemmSplit::kRowColumn, cr = part.split == GemmSplit::kColumnRow;
  PF_ASSERT(rc || (part.kp2 == 1 && (cr || part.kp1 == 1)));
  PF_ASSERT(!rc || (spec.m % part.kp1 == 0 && spec.n % part.kp2 == 0));
  PF_ASSERT(!cr || spec.k % part.kp1 == 0);
  const GemmShape local{1, rc ? spec.m / part.kp1 : spec.m, rc ? spec.n / part.kp2 : spec.n,
                        cr ? spec.k / part.kp1 : spec.k};
  ComputeGraphBuilder b;
  const KernelId g = b.add(gemm_kernel("gemm", KernelKind::kGemm, Phase::kForward,
                                       spec.precision, local, {}));
  const Bytes p = bytes_per_element(spec.precision);
  const double m = static_cast<double>(spec.m), n = static_cast<double>(spec.n);
  if (rc && part.kp2 > 1) {
    (void)b.add(comm_kernel("gemm.gather", Phase::kForward, spec.precision,
                            Communication{CommKind::kAllGather, CommGroup::kTensorColumns,
                                          m / part.kp1 * n * p, false},
                            {g}));
  }
  if (cr && part.kp1 > 1) {
    (void)b.add(comm_kernel("gemm.reduce_scatter", Phase::kForward, spec.precision,
                            Communication{CommKind::kReduceScatter, CommGroup::kTensor, m * n * p,
                                          false},
                            {g}));
  }
  return std::move(b).build();
}

ComputeGraph build_graph(const WorkloadSpec& spec) {
  return std::visit(
      [](const auto& s) -> ComputeGraph {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, GemmSpec>) {
          return build_gemm_graph(s);
        } else if constexpr (std::is_same_v<T, LstmSpec>) {
          return build_lstm_graph(s);
        } else {
          return build_gpt_graph(s);
        }
      },
      spec);
}

WorkloadStats workload_stats(const WorkloadSpec& spec, const ComputeGraph& g) {
  WorkloadStats s;
  s.parameters = g.parameter_count();
  if (const auto* gpt = std::get_if<GptSpec>(&spec)) {
    PF_ASSERT(gpt->micro_batch > 0 && gpt->global_batch > 0 &&
              gpt->global_batch % gpt->micro_batch == 0);
    s.micro_batches = gpt->global_batch / gpt->micro_batch;
  }
  s.forward_flops = g.flops(Phase::kForward);
  s.backward_flops = g.flops(Phase::kBackwardData) + g.flops(Phase::kBackwardWeight);
  s.update_flops = g.flops(Phase::kUpdate);
  const double mb = static_cast<double>(s.micro_batches);
  s.flops_per_iteration = mb * (s.forward_flops + s.backward_flops) + s.update_flops;
  // GEMMs never appear in the update phase, so every GEMM runs once per micro-batch.
  s.gemm_flops_per_iteration = mb * g.gemm_flops();
  s.kernels = g.size();
  return s;
}

Workload make_workload(std::string name, const WorkloadSpec& spec) {
  Workload w;
  w.name = std::move(name);
  w.spec = spec;
  w.graph = build_graph(spec);
  w.stats = workload_stats(spec, w.graph);
  return w;
}

}  // namespace pathfinder
