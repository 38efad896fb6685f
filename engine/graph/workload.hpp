// Workloads (issue 3): what is trained (specs) and the compute graph of one training iteration
// built from them, with its parameter and FLOP counts (stats).
//
//   GEMM      one C[m×n] = A[m×k]·B[k×n], forward only (kernel-level studies, calibration)
//   LSTM LM   the DeepFlow paper's language model: embedding, L LSTM layers unrolled over S time
//             steps, a softmax over V per step; kernels as the reference code counts them
//             (deepflow-reference.md §3.8)
//   GPT       a decoder-only transformer: by default pre-layernorm, learned positions, GeLU MLP,
//             biases, logits tied to the token embedding, unfused attention (GPT-2/3 as trained
//             by Megatron-LM); the GptSpec keys select Llama-style variants (GQA, SwiGLU,
//             RMSNorm, rotary, FlashAttention, untied, no bias) in the same builder
//
// A graph holds one micro-batch's forward and backward passes and one optimizer step; an
// iteration runs global_batch / micro_batch micro-batches, then the step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/graph/compute_graph.hpp"
#include "engine/graph/eager_ops.hpp"

namespace pathfinder {

enum class WorkloadKind { kGemm, kLstm, kGpt };
enum class Optimizer { kSgd, kAdam };

[[nodiscard]] std::string_view to_string(WorkloadKind k);
[[nodiscard]] std::string_view to_string(Optimizer o);
[[nodiscard]] std::optional<WorkloadKind> parse_workload_kind(std::string_view s);
[[nodiscard]] std::optional<Optimizer> parse_optimizer(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_workload_kinds();
[[nodiscard]] std::vector<std::string> valid_optimizers();

struct GemmSpec {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DataType precision = DataType::kFp16;
};

// How the LSTM LM's output layer and weight gradients are batched. kPerStep: the softmax
// projection and every weight gradient run once per time step on the step's B rows, the cell
// gradients summed step by step, as the reference code and the paper count them
// (deepflow-reference.md §3.8). kSequence: as frameworks run an LSTM LM, the output projection
// and softmax once over the S·B stacked outputs of the top layer (PyTorch nn.Linear on the
// [S, B, D] output) and each layer's weight gradient as one GEMM over all S·B rows (cuDNN's
// cudnnRNNBackwardWeights); the recurrent cell GEMMs stay per step.
enum class LstmBatching { kPerStep, kSequence };
[[nodiscard]] std::string_view to_string(LstmBatching b);
[[nodiscard]] std::optional<LstmBatching> parse_lstm_batching(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_lstm_batchings();

struct LstmSpec {
  std::int64_t batch = 0;       // B, sequences per iteration
  std::int64_t sequence = 0;    // S, unrolled time steps
  std::int64_t hidden = 0;      // D
  std::int64_t vocabulary = 0;  // V
  std::int64_t layers = 0;      // L
  DataType precision = DataType::kFp16;
  Optimizer optimizer = Optimizer::kSgd;  // the reference's applyGrad is plain SGD
  LstmBatching batching = LstmBatching::kPerStep;
};

// Decoder variants (issue 13). GPT-3 / Megatron-LM: gelu, layernorm, learned, unfused.
// Llama 2/3 (Touvron et al. 2023; Meta Llama 3 model card): swiglu, rmsnorm, rotary, no bias,
// untied, grouped-query attention; trained with FlashAttention (Dao 2023, "FlashAttention-2").
enum class MlpKind { kGelu, kSwiglu };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRotary };
enum class AttentionKind { kUnfused, kFlash };
[[nodiscard]] std::string_view to_string(MlpKind k);
[[nodiscard]] std::string_view to_string(NormKind k);
[[nodiscard]] std::string_view to_string(PositionKind k);
[[nodiscard]] std::string_view to_string(AttentionKind k);
[[nodiscard]] std::optional<MlpKind> parse_mlp_kind(std::string_view s);
[[nodiscard]] std::optional<NormKind> parse_norm_kind(std::string_view s);
[[nodiscard]] std::optional<PositionKind> parse_position_kind(std::string_view s);
[[nodiscard]] std::optional<AttentionKind> parse_attention_kind(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_mlp_kinds();
[[nodiscard]] std::vector<std::string> valid_norm_kinds();
[[nodiscard]] std::vector<std::string> valid_position_kinds();
[[nodiscard]] std::vector<std::string> valid_attention_kinds();

// The linear layers a LoRA adapter can sit beside (GptSpec::lora_targets): the fused QKV, the
// attention output projection, the MLP's first layer (with SwiGLU its gate and up GEMMs) and its
// second.
enum LoraTarget : unsigned { kLoraQkv = 1, kLoraProj = 2, kLoraFc1 = 4, kLoraFc2 = 8, kLoraAll = 15 };

struct GptSpec {
  std::int64_t layers = 0;        // l
  std::int64_t hidden = 0;        // h
  std::int64_t heads = 0;         // a; h must be a multiple of a
  std::int64_t ffn = 0;           // f, usually 4h
  std::int64_t sequence = 0;      // s
  std::int64_t vocabulary = 0;    // V, as padded for the embedding table
  std::int64_t micro_batch = 0;   // b, sequences per micro-batch
  std::int64_t global_batch = 0;  // B, sequences per iteration; a multiple of b
  DataType precision = DataType::kFp16;
  Optimizer optimizer = Optimizer::kAdam;
  bool dropout = true;  // attention-probability and hidden dropout, as Megatron-LM trains GPT
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  PositionKind position = PositionKind::kLearned;
  AttentionKind attention = AttentionKind::kUnfused;
  bool causal = true;            // a causal mask: FlashAttention skips the masked half
  bool tied_embeddings = true;   // logits share the token embedding's weight
  bool bias = true;              // biases on the linear layers (layernorm keeps its own β)
  std::int64_t kv_heads = 0;     // g, key/value heads (GQA; 1 = MQA); 0 means a (multi-head)
  // d, each head's width, when a·d is not h (Qwen3, Gemma: the projection maps a·d back to h);
  // 0: h/a. With multi-head latent attention: the query/key width, nope + rope parts.
  std::int64_t head_size = 0;
  // Multi-head latent attention (DeepSeek-V2/V3; Liu et al. 2024 §2.1.1), on when kv_lora_rank
  // > 0: keys and values up-projected per head from a kv_lora_rank latent (the down projection
  // h -> kv_lora_rank + rope_head_dim, an RMSNorm on the latent), queries likewise from a
  // q_lora_rank latent (0: projected from h directly); rope_head_dim of each query head and
  // one shared key part carry the rotary positions; values of v_head_dim (0: head_dim). The
  // down projections are replicated over the tensor group, the up projections column-parallel
  // (Megatron-Core's MultiLatentAttention).
  std::int64_t kv_lora_rank = 0;
  std::int64_t q_lora_rank = 0;
  std::int64_t rope_head_dim = 0;
  std::int64_t v_head_size = 0;
  // Mixture of experts (Shazeer et al. 2017; Fedus et al. 2022; Mixtral, DeepSeek-V3): every
  // layer's MLP becomes a router (a linear h -> E and a softmax/top-k), E routed experts of
  // width expert_ffn of which each token uses top_k, and shared_experts always-on experts of
  // the same width; dropless routing, the busiest expert rank taking expert_imbalance times
  // the mean number of tokens. 0 experts: a dense MLP.
  std::int64_t experts = 0;
  std::int64_t top_k = 1;
  std::int64_t expert_ffn = 0;  // 0: ffn
  std::int64_t shared_experts = 0;
  double expert_imbalance = 1.0;
  // Group-limited routing (DeepSeek-V2/V3's node-limited routing; Hugging Face n_group and
  // topk_group): the experts in expert_groups equal groups, each token's top_k chosen among the
  // routed_groups groups of highest affinity. 0: any expert (no limit).
  std::int64_t expert_groups = 0;
  std::int64_t routed_groups = 0;
  // The first dense_layers layers keep a dense MLP of width ffn (DeepSeek-V3's
  // first_k_dense_replace 3, GLM-4.5's 3: Liu et al. 2024 §4.2), the rest are sparse.
  std::int64_t dense_layers = 0;
  // Multi-token prediction (DeepSeek-V3 report §2.2): mtp_depth sequential modules on the last
  // pipeline stage, module k predicting the token k + 1 ahead: the previous depth's
  // representation and the next token's embedding, each RMSNormed, concatenated and projected
  // 2h -> h, then one transformer block of the model's own kind (a sparse one in a mixture of
  // experts), the output head shared with the main model and its own cross-entropy. Its
  // parameters are not the model's (gpt_parameters counts the main model, as model cards do);
  // they are trained, stored and reduced. The even layer split makes room for them on the last
  // stage (layer_split.hpp). DeepSeek-V3: 1. 0: none.
  std::int64_t mtp_depth = 0;
  // Packed sequences (fine-tuning on short examples: NeMo's packed_sequence, Megatron-Core's
  // PackedSeqParams): documents of `document` tokens on average, weighted by length (E[l²]/E[l]),
  // concatenated into each sequence; attention stays within a document (FlashAttention's
  // variable-length kernel over cu_seqlens), so its work per token is ~document/2, not s/2.
  // 0: one document per sequence.
  std::int64_t document = 0;
  // LoRA (Hu et al. 2021): every base weight frozen (no weight gradients, gradient buffers,
  // optimizer states or gradient reduction for them), and beside each linear layer in
  // lora_targets (LoraTarget bits) a trainable rank-lora_rank adapter: A (in -> r), B (r -> out),
  // its output added to the layer's. 0: every parameter trained.
  std::int64_t lora_rank = 0;
  unsigned lora_targets = 0;

  [[nodiscard]] bool lora() const { return lora_rank > 0; }
  [[nodiscard]] bool lora_on(unsigned target) const { return lora() && (lora_targets & target) != 0; }
  // Keys each query attends to at most: its document's, or the whole sequence's.
  [[nodiscard]] std::int64_t attention_span() const { return document > 0 ? document : sequence; }
  [[nodiscard]] bool moe() const { return experts > 0; }
  // Whether layer `layer` (0-based, whole model) is a mixture of experts.
  [[nodiscard]] bool moe_layer(std::int64_t layer) const { return moe() && layer >= dense_layers; }
  // Of the `count` layers from `first`, those with a dense MLP.
  [[nodiscard]] std::int64_t dense_layers_in(std::int64_t first, std::int64_t count) const {
    if (!moe()) return count;
    const std::int64_t end = first + count < dense_layers ? first + count : dense_layers;
    return end > first ? end - first : 0;
  }
  // The spec of one of the leading dense layers (experts removed).
  [[nodiscard]] GptSpec dense_layer_spec() const {
    GptSpec d = *this;
    d.experts = 0;
    d.top_k = 1;
    d.expert_ffn = 0;
    d.shared_experts = 0;
    d.dense_layers = 0;
    return d;
  }
  [[nodiscard]] std::int64_t expert_width() const { return expert_ffn > 0 ? expert_ffn : ffn; }
  [[nodiscard]] std::int64_t head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  // a·d: the query width, h unless head_size says otherwise.
  [[nodiscard]] std::int64_t attention_width() const { return heads * head_dim(); }
  [[nodiscard]] bool mla() const { return kv_lora_rank > 0; }
  // Each value head's width (MLA's v_head_dim), and a·d_v, the projection's input.
  [[nodiscard]] std::int64_t value_dim() const { return v_head_size > 0 ? v_head_size : head_dim(); }
  [[nodiscard]] std::int64_t value_width() const { return heads * value_dim(); }
  [[nodiscard]] std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

// Key/value heads one device of a t-way tensor group holds: g/t when t divides g, else one
// (t a multiple of g: each KV head replicated over t/g ranks, as vLLM and Megatron-Core's
// GQA with tp > num_query_groups do).
[[nodiscard]] std::int64_t local_kv_heads(const GptSpec& s, int tp);
// The model's parameters in one transformer layer on one device of a t-way tensor group
// (replicated norms and row-parallel biases counted whole) and, for a mixture of experts, an
// ep-way expert group (E/ep experts each, split over etp ranks, 0: tp; router and shared
// experts on every rank); LoRA's adapters are not among them.
[[nodiscard]] std::int64_t gpt_layer_parameters(const GptSpec& s, int tp, int ep = 1,
                                                int etp = 0);
// The parameters trained in such a layer: those above, or with LoRA only its adapters' A and B,
// held besides the frozen ones (the fused QKV's and the first MLP layer's A split over the
// tensor group by its r outputs, as NeMo's ParallelLinearAdapter's ColumnParallelLinear; the
// row-parallel layers' A by its inputs, B whole).
[[nodiscard]] std::int64_t gpt_layer_trainable_parameters(const GptSpec& s, int tp, int ep = 1,
                                                          int etp = 0);
// Of gpt_layer_parameters, the routed experts' (sharded over the expert-data-parallel group,
// not the data), split over `etp` ranks each.
[[nodiscard]] std::int64_t gpt_layer_expert_parameters(const GptSpec& s, int etp, int ep = 1);
// Of gpt_layer_parameters, the linear layers' weights (QKV or MLA's projections, the output
// projection, the MLP's or the routed and shared experts' matrices): those a stack that runs
// the layers' GEMMs quantized keeps quantized copies of; without norms, biases and the router.
[[nodiscard]] std::int64_t gpt_layer_linear_weights(const GptSpec& s, int tp, int ep = 1,
                                                    int etp = 0);
// Whole-model parameters (no tensor parallelism, the tied head counted once).
[[nodiscard]] std::int64_t gpt_parameters(const GptSpec& s);
// Model FLOPs per iteration, forward and backward, without recomputation: 3× the forward GEMMs
// (Narayanan et al. 2021 eq. 3 generalised to GQA, SwiGLU and causal FlashAttention). With the
// defaults it equals 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
[[nodiscard]] double gpt_model_flops(const GptSpec& s);

// Activation recomputation (Korthikanti et al. 2022): none, the attention core only
// (selective), or each whole layer's forward again before its backward (full).
enum class Recompute { kNone, kSelective, kFull };
[[nodiscard]] std::string_view to_string(Recompute r);
[[nodiscard]] std::optional<Recompute> parse_recompute(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_recomputes();

// Selective recomputation by module (Megatron-Core's --recompute-modules, TransformerConfig
// recompute_modules): bits of a mask. core_attn, Korthikanti's selective (the default);
// mla_up_proj, the MLA up-projections and rotary (their Q, K, V outputs discarded); mlp, a
// dense layer's MLP from its input; moe, a MoE layer's whole block from its input (router,
// dispatch, experts, combine); moe_act, the experts' activation function; layernorm, both
// norms (their outputs discarded); shared_experts, the shared experts' MLP.
inline constexpr unsigned kRecomputeCoreAttn = 1u << 0;
inline constexpr unsigned kRecomputeMlaUpProj = 1u << 1;
inline constexpr unsigned kRecomputeMlp = 1u << 2;
inline constexpr unsigned kRecomputeMoe = 1u << 3;
inline constexpr unsigned kRecomputeMoeAct = 1u << 4;
inline constexpr unsigned kRecomputeLayernorm = 1u << 5;
inline constexpr unsigned kRecomputeSharedExperts = 1u << 6;
// The modules as written after recompute=, joined by '+' in the order above.
[[nodiscard]] std::string recompute_modules_name(unsigned mask);
// "mla_up_proj+mlp": the mask, or nullopt naming nothing else (unknown or empty names).
[[nodiscard]] std::optional<unsigned> parse_recompute_modules(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_recompute_modules();
// The modules a recompute mode re-runs: selective with `modules` (0: core_attn), none for the
// others (full re-runs every layer whole).
[[nodiscard]] constexpr unsigned selective_modules(Recompute r, unsigned modules) {
  return r != Recompute::kSelective ? 0u : modules != 0 ? modules : kRecomputeCoreAttn;
}

// What one device of a tensor-parallel group holds of a GPT (Megatron-LM, Shoeybi et al. 2019;
// sequence parallelism, Korthikanti et al. 2022): `tensor` shards of every weight matrix and
// attention head set, a contiguous range of layers, and the embedding and output head if its
// pipeline stage has them. The graph then carries the tensor group's communication.
struct GptPartition {
  int tensor = 1;
  // The routed experts' tensor-parallel degree: 0, `tensor` (each expert split over the tensor
  // group, its ranks gathering the group's rows before the experts and reduce-scattering after);
  // 1, whole experts, each rank sending its own T/t rows to them (Strategy::etp).
  int expert_tensor = 0;
  [[nodiscard]] int expert_tp() const { return expert_tensor > 0 ? expert_tensor : tensor; }
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  unsigned recompute_modules = 0;  // with kSelective (Strategy::recompute_modules)
  int first_layer = 0;
  int layers = -1;        // -1: every layer from first_layer on
  bool embedding = true;  // the token and position embedding (first stage)
  bool head = true;       // final layernorm, logits and loss (last stage)
  // Sequence parallelism's two backward re-gathers of the layernorm outputs (for the QKV and
  // FFN1 weight gradients) on a communication stream beside the data-gradient GEMMs, as
  // Megatron-LM launches them (LinearWithGradAccumulationAndAsyncCommunication); the compute
  // beside them pays the contention (stage_times.hpp). Off: on the compute stream.
  bool overlap_sp_regather = false;
  // A column-parallel layer's (QKV, FFN1) input-gradient all-reduce, or reduce-scatter under
  // SP, on a side stream beside its weight-gradient GEMM, the layer norm's backward waiting
  // for it: Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication (async_grad_allreduce,
  // on by default since 2022; megatron/core/tensor_parallel/layers.py). Off: blocking after the
  // weight gradient.
  bool overlap_tp_backward = false;
  // The expert all-to-alls (dispatch and combine) on the communication stream, their consumers
  // not waiting: Megatron-Core's batch-level overlap (--overlap-moe-expert-parallel-comm, MoE
  // README, v0.14), where one micro-batch's forward and another's backward run as one step and
  // each one's all-to-alls hide behind the other's compute. Per pass, the pass ends when both
  // streams have; the pipeline's unpaired warm-up and cool-down passes are timed without it
  // (GptTraining::expert_paired_share).
  bool overlap_expert_comm = false;
  // The layers' linear GEMMs (QKV, projection, MLP: forward, data and weight gradients) in FP8
  // or FP4 as Transformer Engine runs them (Micikevicius et al. 2022; NVIDIA TE docs, "Using
  // FP8 with Transformer Engine"): each GEMM input quantized with its transpose (quant_recipe),
  // the output gradient likewise in backward, and the weights once per iteration (cached for
  // the micro-batches). Attention, norms, the embedding and the output layer stay in 16 bits.
  bool quantized_linear = false;
  QuantRecipe quant_recipe = QuantRecipe::kDelayed;
  // With quantized_linear: the experts' inputs quantized before the expert-parallel dispatch,
  // and their output gradients before the backward combine, so those all-to-alls carry FP8 rows
  // (DeepSeek-V3 technical report §3.3.2, "Low-Precision Communication": dispatch in FP8, both
  // combines in BF16; DeepEP's FP8 dispatch). Off: 16-bit rows, quantized at the experts.
  bool fp8_dispatch = false;
  // With quantized_linear (FP8 with per-tensor, MXFP8 or block scales) and sequence
  // parallelism: the column-parallel GEMMs' inputs (the norm outputs) and the row-parallel
  // GEMMs' output gradients quantized on the local rows before their all-gathers, which then
  // carry FP8 rows, and transposed after them for the other GEMM operand; the re-gathers too.
  // Transformer Engine (layernorm_linear.py: the fused norm's FP8 output gathered; linear.py
  // _grad_output_preprocess: "FP8 case with gather: unfused bgrad, cast, transpose for efficient
  // gather") and torchao's float8 tensor parallelism (Float8ColwiseParallel, PrepareFloat8-
  // ModuleInput: "the float8 cast happens before the all-gather"; tensor-wise scales only).
  // The reduce-scatters keep 16 bits. Off: 16-bit gathers, quantized after.
  bool fp8_tp_gather = false;
  // With quantized_linear: the backward (data- and weight-gradient) GEMMs with fast accumulation
  // too. Off (Transformer Engine's _2X_ACC_DGRAD/_2X_ACC_WGRAD, torchao's Float8LinearConfig
  // default): their FP32 accumulators are promoted periodically (Kernel::promoted_accumulation);
  // the forward GEMMs use fast accumulation in both.
  bool fp8_fast_backward_accumulation = false;
  // Which fused attention kernel runs (AttentionShape::kernel; the software profile's choice).
  FlashKernel attention_kernel = FlashKernel::kNative;
  // Context parallelism (flash attention only): each sequence's tokens split over `context`
  // ranks, every token-wise kernel on b·s/cp tokens; the attention kernel takes its s/cp
  // queries against all s keys and values, which arrive around the context group's ring in
  // cp - 1 steps beside the blockwise attention (forward: K and V; backward: K and V again
  // with their gradients dK and dV; Megatron-Core / Transformer Engine p2p context parallel).
  int context = 1;
  // Context parallelism by all-to-all instead (DeepSpeed-Ulysses, Jacobs et al. 2023): before
  // the attention an all-to-all over the context group regroups Q, K and V from s/cp tokens of
  // every local head into whole sequences of heads/cp heads (key/value heads split likewise,
  // or replicated when fewer than cp), the kernel runs on those, and an all-to-all returns the
  // output to the token split; backward, dO goes in the same way and dQ, dK, dV come back.
  bool context_all_to_all = false;
  // The loss as the frameworks compute it by default: the logits cast to fp32 and the
  // vocabulary-parallel cross-entropy in separate fp32 passes (Megatron-LM/Core
  // vocab_parallel_cross_entropy(output.float()), torchtitan's and nanotron's .float()):
  // forward cast (2 B read, 4 written), max (4), subtract (4 + 4), exp (4 + 4), sum (4),
  // normalise (4 + 4) = 38 B per logit; backward scale by the loss gradient (4 + 4) and cast
  // back (4 + 2) = 14 B. Off: one fused kernel each way in the activations' precision.
  bool fp32_cross_entropy = false;
  // Cross-entropy evaluations of the logits beside the loss, forward only, each micro-batch:
  // Composer's training metrics (LanguageCrossEntropy and LanguagePerplexity, each a
  // torch.nn.CrossEntropyLoss over the full logits in _eval_train_metrics after every
  // micro-batch, under autocast): the logits cast to fp32 (2 B read, 4 written) and
  // log_softmax (4 + 4) = 14 B per logit each.
  int metric_losses = 0;
  // Linear biases as Megatron-LM adds them: the QKV bias as its own element-wise kernel after
  // the GEMM, every bias gradient as its own column sum (SoftwareProfile::separate_bias);
  // false: in the GEMMs' epilogues (cuBLASLt, Transformer Engine).
  bool separate_bias = false;
  // Sequence parallelism's collectives each with a copy of the full tensor, after an all-gather
  // and before a reduce-scatter: PyTorch's functional collectives along a dimension other than
  // the first (torch/distributed/_functional_collectives.py: `torch.cat(torch.chunk(res,
  // group_size, dim=0), dim=gather_dim)` after the gather, `torch.cat(torch.chunk(self,
  // group_size, dim=scatter_dim))` before the scatter), as DTensor's Shard(1) sequence
  // parallelism runs them (SoftwareProfile::sp_layout_copy). Not with chunked tensor
  // parallelism: the fused collective matmuls write each chunk in place.
  bool sp_layout_copy = false;
  // Element-wise operators run unfused, as eager PyTorch does (the software profile's choice).
  EagerOps eager;
  // Bytes per element of the main gradient the weight-gradient GEMMs accumulate into
  // (GemmShape::accumulate): Megatron-LM/Core's gradient_accumulation_fusion
  // (fused_weight_gradient_mlp_cuda wgrad_gemm_accum_fp32/_fp16 into main_grad; Transformer
  // Engine's fuse_wgrad_accumulation), main_grad in the gradient-reduction type. 0: each writes
  // its output once in the GEMM's output type.
  std::int32_t wgrad_accumulation = 0;
  // Bytes per element of the main gradient that each micro-batch's gradients are added into by
  // their own kernels (WgradAccumulation): every parameter's when the GEMMs do not accumulate
  // (wgrad_accumulation 0), else only the embedding's. 0: no accumulation modelled.
  std::int32_t gradient_add = 0;
  // What `recompute=selective` recomputes: off, the attention core (Megatron-LM's, Korthikanti
  // et al. 2022; nothing with flash attention); on, PyTorch's op-level selective checkpointing
  // as torchtitan applies it (activation_checkpoint.py, selective_ac_option "op": the outputs
  // of mm, SDPA and reduce-scatter are saved "except every second mm", everything else is
  // recomputed): per layer the norms, rotary, activation and residual kernels and, of the
  // linears in call order wq wk wv wo w1 w3 w2, the second, fourth and sixth (the key
  // projection, the output projection and the up projection).
  bool selective_op = false;
  // Expert parallelism (GptSpec::experts > 0): E/expert experts on this rank; the tokens routed
  // to the others leave and return by all-to-all over the expert group.
  int expert = 1;
};

// What one device of a kernel-parallel group holds of the LSTM LM (DeepFlow paper §5;
// deepflow-reference.md §3.8). Every GEMM C[m×n] = A[m×k]·W[k×n] of the graph (cell and softmax,
// forward and backward) is distributed the same way:
//   kRowColumn (RC, inner product) on a kp1 × kp2 grid: A's rows m split kp1 ways, W's columns
//     n kp2 ways; each device holds a k × n/kp2 weight slice (replicated over kp1)
//   kColumnRow (CR, outer product) over kp1 devices: the inner dimension k split kp1 ways; each
//     device holds a k/kp1 × n weight slice; kp2 must be 1
// The graph then carries the group's communication (CommGroup::kTensor for kp1,
// kTensorColumns for kp2; a group of one device communicates nothing). first_layer, layers,
// embedding and softmax select one pipeline stage's part, as GptPartition does.
// The paper's kernel parallelism of a distributed GEMM C[m×n] = A[m×k]·B[k×n]: RC (row-column,
// inner product) on a kp1 × kp2 grid splits m and n; CR (column-row, outer product) splits k
// kp1 ways and reduce-scatters C (deepflow-reference.md §3.8).
enum class GemmSplit { kNone, kRowColumn, kColumnRow };
struct GemmPartition {
  GemmSplit split = GemmSplit::kNone;
  int kp1 = 1, kp2 = 1;
};
struct LstmPartition {
  GemmSplit split = GemmSplit::kNone;
  int kp1 = 1, kp2 = 1;   // RC: rows of m split kp1 ways, columns of n kp2 ways; CR: k kp1 ways
  int first_layer = 0;
  int layers = -1;        // -1: all from first_layer
  bool embedding = true;  // the embedding (first pipeline stage)
  bool softmax = true;    // the softmax / output layer (last pipeline stage)
};

using WorkloadSpec = std::variant<GemmSpec, LstmSpec, GptSpec>;
[[nodiscard]] WorkloadKind kind_of(const WorkloadSpec& spec);

// Computed from a spec and its graph.
struct WorkloadStats {
  std::int64_t parameters = 0;     // elements held (with LoRA the frozen ones and the adapters)
  std::int64_t micro_batches = 1;  // per iteration
  Flops forward_flops;             // one micro-batch
  Flops backward_flops;            // one micro-batch, data and weight gradients
  Flops update_flops;              // once per iteration
  Flops flops_per_iteration;       // micro_batches·(forward + backward) + update
  Flops gemm_flops_per_iteration;  // the 2·m·n·k part of it
  std::size_t kernels = 0;         // in the graph
};

struct Workload {
  std::string name;
  std::string file;  // where it was loaded from, empty when built in code
  WorkloadSpec spec;
  ComputeGraph graph;
  WorkloadStats stats;
};

// Graph builders; specs must be valid (positive sizes, heads dividing hidden), else PF_ASSERT.
// One device's share of the GEMM: the local product, then RC's all-gather of its (m/kp1 × n)
// row block over the kp2 group or CR's reduce-scatter of the m × n partial sums over kp1.
[[nodiscard]] ComputeGraph build_gemm_graph(const GemmSpec& spec, const GemmPartition& part = {});
[[nodiscard]] ComputeGraph build_lstm_graph(const LstmSpec& spec, const LstmPartition& part = {});
[[nodiscard]] ComputeGraph build_gpt_graph(const GptSpec& spec, const GptPartition& part = {});
[[nodiscard]] ComputeGraph build_graph(const WorkloadSpec& spec);
[[nodiscard]] WorkloadStats workload_stats(const WorkloadSpec& spec, const ComputeGraph& g);
[[nodiscard]] Workload make_workload(std::string name, const WorkloadSpec& spec);

// Per-parameter cost of one optimizer step with weights and gradients in `precision`.
// Below fp32 the step keeps fp32 master weights (mixed precision, Micikevicius et al. 2018).
struct UpdateCost {
  double flops = 0.0;          // per parameter
  double bytes_read = 0.0;     // per parameter
  double bytes_written = 0.0;  // per parameter
};
[[nodiscard]] UpdateCost update_cost(Optimizer o, DataType precision);
// An optimizer-update kernel over `elements` parameters.
[[nodiscard]] Kernel update_kernel(std::string name, Optimizer o, DataType precision,
                                   std::int64_t elements, int layer, std::vector<KernelId> deps);

}  // namespace pathfinder
