// pathfinder workload import CONFIG.json [--name N] [--sequence N] [--micro-batch N]
//                                       [--global-batch N] [--precision bf16|fp16|fp8] [--out FILE]
// A Hugging Face config.json as a workload file (engine/graph/hf_config.hpp): on standard output,
// or written atomically to --out.
#include <cstdio>
#include <memory>
#include <string>

#include "engine/cli/commands.hpp"
#include "engine/cli/load.hpp"
#include "engine/core/error.hpp"
#include "engine/core/file_io.hpp"
#include "engine/graph/hf_config.hpp"

namespace pathfinder::cli {

void add_workload_command(CLI::App& app, int& exit_code) {
  CLI::App* group = app.add_subcommand("workload", "Make workload files (import a Hugging Face config.json)");
  group->require_subcommand(1);
  struct Options {
    std::string config, out;
    ImportChoices choices;
    long long sequence = 4096, micro = 1, global = 1024;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = group->add_subcommand(
      "import", "Write the GPT workload of a Hugging Face config.json (llama, mistral, qwen2, "
                "qwen3, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3)");
  cmd->add_option("config", opt->config, "The model's config.json")->required();
  cmd->add_option("--name", opt->choices.name, "Workload name (default: the config's _name_or_path, else model_type)");
  cmd->add_option("--sequence", opt->sequence, "Training sequence length (default 4096)");
  cmd->add_option("--micro-batch", opt->micro, "Sequences per micro-batch (default 1)");
  cmd->add_option("--global-batch", opt->global, "Sequences per iteration (default 1024)");
  cmd->add_option("--precision", opt->choices.precision, "Training precision (default bf16)")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8"}));
  cmd->add_option("--out", opt->out, "Write the workload here instead of standard output");
  cmd->callback([opt, &exit_code] {
    check_option_range("--sequence", opt->sequence, 1, 1LL << 24);
    check_option_range("--micro-batch", opt->micro, 1, 1LL << 24);
    check_option_range("--global-batch", opt->global, 1, 1LL << 30);
    opt->choices.sequence = opt->sequence;
    opt->choices.micro_batch = opt->micro;
    opt->choices.global_batch = opt->global;
    const InputFile in = read_input_file(opt->config);
    if (!in.text) {
      SourceLoc at;
      at.file = opt->config;
      throw ConfigError(Diagnostic{at, "cannot read file: " + in.error});
    }
    const std::string yaml = import_hf_config(*in.text, opt->config, opt->choices);
    if (opt->out.empty()) {
      std::fputs(yaml.c_str(), stdout);
    } else {
      write_file_atomically(opt->out, yaml);
    }
    exit_code = 0;
  });
}

}  // namespace pathfinder::cli
