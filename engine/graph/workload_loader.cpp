#include "engine/graph/workload_loader.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/config/enum_read.hpp"
#include "engine/config/node.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

// Bounds on each count, far above any published model (Megatron-LM's 1T GPT: 128 layers,
// hidden 25600, sequence 2048, vocabulary 51200; GPT-3's batch 1536; the DeepFlow LM's
// vocabulary 800K, batch 16K). They keep every product the engine forms in 64 bits (a layer's
// parameters, 12·hidden² per layer times the layers, stay below 2^61), every per-layer and
// per-step index in an int, and the graphs that unroll layers and steps in memory.
constexpr std::int64_t kMaxLayers = 100'000;
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;     // hidden, ffn, heads: 1048576
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;  // 16777216 tokens or steps
constexpr std::int64_t kMaxVocabulary = std::int64_t{1} << 24;
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 24;     // sequences per (micro-)batch
constexpr std::int64_t kMaxGemmDim = std::int64_t{1} << 24;   // m, n, k
// The LSTM graph holds a kernel per layer per step (and one per step for the softmax).
constexpr std::int64_t kMaxLstmCellSteps = std::int64_t{1} << 20;

std::string bound_text(std::int64_t max) { return "[1, " + std::to_string(max) + "]"; }

// A count in [1, max].
std::int64_t size(const ConfigNode& n, std::string_view key, std::int64_t max) {
  const std::int64_t v = n.require_positive<std::int64_t>(key);
  if (v > max) {
    throw n.error_at(key, "expected a whole number in " + bound_text(max) + ", got " +
                              n.quoted(key));
  }
  return v;
}
std::optional<std::int64_t> optional_size(const ConfigNode& n, std::string_view key,
                                          std::int64_t max) {
  if (!n.has(key)) {
    (void)n.optional_positive<std::int64_t>(key);
    return std::nullopt;
  }
  return size(n, key, max);
}

// `key` must be a multiple of `divisor_key`'s value.
void check_multiple(const ConfigNode& n, std::string_view key, std::int64_t value,
                    std::string_view divisor_key, std::int64_t divisor,
                    std::vector<Diagnostic>& out) {
  if (value % divisor == 0) return;
  out.push_back(Diagnostic{n.loc_of(key), "expected a multiple of " + std::string(divisor_key) +
                                              " (" + std::to_string(divisor) + "), got " +
                                              n.quoted(key)});
}

GemmSpec read_gemm(const ConfigNode& n) {
  GemmSpec s;
  s.m = size(n, "m", kMaxGemmDim);
  s.n = size(n, "n", kMaxGemmDim);
  s.k = size(n, "k", kMaxGemmDim);
  s.precision = read_enum(n, "precision", parse_data_type, valid_data_types, DataType::kFp16);
  return s;
}

// A trained network's precision: its activations' and weights' type. FP4 is an operand format
// only (a GEMM workload's, or the linear layers' by the software profile).
DataType activation_precision(const ConfigNode& n) {
  const DataType t = read_enum(n, "precision", parse_data_type, valid_data_types, DataType::kFp16);
  if (t == DataType::kFp4) {
    throw n.error_at("precision", "fp4 is an operand format: a network's activations and "
                                  "weights are fp32, fp16, bf16 or fp8 (its linear layers' GEMMs "
                                  "in FP4: the software profile's precision.linear_layers)");
  }
  return t;
}

LstmSpec read_lstm(const ConfigNode& n) {
  LstmSpec s;
  s.batch = size(n, "batch", kMaxBatch);
  s.sequence = size(n, "sequence", kMaxSequence);
  s.hidden = size(n, "hidden", kMaxWidth);
  s.vocabulary = size(n, "vocabulary", kMaxVocabulary);
  s.layers = size(n, "layers", kMaxLayers);
  if (s.layers * s.sequence > kMaxLstmCellSteps) {
    throw n.error_at("layers", "expected layers x sequence <= " +
                                   std::to_string(kMaxLstmCellSteps) +
                                   " (the graph unrolls every layer at every step), got " +
                                   std::to_string(s.layers) + " x " + std::to_string(s.sequence));
  }
  s.precision = activation_precision(n);
  s.optimizer = read_enum(n, "optimizer", parse_optimizer, valid_optimizers, Optimizer::kSgd);
  s.batching = read_enum(n, "batching", parse_lstm_batching, valid_lstm_batchings,
                         LstmBatching::kPerStep);
  return s;
}

// lora_rank and lora_targets (GptSpec): a comma-separated list of qkv, proj, fc1, fc2, or all
// (the default).
void read_lora(const ConfigNode& n, GptSpec& s) {
  if (!n.has("lora_rank")) {
    if (n.has("lora_targets")) throw n.error_at("lora_targets", "applies to LoRA; set lora_rank");
    return;
  }
  s.lora_rank = size(n, "lora_rank", 1 << 16);
  const std::string text = n.get_or<std::string>("lora_targets", "all");
  static const std::vector<std::string> names = {"qkv", "proj", "fc1", "fc2", "all"};
  static const unsigned bits[] = {kLoraQkv, kLoraProj, kLoraFc1, kLoraFc2, kLoraAll};
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      throw n.error_at("lora_targets", "expected a comma-separated list of " +
                                           join_alternatives(names) + ", got " +
                                           n.quoted("lora_targets") + did_you_mean(name, names));
    }
    s.lora_targets |= bits[it - names.begin()];
    start = comma + 1;
  }
  if (s.moe() || s.mla()) {
    throw n.error_at("lora_rank", "LoRA is modelled for dense layers with multi-, grouped- or "
                                  "single-query attention (no experts, no latent attention)");
  }
}

GptSpec read_gpt(const ConfigNode& n) {
  GptSpec s;
  s.layers = size(n, "layers", kMaxLayers);
  s.hidden = size(n, "hidden", kMaxWidth);
  s.heads = size(n, "heads", kMaxWidth);
  s.ffn = optional_size(n, "ffn", kMaxWidth).value_or(4 * s.hidden);
  s.sequence = size(n, "sequence", kMaxSequence);
  s.vocabulary = size(n, "vocabulary", kMaxVocabulary);
  s.micro_batch = size(n, "micro_batch", kMaxBatch);
  s.global_batch = optional_size(n, "global_batch", kMaxBatch).value_or(s.micro_batch);
  s.precision = activation_precision(n);
  s.optimizer = read_enum(n, "optimizer", parse_optimizer, valid_optimizers, Optimizer::kAdam);
  s.dropout = n.get_or<bool>("dropout", true);
  s.kv_heads = optional_size(n, "kv_heads", kMaxWidth).value_or(s.heads);
  s.head_size = optional_size(n, "head_dim", 1 << 14).value_or(0);
  s.mlp = read_enum(n, "mlp", parse_mlp_kind, valid_mlp_kinds, MlpKind::kGelu);
  s.norm = read_enum(n, "norm", parse_norm_kind, valid_norm_kinds, NormKind::kLayerNorm);
  s.position =
      read_enum(n, "position", parse_position_kind, valid_position_kinds, PositionKind::kLearned);
  s.attention = read_enum(n, "attention", parse_attention_kind, valid_attention_kinds,
                          AttentionKind::kUnfused);
  s.causal = n.get_or<bool>("causal", true);
  s.tied_embeddings = n.get_or<bool>("tied_embeddings", true);
  s.bias = n.get_or<bool>("bias", true);
  if (n.has("kv_lora_rank")) {  // multi-head latent attention (GptSpec)
    s.kv_lora_rank = size(n, "kv_lora_rank", kMaxWidth);
    s.q_lora_rank = optional_size(n, "q_lora_rank", kMaxWidth).value_or(0);
    s.rope_head_dim = size(n, "rope_head_dim", 1 << 14);
    s.v_head_size = optional_size(n, "v_head_dim", 1 << 14).value_or(0);
    if (s.head_size == 0) {
      throw n.error_at("kv_lora_rank", "needs head_dim, each query and key head's width (its "
                                       "rotary and non-rotary parts together)");
    }
    if (s.rope_head_dim >= s.head_size) {
      throw n.error_at("rope_head_dim", "expected less than head_dim (" +
                                            std::to_string(s.head_size) + "), got " +
                                            n.quoted("rope_head_dim"));
    }
    if (n.has("kv_heads") && s.kv_heads != s.heads) {
      throw n.error_at("kv_heads", "expected heads (" + std::to_string(s.heads) +
                                       "): latent attention up-projects keys and values for "
                                       "every head, got " + n.quoted("kv_heads"));
    }
    if (s.attention != AttentionKind::kFlash) {
      throw n.error_at("kv_lora_rank", "latent attention is timed with attention: flash");
    }
    if (s.bias) {
      throw n.error_at("kv_lora_rank", "latent attention is modelled without biases; set bias: false");
    }
  } else {
    for (const char* key : {"q_lora_rank", "rope_head_dim", "v_head_dim"}) {
      if (n.has(key)) {
        throw n.error_at(key, "applies to multi-head latent attention; set kv_lora_rank");
      }
    }
  }
  if (n.has("experts")) {
    s.experts = size(n, "experts", 4096);  // Switch Transformer's 2,048 the largest published
    s.top_k = optional_size(n, "top_k", 1 << 16).value_or(1);
    s.expert_ffn = optional_size(n, "expert_ffn", kMaxWidth).value_or(0);
    s.shared_experts = n.get_non_negative_or<std::int64_t>("shared_experts", 0);
    s.expert_imbalance = n.get_or<double>("expert_imbalance", 1.0);
    s.dense_layers = n.get_non_negative_or<std::int64_t>("dense_layers", 0);
    if (!(s.expert_imbalance >= 1.0 && s.expert_imbalance <= 64.0)) {
      throw n.error_at("expert_imbalance",
                       "expected a factor in [1, 64] (the busiest expert rank's tokens over the "
                       "mean), got " + n.quoted("expert_imbalance"));
    }
    if (n.has("expert_groups") || n.has("routed_groups")) {
      s.expert_groups = size(n, "expert_groups", s.experts);
      s.routed_groups = size(n, "routed_groups", s.expert_groups);
      if (s.experts % s.expert_groups != 0) {
        throw n.error_at("expert_groups", "expected a divisor of experts (" +
                                              std::to_string(s.experts) + "), got " +
                                              n.quoted("expert_groups"));
      }
    }
    if (s.shared_experts > 64) {
      throw n.error_at("shared_experts", "expected at most 64 shared experts, got " +
                                             n.quoted("shared_experts"));
    }
  } else {
    for (const char* key :
         {"top_k", "expert_ffn", "shared_experts", "expert_imbalance", "dense_layers",
          "expert_groups", "routed_groups"}) {
      if (n.has(key)) throw n.error_at(key, "applies to a mixture of experts; set experts");
    }
  }
  if (n.has("mtp_depth")) {  // multi-token prediction modules (GptSpec::mtp_depth)
    s.mtp_depth = n.get_non_negative_or<std::int64_t>("mtp_depth", 0);
    if (s.mtp_depth > 16) {
      throw n.error_at("mtp_depth", "expected at most 16 multi-token-prediction modules, got " +
                                        n.quoted("mtp_depth"));
    }
  }
  if (n.has("document")) {  // packed sequences (GptSpec::document)
    s.document = size(n, "document", kMaxSequence);
    if (s.document > s.sequence) {
      throw n.error_at("document", "expected at most sequence (" + std::to_string(s.sequence) +
                                       "), got " + n.quoted("document"));
    }
    if (s.attention != AttentionKind::kFlash) {
      throw n.error_at("document", "packed documents are timed with attention: flash (the "
                                   "variable-length kernel)");
    }
  }
  read_lora(n, s);
  return s;
}

}  // namespace

WorkloadFile read_workload_file(const ConfigNode& root) {
  WorkloadFile w;
  w.file = root.file();
  w.name = root.require<std::string>("name");
  (void)root.optional<std::string>("description");
  const std::string kind_text = root.require<std::string>("kind");
  const std::optional<WorkloadKind> kind = parse_workload_kind(kind_text);
  if (!kind) {
    throw root.error_at("kind", "expected one of " + join_alternatives(valid_workload_kinds()) +
                                    ", got \"" + kind_text + "\"" +
                                    did_you_mean(kind_text, valid_workload_kinds()));
  }
  switch (*kind) {
    case WorkloadKind::kGemm: w.spec = read_gemm(root); break;
    case WorkloadKind::kLstm: w.spec = read_lstm(root); break;
    case WorkloadKind::kGpt: w.spec = read_gpt(root); break;
  }
  root.finish();
  // Semantic pass: every problem at once.
  std::vector<Diagnostic> problems;
  if (const auto* g = std::get_if<GptSpec>(&w.spec)) {
    if (g->head_size == 0) check_multiple(root, "hidden", g->hidden, "heads", g->heads, problems);
    if (root.has("kv_heads") && g->heads % g->kv_heads != 0) {
      problems.push_back(Diagnostic{root.loc_of("kv_heads"),
                                    "expected a divisor of heads (" + std::to_string(g->heads) +
                                        "), got " + root.quoted("kv_heads")});
    }
    if (root.has("global_batch")) {
      check_multiple(root, "global_batch", g->global_batch, "micro_batch", g->micro_batch,
                     problems);
    }
    if (g->moe() && g->dense_layers >= g->layers) {
      problems.push_back(Diagnostic{root.loc_of("dense_layers"),
                                    "expected fewer than layers (" + std::to_string(g->layers) +
                                        ": at least one sparse layer), got " +
                                        root.quoted("dense_layers")});
    }
    if (g->moe() && g->top_k > g->experts) {
      problems.push_back(Diagnostic{root.loc_of("top_k"),
                                    "expected at most experts (" + std::to_string(g->experts) +
                                        "), got " + root.quoted("top_k")});
    }
    // Every count must stay exact in 64 bits: layers x experts x 3 x hidden x expert_ffn.
    if (g->moe()) {
      const double experts_total = static_cast<double>(g->layers) * static_cast<double>(g->experts) *
                                   3.0 * static_cast<double>(g->hidden) *
                                   static_cast<double>(g->expert_width());
      if (experts_total > 1e17) {
        problems.push_back(Diagnostic{root.loc_of("experts"),
                                      "expected at most 1e17 expert parameters (layers x experts "
                                      "x 3 x hidden x expert_ffn), got " +
                                          fmt::format("{:.3g}", experts_total)});
      }
    }
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return w;
}

WorkloadFile load_workload_file(const std::string& path,
                                const std::vector<ConfigOverride>& overrides) {
  const ConfigNode root = ConfigNode::load_file(path);
  return read_workload_file(overrides.empty() ? root : root.with_overrides(overrides));
}

Workload load_workload(const std::string& path, const std::vector<ConfigOverride>& overrides) {
  WorkloadFile f = load_workload_file(path, overrides);
  Workload w = make_workload(std::move(f.name), f.spec);
  w.file = std::move(f.file);
  return w;
}

}  // namespace pathfinder
