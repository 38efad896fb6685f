// GptBuilder, the GPT graph builder behind build_gpt_graph (workload.hpp): one pipeline stage's
// compute graph for one micro-batch, forward, backward and optimizer step. The model, the
// notation and the counts per element are described at the top of gpt_graph.cpp. Internal to
// engine/graph; the members are defined in files named for what they build:
//   gpt_builder.cpp    the tensor group's collectives, the norms, gradient merges and adds
//   gpt_linear.cpp     linear layers: their parameters, GEMMs, LoRA adapters, quantization
//   gpt_attention.cpp  attention: unfused or flash (context parallelism), rotary, MLA
//   gpt_mlp.cpp        the dense MLP and the mixture of experts
//   gpt_layer.cpp      a layer's forward and backward passes and their recomputation
//   gpt_graph.cpp      build(): the parameters, the embedding, the layers, the head, the
//                      optimizer step
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/workload.hpp"

namespace pathfinder::gpt_detail {

using Deps = std::vector<KernelId>;

class GptBuilder {
 public:
  GptBuilder(const GptSpec& s, const GptPartition& part)
      : s_(s),
        part_(part),
        tp_(part.tensor),
        etp_(part.expert_tensor > 0 ? part.expert_tensor : part.tensor),
        T_(s.micro_batch * s.sequence / part.context),
        t_(static_cast<double>(T_)),
        rows_(part.sequence_parallel ? t_ / part.tensor : t_),
        mask_(s.dropout ? bytes(1) : Bytes{}),
        p_(bytes_per_element(s.precision)),
        dt_(s.precision) {}

  ComputeGraph build();

 private:
  struct Linear {
    ParamId weight;
    std::optional<ParamId> bias;
    std::int64_t in;
    std::int64_t out;
    bool row_parallel = false;  // its output (and bias) on the T/t rows with sequence parallelism
    bool frozen = false;        // LoRA's base weight: no weight gradient
    std::int64_t rank = 0;      // a LoRA adapter's rank beside it (lora_fwd), 0: none
  };
  struct LayerFwd {
    KernelId ln1, qkv, scores, softmax, context, proj, res1, ln2, fc1, gelu, fc2, res2;
    KernelId q_norm, kv_down, kv_norm, kv_up;  // MLA: the latents' norms, the key/value path
    KernelId up;  // swiglu's up GEMM (fc1 is its gate)
    KernelId router, topk, permuted, experts_out;  // mixture of experts
    Deps shared;  // the shared experts' output producers
  };
  struct LayerParams {
    Linear qkv, proj, fc1, fc2;
    Linear q_down, q_up, kv_down, kv_up;  // multi-head latent attention in place of qkv
    Linear up;  // swiglu only (fc1 is the gate, fc2 the down projection)
    // Mixture of experts: router; the local experts' stacked fc1/up/fc2 weights; shared experts
    // as one MLP in fc1/up/fc2 (when any).
    ParamId router = 0, e_fc1 = 0, e_up = 0, e_fc2 = 0;
  };
  [[nodiscard]] std::int64_t local_experts() const { return s_.experts / part_.expert; }
  // Whether this partition's layer i (global i + first_layer) is a mixture of experts.
  [[nodiscard]] bool moe_at(int i) const { return s_.moe_layer(i + part_.first_layer); }
  // Which forward kernels a pass emits: the forward itself, or a recomputation in backward.
  enum class Pass { kForward, kRecomputeLayer, kRecomputeAttention };

  [[nodiscard]] std::string name(int layer, const std::string& what) const {
    return (layer >= 0 ? "l" + std::to_string(layer + part_.first_layer) + "." : std::string()) +
           what;
  }
  KernelId add(Kernel k, int layer) {
    k.layer = layer < 0 ? layer : layer + part_.first_layer;
    k.host_sync = k.host_sync || std::exchange(host_sync_next_, false);
    return b_.add(std::move(k));
  }
  // A parameter of the model: trained, or frozen under LoRA (GptSpec::lora_rank).
  ParamId param(std::string n, int layer, std::int64_t elements) {
    return b_.add_parameter({std::move(n), layer, elements, !s_.lora()});
  }
  // The outputs of an adapter's A on this rank: r/t (rounded up) beside a column-parallel layer,
  // all r beside a row-parallel one (gpt_layer_trainable_parameters).
  [[nodiscard]] std::int64_t lora_a_width(const Linear& l) const {
    return l.row_parallel ? l.rank : (l.rank + tp_ - 1) / tp_;
  }
  // Bytes per element of one quantized row-wise copy with its scales (quantize()'s `written`
  // is both copies): what an FP8 dispatch sends.
  [[nodiscard]] double fp8_row_bytes() const {
    // NVFP4 profiles refuse an FP8 dispatch.
    const QuantRecipe r = part_.quant_recipe;
    return r == QuantRecipe::kNvfp4 ? 1.0 : quantized_element_bytes(r);
  }
  [[nodiscard]] DataType linear_dtype() const {
    if (!part_.quantized_linear) return dt_;
    return part_.quant_recipe == QuantRecipe::kNvfp4 ? DataType::kFp4 : DataType::kFp8;
  }
  // An FP8 GEMM's accumulation promoted out of the tensor cores: the gradient GEMMs' unless
  // fast (GptPartition::fp8_fast_backward_accumulation), every one with block scales applied on
  // the CUDA cores (QuantRecipe::kBlockwise).
  [[nodiscard]] bool promoted(Phase ph) const {
    if (linear_dtype() != DataType::kFp8) return false;
    return part_.quant_recipe == QuantRecipe::kBlockwise ||
           (!part_.fp8_fast_backward_accumulation && ph != Phase::kForward);
  }
  [[nodiscard]] static Linear unadapted(Linear l) {
    l.rank = 0;
    return l;
  }
  KernelId stream(int layer, const std::string& n, KernelKind kind, Phase ph, double work,
                  Bytes read, Bytes written, Deps deps) {
    return add(stream_kernel(name(layer, n), kind, ph, dt_, flops(work), read, written,
                             std::move(deps)),
               layer);
  }
  // A batched attention GEMM (one per sequence and head) in the backward pass.
  KernelId attention_bwd(int layer, const std::string& n, KernelKind kind, const GemmShape& shape,
                         KernelId dep) {
    return add(gemm_kernel(name(layer, n), kind, Phase::kBackwardData, dt_, shape, {dep}), layer);
  }
  // Before a column-parallel GEMM: sequence parallelism gathers the sharded rows.
  Deps gather_in(int layer, const std::string& n, Phase ph, Deps x, bool overlapped = false) {
    return part_.sequence_parallel
               ? tp_comm(layer, n, CommKind::kAllGather, ph, std::move(x), overlapped)
               : x;
  }
  // Whether sequence parallelism's gathers carry quantized rows (GptPartition::fp8_tp_gather).
  [[nodiscard]] bool fp8_gathers() const {
    return part_.fp8_tp_gather && part_.quantized_linear && part_.sequence_parallel && tp_ > 1;
  }
  // After a row-parallel GEMM: partial sums all-reduced, or reduce-scattered with SP.
  Deps reduce_out(int layer, const std::string& n, Phase ph, Deps x, bool overlapped = false) {
    return tp_comm(layer, n,
                   part_.sequence_parallel ? CommKind::kReduceScatter : CommKind::kAllReduce, ph,
                   std::move(x), overlapped);
  }
  // A weight gradient's product, accumulated into the main gradient when the profile fuses the
  // accumulation (GptPartition::wgrad_accumulation).
  [[nodiscard]] GemmShape wgrad_shape(GemmShape s) const {
    s.accumulate = part_.wgrad_accumulation;
    return s;
  }
  // Whether every parameter's gradient is added (the GEMMs do not accumulate it themselves).
  [[nodiscard]] bool adds_every_gradient() const {
    return part_.gradient_add > 0 && part_.wgrad_accumulation == 0;
  }
  // Whether .float() and .type_as(x) copy: the activations are not already fp32.
  [[nodiscard]] bool casts() const { return p_ != bytes(4); }
  void set_pass(Pass pass) {
    phase_ = pass == Pass::kForward ? Phase::kForward : Phase::kBackwardData;
    suffix_ = pass == Pass::kForward ? ".fwd" : ".recompute";
  }

  // Defined in gpt_builder.cpp.
  Deps tp_comm(int layer, const std::string& n, CommKind kind, Phase ph, Deps after,
               bool overlapped = false, std::optional<Bytes> bytes = std::nullopt);
  Deps quantized_gather(int layer, const std::string& gather, const std::string& cast, Phase ph,
                        double width, Deps x);
  Deps regather(int layer, const std::string& n, bool quantized, Deps x);
  KernelId layernorm_fwd(int layer, const std::string& n, Deps in);
  KernelId layernorm_bwd(int layer, const std::string& n, Deps grad);
  KernelId norm_fwd(int layer, const std::string& n, double rows, double h, Deps in);
  KernelId norm_bwd(int layer, const std::string& n, double rows, double h, Deps grad);
  void norm_params(int layer, const std::string& n, std::int64_t h);
  KernelId gradient_add(int layer, const std::string& n, double elements, Deps deps);
  KernelId merge(int layer, const std::string& n, Deps deps);

  // Defined in gpt_linear.cpp.
  Linear linear(int layer, const std::string& n, std::int64_t in, std::int64_t out,
                bool row_parallel = false);
  KernelId lora_fwd(int layer, const std::string& n, const Linear& lin, Deps x, KernelId base);
  std::pair<KernelId, KernelId> lora_bwd(int layer, const std::string& n, const Linear& lin,
                                         const Deps& g, const Deps& x, KernelId dgrad);
  KernelId quantize(int layer, const std::string& n, Phase ph, double elements, Deps deps,
                    double copies = 2.0);
  KernelId linear_fwd(int layer, const std::string& n, const Linear& lin, bool bias_epilogue,
                      Deps deps, bool cast_input = true);
  KernelId rescaled(int layer, const std::string& n, Phase ph, double elements, KernelId gemm);
  std::pair<KernelId, KernelId> linear_bwd(int layer, const std::string& n, const Linear& lin,
                                           Deps deps, const Deps& wgrad_extra = {},
                                           bool cast_grad = true);

  // Defined in gpt_attention.cpp.
  [[nodiscard]] bool fused_softmax() const;
  KernelId rotary(int layer, const std::string& n, Phase ph, Deps in);
  Deps repeat_kv(int layer, bool backward, Deps in);
  KernelId flash(int layer, const std::string& n, Phase ph, bool fwd, Deps in);
  void attention_fwd(int i, LayerFwd& r, const Deps& qkv);
  // Multi-head latent attention's projections before the attention kernel (r.qkv: the rotated
  // queries, r.kv_up: keys and values) and their backward, which returns the input gradient
  // (complete on every rank: the down projections are replicated) and adds the weight
  // gradients to `grads`.
  void mla_fwd(int i, LayerFwd& r, const LayerParams& w, const Deps& x);
  Deps mla_bwd(int i, const LayerFwd& fw, const LayerParams& w, const Deps& dqkv,
               const Deps& ln1_in, std::vector<KernelId>& grads);

  // Defined in gpt_mlp.cpp.
  KernelId swiglu_fwd(int layer, const std::string& n, double e, Deps in);
  Deps dense_mlp_fwd(int i, LayerFwd& r, const LayerParams& w, double fd, const std::string& pre,
                     const Deps& in, bool cast_input = true);
  Deps dense_mlp_bwd(int i, const LayerFwd& fw, const LayerParams& w, double fd,
                     const std::string& pre, const Deps& g, const Deps& ln2_in, Deps& wg,
                     bool cast_grad = true);
  [[nodiscard]] double expert_rows() const;
  KernelId expert_activation(int i, Deps in);
  KernelId expert_gemm(int layer, const std::string& n, Phase ph, const GemmShape& s, Deps deps,
                       ParamId weight);
  Deps ep_comm(int layer, const std::string& n, Phase ph, Deps after, Bytes b);
  // Mixture-of-experts MLP: forward from the (gathered) norm output, returns the combined
  // output's producers (row-parallel partial sums reduced); backward from the output gradient,
  // returns the producers of the norm-input gradient, and the weight-gradient kernels in wg.
  Deps moe_fwd(int i, LayerFwd& r, const Deps& local, const Deps& gathered);
  Deps moe_bwd(int i, const LayerFwd& f, const Deps& g_local, const Deps& g, const Deps& ln2_in,
               Deps& wg);

  // Defined in gpt_layer.cpp.
  // Op-level selective checkpointing's recomputation at the start of layer i's backward
  // (GptPartition::selective_op): the kernels it re-runs, their ends appended to `g`.
  void recompute_ops(int i, const LayerFwd& stored, Deps& g);
  // Selective recomputation by module (GptPartition::recompute_modules): the discarded
  // modules' forward kernels again before the layer's backward, their outputs joining g.
  void recompute_modules(int i, const LayerFwd& stored, unsigned modules, Deps& g);
  LayerFwd layer_fwd(int i, const Deps& x, Pass pass);
  Deps layer_bwd(int i, const LayerFwd& f, const Deps& g);

  // Defined in gpt_graph.cpp.
  Deps head_fwd(const Deps& x, ParamId logits_weight);
  Deps head_bwd(const Deps& ce, ParamId logits_weight, std::vector<KernelId>& head_grads);

  const GptSpec& s_;
  GptPartition part_;
  std::int64_t tp_;
  std::int64_t etp_;  // the routed experts' tensor-parallel degree: tp_, or 1 (whole experts)
  std::int64_t kv_local_ = local_kv_heads(s_, static_cast<int>(tp_));
  bool rms_ = s_.norm == NormKind::kRmsNorm;
  bool swiglu_ = s_.mlp == MlpKind::kSwiglu;
  bool flash_ = s_.attention == AttentionKind::kFlash;
  bool rotary_ = s_.position == PositionKind::kRotary;
  std::int64_t T_;
  double t_;
  double rows_;  // rows of the replicated element-wise work: T, or T/t with SP
  Bytes mask_;   // hidden-dropout mask per element: 1 byte, or none
  Bytes p_;
  DataType dt_;
  Phase phase_ = Phase::kForward;
  std::string suffix_ = ".fwd";
  bool host_sync_next_ = false;  // the next kernel added waits for the host (Kernel::host_sync)
  ComputeGraphBuilder b_;
  std::vector<LayerParams> params_;
  std::vector<std::vector<KernelId>> grads_;  // kernels producing each layer's gradients
};

}  // namespace pathfinder::gpt_detail
