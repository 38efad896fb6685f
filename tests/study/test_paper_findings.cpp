// The DeepFlow paper's §9 findings, checked on reduced versions of the shipped studies
// (studies/fig9_technology_scaling_full.yaml, fig11_nodes_per_package.yaml) run through the
// study runner in process: strategy searched on the template's split instead of the joint
// split search, and a few points of each sweep. Where the paper's finding does not hold in
// this model the test prints the numbers and asserts only what the model shows as a genuine
// property. About 2x from parallelism optimization alone is tests/explore/test_paper_claims.cpp.
#include <catch2/catch.hpp>

#include <cstdio>
#include <utility>

#include "engine/config/node.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {
namespace {

// The case-study LM on 512 nodes of a case-study template, memory capacity ignored as in the
// paper, strategy searched at each point.
StudySpec case_study(const std::string& tmpl, const std::string& sweep) {
  return read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/" + tmpl) +
          "\nworkload: " + test::source_path("studies/workloads/lstm_lm.yaml") +
          "\ndevices: 512\ncheck_memory: false\nsearch: strategy\nsweep:\n" + sweep,
      "s.yaml"));
}

double iteration_s(const StudyTable& t, std::size_t row) {
  REQUIRE(t.cell(row, *t.column("feasible")) == "1");
  return *t.number(row, "iteration_s");
}

}  // namespace

TEST_CASE("the shipped case studies load, with their technologies, and have the paper's points",
          "[study][paper]") {
  const std::pair<const char*, std::size_t> studies[] = {
      {"fig1_gemm_intensity", 48},  // 4 device counts x 12 splits (each valid at one count)
      {"fig9_technology_scaling_full", 84},  // 7 logic x 4 HBM x 3 networks
      {"fig10_cooptimization", 2},
      {"fig10_cooptimization_arch", 1},
      {"fig11_nodes_per_package", 7},  // 1, 2, 4, ... 64
      {"gpt3_175b_strategy_selection_a100", 3},
      {"gpt3_175b_strategy_selection_h100", 3},
  };
  for (const auto& [name, points] : studies) {
    INFO(name);
    const StudySpec s = load_study(test::source_path(std::string("studies/") + name + ".yaml"));
    CHECK(s.point_count() == points);
    CHECK_FALSE(s.outputs.empty());
    CHECK_NOTHROW(load_study_context(s, test::source_path("techlib")));
  }
  const StudySpec fig9 = load_study(test::source_path("studies/fig9_technology_scaling_full.yaml"));
  CHECK(fig9.search == StudySearch::kArchitecture);
  CHECK_FALSE(fig9.check_memory);
  CHECK(fig9.devices == 512);
}

TEST_CASE("paper §9.1: logic scaling saturates past N3 unless memory and network scale",
          "[study][paper]") {
  // Reduced Fig. 9: N12, N7, N3, N1 with HBM2 and NDR-x8 (100 GB/s each way) held, and N3, N1
  // with HBM4 and the optical GDR-x8 (3.3 TB/s) scaled with them.
  const StudyRun held =
      run_study(case_study("case_study_node.yaml",
                           "  memory: [HBM2]\n  network: [NDR-x8]\n  logic: [N12, N7, N3, N1]\n"),
                test::run_options(test::fresh_dir("paper-fig9-held")));
  const StudyRun scaled =
      run_study(case_study("case_study_node.yaml",
                           "  memory: [HBM4]\n  network: [GDR-x8]\n  logic: [N3, N1]\n"),
                test::run_options(test::fresh_dir("paper-fig9-scaled")));
  REQUIRE(held.complete());
  REQUIRE(scaled.complete());
  const double n12 = iteration_s(held.table, 0), n7 = iteration_s(held.table, 1),
               n3 = iteration_s(held.table, 2), n1 = iteration_s(held.table, 3);
  const double s3 = iteration_s(scaled.table, 0), s1 = iteration_s(scaled.table, 1);
  std::printf("\npaper §9.1 (template split, strategy searched): HBM2 + NDR-x8: N12 %.3f s, N7 %.3f s "
              "(%.2fx), N3 %.3f s, N1 %.3f s (N3->N1 %.3fx); HBM4 + GDR-x8: N3 %.3f s, N1 %.3f s "
              "(N3->N1 %.3fx)\n",
              n12, n7, n12 / n7, n3, n1, n3 / n1, s3, s1, s3 / s1);
  // The paper's "large gain from N12 to N7" does NOT hold here: with HBM2 and NDR-x8 held, the
  // case-study LM on this library spends ~0.71 s of ~1.55 s in the NDR collectives (tensor
  // 0.39 s, gradients 0.32 s, unchanged by the logic node) and its compute time falls only
  // 0.83 -> 0.71 s for 2.4x the peak (the split's HBM2 bandwidth, 899 GB/s, does not move), so
  // ~1.08x (~1.26x with the split searched, fig9 study). Asserted only: it gains, and more than
  // the nodes past N3.
  CHECK(n7 < n12);
  CHECK(n12 / n7 > n3 / n1);
  // Saturation past N3 with memory and network held: under 5% from N3 to N1 (N1 has 1.6x
  // N3's peak; compute is no longer what bounds the iteration).
  CHECK(n3 / n1 < 1.05);
  // With HBM4 and GDR-x8 the nodes past N3 keep paying, more than with the held technologies.
  CHECK(s3 / s1 > n3 / n1);
  CHECK(s3 / s1 > 1.05);
  CHECK(s1 < n1);
}

TEST_CASE("paper §9.3: multi-node packages with 2 TB/s links", "[study][paper]") {
  // Reduced Fig. 11: 1, 4, 16 and 64 nodes per package (templates/case_study_package.yaml,
  // ~2.2 TB/s UCIe per node and direction in the package, NDR-x8 between packages).
  const StudyRun run =
      run_study(case_study("case_study_package.yaml", "  nodes_per_package: [1, 4, 16, 64]\n"),
                test::run_options(test::fresh_dir("paper-fig11")));
  REQUIRE(run.complete());
  const double p1 = iteration_s(run.table, 0), p4 = iteration_s(run.table, 1),
               p16 = iteration_s(run.table, 2), p64 = iteration_s(run.table, 3);
  std::printf("\npaper §9.3 (template split, strategy searched): 1 node/package %.3f s, 4 %.3f s "
              "(%.2fx), 16 %.3f s, 64 %.3f s (4->64 %.2fx)\n",
              p1, p4, p1 / p4, p16, p64, p4 / p64);
  // The paper: at most ~1.3x from multi-node packages. Here 4 nodes per package take the
  // gradient all-reduce of the 64 data-parallel replicas mostly onto the package links
  // (data_comm 0.32 -> 0.08 s): ~1.2x, within the paper's bound.
  CHECK(p1 / p4 > 1.05);
  CHECK(p1 / p4 <= 1.35);
  // Packages of more nodes never hurt: a strategy's groups only move onto faster links.
  CHECK(p16 <= p4 * (1 + 1e-9));
  CHECK(p64 <= p16 * (1 + 1e-9));
  // The paper's "marginal beyond 4 nodes" does NOT hold here: at 64 nodes a 64-way kernel
  // group fits in one package and its collectives run at 2.2 TB/s instead of NDR's 0.1 TB/s,
  // another ~1.25x (printed above; not asserted).
}

}  // namespace pathfinder
