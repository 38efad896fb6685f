#include "engine/graph/hf_config.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "engine/config/node.hpp"
#include "engine/core/error.hpp"
#include "engine/graph/workload_loader.hpp"

namespace pathfinder {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 9> kFamilies{
    "llama",   "mistral",   "qwen2",     "qwen3",      "mixtral",
    "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3"};

// Line and column (1-based) of byte `offset` in `text`.
SourceLoc location(const std::string& file, const std::string& text, std::size_t offset,
                   const std::string& key) {
  offset = std::min(offset, text.size());
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {file, line, col, key};
}

// A value shown in a message: JSON text, cut at 40 characters.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& file) : text_(text), file_(file) {
    try {
      root_ = json::parse(text);
    } catch (const json::parse_error& e) {
      const std::string what = e.what();
      const auto colon = what.find("error: ");
      throw ConfigError(Diagnostic{location(file, text, e.byte > 0 ? e.byte - 1 : 0, ""),
                                   "expected a JSON config (" +
                                       (colon == std::string::npos ? what : what.substr(colon + 7)) +
                                       ")"});
    }
    if (!root_.is_object()) {
      throw ConfigError(Diagnostic{{file, 1, 1, ""},
                                   "expected a JSON object of model settings, got " + shown(root_)});
    }
  }

  [[nodiscard]] bool has(const char* key) const {
    return root_.contains(key) && !root_.at(key).is_null();
  }

  // The key's first `"key":` in the file (its own line, for a flat config.json); a key the file
  // lacks: the object's opening brace.
  [[nodiscard]] SourceLoc at(const std::string& key) const {
    const std::string quoted = "\"" + key + "\"";
    std::size_t pos = 0;
    while ((pos = text_.find(quoted, pos)) != std::string::npos) {
      std::size_t after = pos + quoted.size();
      while (after < text_.size() && (text_[after] == ' ' || text_[after] == '\t' ||
                                      text_[after] == '\n' || text_[after] == '\r')) {
        ++after;
      }
      if (after < text_.size() && text_[after] == ':') return location(file_, text_, pos, key);
      pos = after;
    }
    return location(file_, text_, text_.find('{'), key);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw ConfigError(Diagnostic{at(key), message});
  }

  [[nodiscard]] std::int64_t whole(const char* key) const {
    if (!has(key)) fail(key, "expected a whole number >= 1, got nothing (the key is required)");
    const json& v = root_.at(key);
    if (!(v.is_number_integer() || v.is_number_unsigned()) || v.get<std::int64_t>() < 1) {
      fail(key, "expected a whole number >= 1, got " + shown(v));
    }
    return v.get<std::int64_t>();
  }
  [[nodiscard]] std::int64_t whole_or(const char* key, std::int64_t fallback) const {
    return has(key) ? whole(key) : fallback;
  }
  // A count that may be 0.
  [[nodiscard]] std::int64_t count_or(const char* key, std::int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!(v.is_number_integer() || v.is_number_unsigned()) || v.get<std::int64_t>() < 0) {
      fail(key, "expected a whole number >= 0, got " + shown(v));
    }
    return v.get<std::int64_t>();
  }
  [[nodiscard]] bool flag_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + shown(v));
    return v.get<bool>();
  }
  [[nodiscard]] std::string text_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = root_.at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + shown(v));
    return v.get<std::string>();
  }
  [[nodiscard]] const json& value(const char* key) const { return root_.at(key); }

 private:
  const std::string& text_;
  const std::string& file_;
  json root_;
};

// A YAML double-quoted scalar (JSON string syntax is a subset of it).
std::string yaml_string(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string import_hf_config(const std::string& json_text, const std::string& file,
                             const ImportChoices& choices) {
  const Reader r(json_text, file);
  const std::string family = r.text_or("model_type", "");
  if (std::find(kFamilies.begin(), kFamilies.end(), family) == kFamilies.end()) {
    r.fail("model_type",
           "expected one of llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, "
           "deepseek_v2, deepseek_v3, got " + yaml_string(family));
  }
  const bool deepseek = family.rfind("deepseek", 0) == 0;
  const std::int64_t hidden = r.whole("hidden_size");
  const std::int64_t layers = r.whole("num_hidden_layers");
  const std::int64_t heads = r.whole("num_attention_heads");
  const std::int64_t kv = deepseek ? heads : r.whole_or("num_key_value_heads", heads);
  const std::int64_t ffn = r.whole("intermediate_size");
  const std::int64_t vocab = r.whole("vocab_size");
  // DeepSeek's latent attention: query/key heads of qk_nope_head_dim + qk_rope_head_dim.
  std::int64_t kv_lora = 0, q_lora = 0, rope = 0, v_head = 0, mla_head = 0;
  if (deepseek) {
    kv_lora = r.whole("kv_lora_rank");
    q_lora = r.whole_or("q_lora_rank", 0);  // null in DeepSeek-V2-Lite: queries from h
    rope = r.whole("qk_rope_head_dim");
    mla_head = r.whole("qk_nope_head_dim") + rope;
    v_head = r.whole("v_head_dim");
  }
  const std::int64_t head_dim =
      deepseek ? mla_head : r.whole_or("head_dim", hidden % heads == 0 ? hidden / heads : 0);
  if (head_dim == 0) {
    r.fail("num_attention_heads", "expected a divisor of hidden_size " + std::to_string(hidden) +
                                      " (or a head_dim key), got " + std::to_string(heads));
  }
  const std::string act = r.text_or("hidden_act", "silu");
  if (act != "silu" && act != "swish") {
    r.fail("hidden_act", "expected silu (the gated SwiGLU MLP of " + family + "), got " +
                             yaml_string(act));
  }
  // Transformers' config classes of these families default to untied embeddings.
  const bool tied = r.flag_or("tie_word_embeddings", false);
  // A sliding window attends to fewer keys than the causal mask the builder times.
  if (r.flag_or("use_sliding_window", family == "mistral" || family == "mixtral") &&
      r.has("sliding_window")) {
    const std::int64_t window = r.whole("sliding_window");
    if (window < choices.sequence) {
      r.fail("sliding_window", "sliding-window attention is not modelled: expected a window of "
                               "at least the sequence " + std::to_string(choices.sequence) +
                                   ", got " + std::to_string(window));
    }
  }
  const bool qkv_bias = family == "qwen2" || family == "qwen2_moe" || r.flag_or("attention_bias", false);
  if (r.flag_or("mlp_bias", false)) {
    r.fail("mlp_bias", "expected false: MLP biases without attention biases are not modelled");
  }

  std::int64_t experts = 0, top_k = 0, expert_ffn = 0, shared = 0, dense = 0, groups = 0,
               routed_groups = 0;
  if (deepseek) {
    if (r.has("n_routed_experts")) {
      experts = r.whole("n_routed_experts");
      top_k = r.whole("num_experts_per_tok");
      expert_ffn = r.whole("moe_intermediate_size");
      shared = r.count_or("n_shared_experts", 0);
      dense = r.count_or("first_k_dense_replace", 0);
      // Group-limited (DeepSeek-V2/V3 node-limited) routing: topk_group of n_group groups.
      if (r.has("n_group") && r.has("topk_group") && r.whole("n_group") > 1) {
        groups = r.whole("n_group");
        routed_groups = r.whole("topk_group");
      }
      if (dense >= layers) {
        r.fail("first_k_dense_replace", "expected fewer than num_hidden_layers (" +
                                            std::to_string(layers) + "), got " +
                                            std::to_string(dense));
      }
      if (r.whole_or("moe_layer_freq", 1) != 1) {
        r.fail("moe_layer_freq", "expected 1: dense layers between sparse ones are not "
                                 "modelled, got " + shown(r.value("moe_layer_freq")));
      }
    }
  } else if (family == "mixtral") {
    experts = r.whole("num_local_experts");
    top_k = r.whole("num_experts_per_tok");
    expert_ffn = ffn;
  } else if (family == "qwen2_moe" || family == "qwen3_moe") {
    experts = r.whole("num_experts");
    top_k = r.whole("num_experts_per_tok");
    expert_ffn = r.whole("moe_intermediate_size");
    if (r.whole_or("decoder_sparse_step", 1) != 1) {
      r.fail("decoder_sparse_step", "expected 1: dense layers between sparse ones are not "
                                    "modelled, got " + shown(r.value("decoder_sparse_step")));
    }
    // Dense layers first (0, 1, ..., k-1) are leading dense layers; elsewhere not modelled.
    if (r.has("mlp_only_layers")) {
      const json& only = r.value("mlp_only_layers");
      bool prefix = only.is_array() && static_cast<std::int64_t>(only.size()) < layers;
      for (std::size_t i = 0; prefix && i < only.size(); ++i) {
        prefix = only[i].is_number_integer() && only[i].get<std::int64_t>() == static_cast<std::int64_t>(i);
      }
      if (!prefix) {
        r.fail("mlp_only_layers", "expected the first layers in order ([0, 1, ...]): dense "
                                  "layers among sparse ones are not modelled, got " + shown(only));
      }
      dense = static_cast<std::int64_t>(only.size());
    }
    if (family == "qwen2_moe" && r.has("shared_expert_intermediate_size")) {
      const std::int64_t width = r.whole("shared_expert_intermediate_size");
      if (width % expert_ffn != 0) {
        r.fail("shared_expert_intermediate_size",
               "expected a multiple of moe_intermediate_size " + std::to_string(expert_ffn) +
                   " (shared experts of the routed experts' width), got " + std::to_string(width));
      }
      shared = width / expert_ffn;
    }
  }

  const std::string name = !choices.name.empty() ? choices.name
                           : r.has("_name_or_path") ? r.text_or("_name_or_path", family)
                                                    : family;
  std::string y;
  y += "# Imported from the Hugging Face config " + yaml_string(file) + " (model_type " + family +
       ") by pathfinder workload import.\n";
  y += "# From the config: sizes, attention heads, experts, tying. Not in it, chosen at import:\n";
  y += "# sequence, micro_batch, global_batch and the training precision (the command's options).\n";
  if (qkv_bias) y += "# Not modelled: the q/k/v projection biases (3 vectors a layer).\n";
  if (family == "qwen3" || family == "qwen3_moe") {
    y += "# Not modelled: the per-head q/k RMSNorm (2 x head_dim weights a layer).\n";
  }
  if (deepseek && experts > 0) {
    y += "# The router's scores are timed as a softmax/top-k of the same size.\n";
  }
  if (family == "qwen2_moe" && shared > 0) {
    y += "# The shared expert's sigmoid gate (one h-vector a layer) is not modelled.\n";
  }
  y += "name: " + yaml_string(name) + "\n";
  y += "kind: gpt\n";
  y += "layers: " + std::to_string(layers) + "\n";
  y += "hidden: " + std::to_string(hidden) + "\n";
  y += "heads: " + std::to_string(heads) + "\n";
  if (kv != heads) y += "kv_heads: " + std::to_string(kv) + "\n";
  if (head_dim * heads != hidden || deepseek) y += "head_dim: " + std::to_string(head_dim) + "\n";
  if (deepseek) {
    y += "kv_lora_rank: " + std::to_string(kv_lora) + "\n";
    if (q_lora > 0) y += "q_lora_rank: " + std::to_string(q_lora) + "\n";
    y += "rope_head_dim: " + std::to_string(rope) + "\n";
    y += "v_head_dim: " + std::to_string(v_head) + "\n";
  }
  y += "ffn: " + std::to_string(ffn) + "\n";
  if (experts > 0) {
    y += "experts: " + std::to_string(experts) + "\n";
    y += "top_k: " + std::to_string(top_k) + "\n";
    y += "expert_ffn: " + std::to_string(expert_ffn) + "\n";
    if (shared > 0) y += "shared_experts: " + std::to_string(shared) + "\n";
    if (dense > 0) y += "dense_layers: " + std::to_string(dense) + "\n";
    if (groups > 0) {
      y += "expert_groups: " + std::to_string(groups) + "\n";
      y += "routed_groups: " + std::to_string(routed_groups) + "\n";
    }
  }
  // DeepSeek-V3's multi-token-prediction modules (num_nextn_predict_layers; report §2.2), timed
  // on the last stage as the shipped deepseek_v3.yaml does (GptSpec::mtp_depth).
  const std::int64_t mtp = deepseek ? r.count_or("num_nextn_predict_layers", 0) : 0;
  if (mtp > 0) y += "mtp_depth: " + std::to_string(mtp) + "  # num_nextn_predict_layers\n";
  y += "sequence: " + std::to_string(choices.sequence) + "\n";
  y += "vocabulary: " + std::to_string(vocab) + "\n";
  y += "micro_batch: " + std::to_string(choices.micro_batch) + "\n";
  y += "global_batch: " + std::to_string(choices.global_batch) + "\n";
  y += "precision: " + yaml_string(choices.precision) + "\n";
  y += "optimizer: adam\n";
  y += "dropout: false\n";
  y += "mlp: swiglu\n";
  y += "norm: rmsnorm\n";
  y += "position: rotary\n";
  y += "attention: flash\n";
  y += "causal: true\n";
  y += std::string("tied_embeddings: ") + (tied ? "true" : "false") + "\n";
  y += "bias: false\n";

  // The loader's own checks (bounds, divisibility) on the result, reported at the config file.
  std::int64_t parameters = 0;
  try {
    const WorkloadFile w = read_workload_file(ConfigNode::load_string(y, file));
    if (const auto* g = std::get_if<GptSpec>(&w.spec)) parameters = gpt_parameters(*g);
  } catch (const ConfigError& e) {
    std::string why = e.diagnostics().empty() ? std::string(e.what()) : e.diagnostics().front().message;
    const std::string key =
        e.diagnostics().empty() ? std::string() : e.diagnostics().front().loc.key_path;
    // At the config key the workload key came from, or at the command-line option.
    const std::array<std::array<const char*, 2>, 17> from{{
        {"layers", "num_hidden_layers"}, {"hidden", "hidden_size"},
        {"heads", "num_attention_heads"}, {"kv_heads", "num_key_value_heads"},
        {"head_dim", "head_dim"}, {"ffn", "intermediate_size"}, {"vocabulary", "vocab_size"},
        {"experts", family == "mixtral" ? "num_local_experts"
                    : deepseek          ? "n_routed_experts"
                                        : "num_experts"},
        {"top_k", "num_experts_per_tok"}, {"expert_ffn", "moe_intermediate_size"},
        {"dense_layers", deepseek ? "first_k_dense_replace" : "mlp_only_layers"},
        {"expert_groups", "n_group"}, {"routed_groups", "topk_group"},
        {"mtp_depth", "num_nextn_predict_layers"},
        {"sequence", "--sequence"}, {"micro_batch", "--micro-batch"},
        {"global_batch", "--global-batch"}}};
    SourceLoc at = r.at("model_type");
    for (const auto& [ours, theirs] : from) {
      if (key != ours) continue;
      if (theirs[0] == '-') {
        at = SourceLoc{"command line", 0, 0, theirs};
      } else {
        at = r.at(theirs);
      }
    }
    throw ConfigError(Diagnostic{at, "the imported workload is refused: " + why});
  }
  // A figure to check against the model card.
  return "# Parameters (pathfinder's count): " + std::to_string(parameters) + "\n" + y;
}

}  // namespace pathfinder
