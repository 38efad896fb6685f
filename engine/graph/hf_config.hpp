// A Hugging Face transformers `config.json` as a GPT workload file (`pathfinder workload import`).
//
// The decoder-only families whose every layer the GPT builder (gpt_graph.cpp) expresses:
//   llama, mistral, qwen2, qwen3          dense: GQA (num_key_value_heads), SwiGLU (hidden_act
//                                         silu), RMSNorm, rotary, untied unless stated
//   mixtral                               every layer a mixture of num_local_experts experts of
//                                         intermediate_size, num_experts_per_tok per token
//   qwen2_moe, qwen3_moe                  num_experts of moe_intermediate_size, top
//                                         num_experts_per_tok; qwen2_moe's shared expert as
//                                         shared_expert_intermediate_size / moe_intermediate_size
//                                         always-on experts; mlp_only_layers [0, ..., k-1] as
//                                         k leading dense layers
//   deepseek_v2, deepseek_v3              multi-head latent attention (kv_lora_rank,
//                                         q_lora_rank, qk_nope/rope_head_dim, v_head_dim),
//                                         n_routed_experts + n_shared_experts of
//                                         moe_intermediate_size after first_k_dense_replace
//                                         dense layers
// A config the builder cannot express is refused with the key that says why (dense layers
// between sparse ones, a sliding window shorter than the sequence, another activation):
// a wrong workload would be a silent wrong number. What the file does not say (sequence, batch,
// training precision) comes from ImportChoices and is written as such in the output.
#pragma once

#include <cstdint>
#include <string>

namespace pathfinder {

struct ImportChoices {
  std::string name;  // empty: the config's _name_or_path, else its model_type
  std::int64_t sequence = 4096;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1024;
  std::string precision = "bf16";
};

// The workload YAML for `json_text` read from `file`, checked by the workload loader. Throws
// ConfigError at the offending key's line and column in `file`.
[[nodiscard]] std::string import_hf_config(const std::string& json_text, const std::string& file,
                                           const ImportChoices& choices);

}  // namespace pathfinder
