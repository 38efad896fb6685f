#include "engine/graph/workload_loader.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/config/enum_read.hpp"
#include "engine/config/node.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

std::int64_t size(const ConfigNode& n, std::string_view key) {
  return n.require_positive<std::int64_t>(key);
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
  s.m = size(n, "m");
  s.n = size(n, "n");
  s.k = size(n, "k");
  s.precision = read_enum(n, "precision", parse_data_type, valid_data_types, DataType::kFp16);
  return s;
}

LstmSpec read_lstm(const ConfigNode& n) {
  LstmSpec s;
  s.batch = size(n, "batch");
  s.sequence = size(n, "sequence");
  s.hidden = size(n, "hidden");
  s.vocabulary = size(n, "vocabulary");
  s.layers = size(n, "layers");
  s.precision = read_enum(n, "precision", parse_data_type, valid_data_types, DataType::kFp16);
  s.optimizer = read_enum(n, "optimizer", parse_optimizer, valid_optimizers, Optimizer::kSgd);
  s.batching = read_enum(n, "batching", parse_lstm_batching, valid_lstm_batchings,
                         LstmBatching::kPerStep);
  return s;
}

GptSpec read_gpt(const ConfigNode& n) {
  GptSpec s;
  s.layers = size(n, "layers");
  s.hidden = size(n, "hidden");
  s.heads = size(n, "heads");
  s.ffn = n.optional_positive<std::int64_t>("ffn").value_or(4 * s.hidden);
  s.sequence = size(n, "sequence");
  s.vocabulary = size(n, "vocabulary");
  s.micro_batch = size(n, "micro_batch");
  s.global_batch = n.optional_positive<std::int64_t>("global_batch").value_or(s.micro_batch);
  s.precision = read_enum(n, "precision", parse_data_type, valid_data_types, DataType::kFp16);
  s.optimizer = read_enum(n, "optimizer", parse_optimizer, valid_optimizers, Optimizer::kAdam);
  s.dropout = n.get_or<bool>("dropout", true);
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
    check_multiple(root, "hidden", g->hidden, "heads", g->heads, problems);
    if (root.has("global_batch")) {
      check_multiple(root, "global_batch", g->global_batch, "micro_batch", g->micro_batch,
                     problems);
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
