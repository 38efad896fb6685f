// Tests for engine/graph/hf_config.hpp: published config.json files (tests/data/hf_configs/)
// import to the same models as the hand-written workload files, whose parameter counts match
// the model cards; each refused config names its key at its line.
#include "engine/graph/hf_config.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "engine/config/node.hpp"
#include "engine/core/file_io.hpp"
#include "engine/graph/workload_loader.hpp"
#include "tests/test_paths.hpp"
#include "tests/test_support.hpp"

using namespace pathfinder;
using pathfinder::test::data_path;
using pathfinder::test::error_of;
using pathfinder::test::source_path;

namespace {

std::string config(const std::string& name) { return data_path("hf_configs/" + name + ".json"); }

GptSpec imported(const std::string& name, ImportChoices c = {}) {
  const std::string path = config(name);
  const std::string yaml = import_hf_config(*read_text_file(path), path, c);
  return std::get<GptSpec>(read_workload_file(ConfigNode::load_string(yaml, "imported")).spec);
}
GptSpec shipped(const std::string& name) {
  return std::get<GptSpec>(
      load_workload_file(source_path("studies/workloads/" + name + ".yaml")).spec);
}
// Every size the builder reads (the batch settings are the import's choices).
void same_model(const GptSpec& a, const GptSpec& b) {
  CHECK(a.layers == b.layers);
  CHECK(a.hidden == b.hidden);
  CHECK(a.heads == b.heads);
  CHECK(a.kv_heads == b.kv_heads);
  CHECK(a.head_dim() == b.head_dim());
  CHECK(a.ffn == b.ffn);
  CHECK(a.vocabulary == b.vocabulary);
  CHECK(a.experts == b.experts);
  CHECK(a.top_k == b.top_k);
  CHECK(a.expert_width() == b.expert_width());
  CHECK(a.shared_experts == b.shared_experts);
  CHECK(a.dense_layers == b.dense_layers);
  CHECK(a.expert_groups == b.expert_groups);
  CHECK(a.routed_groups == b.routed_groups);
  CHECK(a.kv_lora_rank == b.kv_lora_rank);
  CHECK(a.q_lora_rank == b.q_lora_rank);
  CHECK(a.rope_head_dim == b.rope_head_dim);
  CHECK(a.value_dim() == b.value_dim());
  CHECK(a.tied_embeddings == b.tied_embeddings);
  CHECK(a.mlp == b.mlp);
  CHECK(a.norm == b.norm);
  CHECK(a.position == b.position);
  CHECK(a.bias == b.bias);
  CHECK(a.mtp_depth == b.mtp_depth);
  CHECK(gpt_parameters(a) == gpt_parameters(b));
}
std::string import_error(const std::string& text, ImportChoices c = {}) {
  return error_of([&] { (void)import_hf_config(text, "config.json", c); });
}

}  // namespace

TEST_CASE("Published configs import to the shipped workloads", "[graph]") {
  // Model cards: Llama 3 8B 8.03B, Mixtral 8x7B 46.7B (paper: 47B), Qwen3-30B-A3B 30.5B.
  ImportChoices eight_k;
  eight_k.sequence = 8192;
  const GptSpec llama = imported("llama3_8b", eight_k);
  same_model(llama, shipped("llama3_8b"));
  CHECK(gpt_parameters(llama) == 8030261248);
  CHECK(llama.sequence == 8192);
  CHECK(llama.global_batch == 1024);
  const GptSpec mixtral = imported("mixtral_8x7b");
  same_model(mixtral, shipped("mixtral_8x7b"));
  CHECK(gpt_parameters(mixtral) == 46702792704);
  const GptSpec qwen = imported("qwen3_30b_a3b");
  same_model(qwen, shipped("qwen3_30b_a3b"));
  CHECK(gpt_parameters(qwen) == 30532110336);
  // DeepSeek-V3: latent attention, 3 leading dense layers, 256 + 1 experts (671B).
  const GptSpec deepseek = imported("deepseek_v3");
  same_model(deepseek, shipped("deepseek_v3"));
  CHECK(deepseek.kv_lora_rank == 512);
  CHECK(deepseek.q_lora_rank == 1536);
  CHECK(deepseek.rope_head_dim == 64);
  CHECK(deepseek.value_dim() == 128);
  CHECK(deepseek.dense_layers == 3);
  CHECK(gpt_parameters(deepseek) == 671026404352);
}

TEST_CASE("The imported file names its source, its choices and its parameter count", "[graph]") {
  const std::string path = config("llama3_8b");
  ImportChoices c;
  c.name = "llama \"three\"";  // quoted in the YAML
  c.global_batch = 512;
  const std::string y = import_hf_config(*read_text_file(path), path, c);
  CHECK(y.rfind("# Parameters (pathfinder's count): 8030261248\n", 0) == 0);
  CHECK(y.find("name: \"llama \\\"three\\\"\"\n") != std::string::npos);
  CHECK(y.find("global_batch: 512\n") != std::string::npos);
  CHECK(y.find("kv_heads: 8\n") != std::string::npos);
  CHECK(y.find("head_dim") == std::string::npos);  // 4096 / 32 = 128, the default
  CHECK(std::get<GptSpec>(read_workload_file(ConfigNode::load_string(y, "x")).spec).global_batch ==
        512);
  // DeepSeek-V3's multi-token-prediction layers (num_nextn_predict_layers, 1 in its config) are
  // the workload's mtp_depth, as in the shipped file (compared above); any depth carries over.
  std::string deepseek = *read_text_file(config("deepseek_v3"));
  const auto at = deepseek.find("\"num_nextn_predict_layers\": 1");
  REQUIRE(at != std::string::npos);
  deepseek.replace(at, 29, "\"num_nextn_predict_layers\": 2");
  const std::string d = import_hf_config(deepseek, "d.json", {});
  CHECK(d.find("mtp_depth: 2  # num_nextn_predict_layers\n") != std::string::npos);
  CHECK(std::get<GptSpec>(read_workload_file(ConfigNode::load_string(d, "d")).spec).mtp_depth ==
        2);
  deepseek.replace(at, 29, "\"num_nextn_predict_layers\": 17");
  CHECK(import_error(deepseek) ==
        "config.json:17:3: error: num_nextn_predict_layers: the imported workload is refused: "
        "expected at most 16 multi-token-prediction modules, got \"17\"");
}

TEST_CASE("Configs the builder cannot express are refused at their key", "[graph]") {
  // Dense layers between sparse ones (Qwen's mlp_only_layers not a prefix); a prefix is fine.
  const std::string qwen =
      "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 256, \"num_hidden_layers\": 4, "
      "\"num_attention_heads\": 4, \"intermediate_size\": 512, \"vocab_size\": 1024, "
      "\"num_experts\": 8, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 128, "
      "\"mlp_only_layers\": ";
  CHECK(import_error(qwen + "[1, 3]}") ==
        "config.json:1:219: error: mlp_only_layers: expected the first layers in order ([0, 1, "
        "...]): dense layers among sparse ones are not modelled, got [1,3]");
  CHECK(std::get<GptSpec>(read_workload_file(ConfigNode::load_string(
                              import_hf_config(qwen + "[0, 1]}", "q.json", {}), "q"))
                              .spec)
            .dense_layers == 2);
  CHECK(import_error("{\"model_type\": \"gpt2\", \"n_embd\": 768}") ==
        "config.json:1:2: error: model_type: expected one of llama, mistral, qwen2, qwen3, "
        "mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, got \"gpt2\"");
  const std::string llama =
      "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,\n  \"num_hidden_layers\": 32,\n"
      "  \"num_attention_heads\": 32,\n  \"intermediate_size\": 14336,\n  \"vocab_size\": ";
  CHECK(import_error(llama + "\"big\"\n}") ==
        "config.json:7:3: error: vocab_size: expected a whole number >= 1, got \"big\"");
  CHECK(import_error(llama + "-1\n}") ==
        "config.json:7:3: error: vocab_size: expected a whole number >= 1, got -1");
  CHECK(import_error(llama + "1e40\n}") ==
        "config.json:7:3: error: vocab_size: expected a whole number >= 1, got 1e+40");
  CHECK(import_error(llama + "32000,\n  \"hidden_act\": \"gelu\"\n}") ==
        "config.json:8:3: error: hidden_act: expected silu (the gated SwiGLU MLP of llama), got "
        "\"gelu\"");
  // Mistral 7B v0.1's 4096-token window is shorter than an 8192-token sequence.
  const std::string mistral =
      "{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"num_hidden_layers\": 32, "
      "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
      "\"vocab_size\": 32000, \"sliding_window\": 4096}";
  ImportChoices eight_k;
  eight_k.sequence = 8192;
  CHECK(import_error(mistral, eight_k) ==
        "config.json:1:175: error: sliding_window: sliding-window attention is not modelled: "
        "expected a window of at least the sequence 8192, got 4096");
  CHECK(std::get<GptSpec>(read_workload_file(ConfigNode::load_string(
                              import_hf_config(mistral, "m.json", {}), "m"))
                              .spec)
            .kv_heads == 8);  // 4096 tokens: the window covers the sequence
  // A missing key and a missing brace.
  CHECK(import_error("{\"model_type\": \"llama\"}") ==
        "config.json:1:1: error: hidden_size: expected a whole number >= 1, got nothing (the key "
        "is required)");
  CHECK(import_error("{\n  \"model_type\": \"llama\",\n").rfind("config.json:3:1: error: expected a JSON config (", 0) ==
        0);
  CHECK(import_error("[1, 2]") ==
        "config.json:1:1: error: expected a JSON object of model settings, got [1,2]");
  // The loader's own bounds, at the config file.
  CHECK(import_error(llama + "32000}", [] {
          ImportChoices c;
          c.global_batch = 3;
          c.micro_batch = 2;
          return c;
        }()) == "command line: error: --global-batch: the imported workload is refused: expected a "
              "multiple of micro_batch (2), got \"3\"");
}
