// Workload specs the dist tests share: the shipped studies/workloads files and a tiny GPT small
// enough to count strategies by hand.
#pragma once

#include <string>
#include <variant>

#include "engine/graph/workload_loader.hpp"
#include "tests/test_paths.hpp"

namespace pathfinder::test {

inline WorkloadSpec shipped_workload(const std::string& name) {
  return load_workload_file(source_path("studies/workloads/" + name + ".yaml")).spec;
}
inline GptSpec shipped_gpt(const std::string& name) {
  return std::get<GptSpec>(shipped_workload(name));
}

// 4 layers, h 64, 4 heads, f 256, s 32, V 128, global batch 4.
inline GptSpec tiny_gpt() {
  GptSpec g;
  g.layers = 4;
  g.hidden = 64;
  g.heads = 4;
  g.ffn = 256;
  g.sequence = 32;
  g.vocabulary = 128;
  g.micro_batch = 1;
  g.global_batch = 4;
  return g;
}

}  // namespace pathfinder::test
