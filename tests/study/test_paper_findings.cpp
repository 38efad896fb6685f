// The DeepFlow paper's §9 findings, checked on reduced versions of the shipped studies
// (studies/fig9_technology_scaling_full.yaml, fig11_nodes_per_package.yaml) run through the
// study runner in process: Fig. 9 with the joint split and strategy search on a smaller budget
// and a few points; Fig. 11 with the strategy searched on the template's split. Numbers quoted
// "measured" come from the shipped studies' CLI runs (studies/README.md). About 2x from
// parallelism optimization alone: the Fig. 10 ladder's first two rungs here (sequence-batched
// LM), and tests/explore/test_paper_claims.cpp on the reference's node in both countings.
// Beyond the paper, the energy and cost studies' findings (power_cap.yaml, power_limit.yaml,
// gpt3_175b_node_memory_cost.yaml), likewise reduced.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "engine/config/node.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/study/study_outputs.hpp"
#include "tests/study/study_fixtures.hpp"

namespace pathfinder {
namespace {

// The case-study LM on 512 nodes of a case-study template, memory capacity ignored as in the
// paper, strategy searched at each point (no search: each point gives its own).
StudySpec case_study(const std::string& tmpl, const std::string& sweep,
                     const std::string& search = "strategy",
                     const std::string& workload = "lstm_lm.yaml") {
  return read_study(ConfigNode::load_string(
      "name: s\nquestion: q\ntemplate: " + test::source_path("templates/" + tmpl) +
          "\nworkload: " + test::source_path("studies/workloads/" + workload) +
          "\ndevices: 512\ncheck_memory: false\n" +
          (search.empty() ? "" : "search: " + search + "\n") + "sweep:\n" + sweep,
      "s.yaml"));
}

// The joint strategy and split search of fig9_technology_scaling_full.yaml on a smaller budget
// (4 restarts x 40 steps instead of 6 x 50; the best 2 strategies).
const char* const kJointSearch =
    "architecture\nshortlist: 2\noptimizer: {optimizer: pgd, restarts: 4, steps: 40}";

double iteration_s(const StudyTable& t, std::size_t row) {
  REQUIRE(t.cell(row, *t.column("feasible")) == "1");
  return *t.number(row, "iteration_s");
}

// A shipped study run at three values of its first axis (`axis`, `size` values, those at
// `keep`), the middle one spelt `middle`; its table.
StudyTable at_three(const std::string& study, const char* axis, std::size_t size,
                    std::array<std::size_t, 3> keep, const char* middle) {
  StudySpec s = load_study(test::source_path("studies/" + study + ".yaml"));
  StudyAxis& a = s.axes.front();
  REQUIRE(a.name() == axis);
  REQUIRE(a.values.size() == size);
  a.values = {a.values[keep[0]], a.values[keep[1]], a.values[keep[2]]};
  REQUIRE(a.values[1].text == middle);
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir(study)));
  REQUIRE(run.complete());
  return run.table;
}

// A feasible row's number.
double number(const StudyTable& t, std::size_t row, const char* column) {
  REQUIRE(t.cell(row, *t.column("feasible")) == "1");
  return *t.number(row, column);
}

// A shipped study (studies/<name>.yaml) run to completion: its table of `rows` points.
StudyTable shipped_study_table(const std::string& name, std::size_t rows) {
  const StudySpec s = load_study(test::source_path("studies/" + name + ".yaml"));
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir(name)));
  REQUIRE(run.complete());
  REQUIRE(run.table.rows.size() == rows);
  return run.table;
}

}  // namespace

TEST_CASE("the shipped case studies load, with their technologies, and have the paper's points",
          "[study][paper]") {
  const std::pair<const char*, std::size_t> studies[] = {
      {"fig1_gemm_intensity", 12},  // 3 split families x 4 device counts, explicit points
      {"fig9_technology_scaling_full", 84},  // 7 logic x 4 HBM x 3 networks
      {"fig10_cooptimization", 16},  // 4 rungs (naive, + parallelism, + arch, + model) x 4 nodes
      {"fig11_nodes_per_package", 7},  // 1, 2, 4, ... 64
      {"gpt3_175b_strategy_selection", 6},  // A100, H100 x 256, 512, 1024 devices
      {"llama3_405b_strategy", 2},          // 8K and 128K context on 16,384 H100
      {"power_cap", 8},                     // A100 at 100 ... 400 W
      {"gpt3_175b_node_memory_cost", 20},   // 4 HBM generations x 5 logic nodes
      {"finetune_lora_vs_full", 4},         // H100, B200 x full, LoRA
      {"software_stack_choice", 8},         // Llama 3 8B, 70B x four software stacks
      {"moe_dispatch", 3},  // DeepSeek-V3: flat all-to-all, 2025 MoE stack, DeepSeek's own
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

TEST_CASE("paper §9.2: about 2x from parallelism optimization alone", "[study][paper]") {
  // The first two rungs of fig10_cooptimization.yaml: naive data parallelism against the best
  // strategy on the template's split, the LM batched over the sequence (lstm_lm_sequence.yaml),
  // at N12 (the paper's base node) and N7.
  const StudyRun run = run_study(
      case_study("case_study_node.yaml", "  logic: [N12, N7]\npoints:\n"
                 "  - {label: naive, search: none, strategy: RC-1-1-d512-p1}\n"
                 "  - {label: best, search: strategy}\n",
                 "", "lstm_lm_sequence.yaml"),
      test::run_options(test::fresh_dir("paper-fig10-parallelism")));
  REQUIRE(run.complete());
  const auto row = [&](const std::string& label, const std::string& logic) {
    for (std::size_t r = 0; r < run.table.rows.size(); ++r) {
      if (run.table.cell(r, *run.table.column("label")) == label &&
          run.table.cell(r, *run.table.column("logic")) == logic) {
        return r;
      }
    }
    FAIL("no row " << label << " " << logic);
    return std::size_t{0};
  };
  const std::size_t n12 = row("naive", "N12"), b12 = row("best", "N12"),
                    n7 = row("naive", "N7"), b7 = row("best", "N7");
  const double gain12 = iteration_s(run.table, n12) / iteration_s(run.table, b12);
  const double gain7 = iteration_s(run.table, n7) / iteration_s(run.table, b7);
  std::printf("\npaper §9.2 (sequence-batched LM, template split): naive %.3f s, best %s %.3f s "
              "at N12 (%.2fx); at N7 %.2fx (paper: ~2x)\n",
              iteration_s(run.table, n12),
              run.table.cell(b12, *run.table.column("chosen_strategy")).c_str(),
              iteration_s(run.table, b12), gain12, gain7);
  // The naive design (32 sequences per node) all-reduces the 61 GB of gradients over the
  // 100 GB/s NDR ring (1.30 s) and updates all 30.5e9 parameters on every node (0.60 s);
  // CR-8-d64 with ZeRO-1 shards both 8x and 512x, at the cost of 0.20 s of tensor collectives.
  // Measured 2.80x at N12. Asserted: between 2x and 3x at the paper's base node, and the
  // winner a column-row split with data parallelism. At N7 (3.50x measured) the naive design's
  // network and HBM time do not shrink with the logic, so the gain grows: "about 2x" holds at
  // N12 only.
  CHECK(gain12 >= 2.0);
  CHECK(gain12 <= 3.0);
  CHECK(gain7 > gain12);
  CHECK(run.table.cell(b12, *run.table.column("chosen_strategy")).rfind("CR-", 0) == 0);
}

TEST_CASE("paper §9.1: a large gain from N12 to N7, saturation past N3 unless memory and network scale",
          "[study][paper]") {
  // Reduced Fig. 9 with the split and strategy searched at each point (as the full study):
  // N12, N7, N3, N1 with HBM2 and NDR-x8 (100 GB/s each way) held, N12 and N7 with HBM4 held,
  // and N3, N1 with HBM4 and the optical GDR-x8 (3.3 TB/s) scaled with them.
  const StudyRun held = run_study(
      case_study("case_study_node.yaml",
                 "  memory: [HBM2, HBM4]\n  network: [NDR-x8]\n  logic: [N12, N7, N3, N1]\n",
                 kJointSearch),
      test::run_options(test::fresh_dir("paper-fig9-held")));
  const StudyRun scaled = run_study(
      case_study("case_study_node.yaml", "  memory: [HBM4]\n  network: [GDR-x8]\n  logic: [N3, N1]\n",
                 kJointSearch),
      test::run_options(test::fresh_dir("paper-fig9-scaled")));
  REQUIRE(held.complete());
  REQUIRE(scaled.complete());
  const double n12 = iteration_s(held.table, 0), n7 = iteration_s(held.table, 1),
               n3 = iteration_s(held.table, 2), n1 = iteration_s(held.table, 3);
  const double h12 = iteration_s(held.table, 4), h7 = iteration_s(held.table, 5);
  const double s3 = iteration_s(scaled.table, 0), s1 = iteration_s(scaled.table, 1);
  std::printf("\npaper §9.1 (split and strategy searched): HBM2 + NDR-x8: N12 %.3f s, N7 %.3f s "
              "(%.2fx), N3 %.3f s, N1 %.3f s (N3->N1 %.3fx); HBM4 + NDR-x8: N12->N7 %.2fx; "
              "HBM4 + GDR-x8: N3 %.3f s, N1 %.3f s (N3->N1 %.3fx)\n",
              n12, n7, n12 / n7, n3, n1, n3 / n1, h12 / h7, s3, s1, s3 / s1);
  // N12 -> N7 with either memory: measured 1.39x (HBM2) and 1.46x (HBM4) in the full study.
  // Compute falls ~0.78 -> 0.46 s (2.4x the peak, with the split re-balanced for the denser
  // node) while the NDR collectives (tensor 0.20 s, gradients 0.16 s) stay: at least 1.3x.
  CHECK(n12 / n7 >= 1.3);
  CHECK(h12 / h7 >= 1.3);
  // Saturation past N3 with memory and network held: N1 has 1.6x N3's peak, but HBM2 and NDR
  // bound the iteration, so it gains under a tenth of that (0.998x here and in the full study):
  // under 8%.
  CHECK(n3 / n1 < 1.08);
  CHECK(n12 / n7 > 1.2 * (n3 / n1));
  // With HBM4 and GDR-x8 the nodes past N3 keep paying (1.21x here; 1.22x to N2 and 1.25x to
  // N1 in the full study).
  CHECK(s3 / s1 > 1.1);
  CHECK(s1 < n1);
  // Each row carries the searched split in budget units (issue 15: "how should I split the
  // budget?"): within case_study_node.yaml's 850 mm^2 and 300 W, and moved from the template's
  // core share (0.3088 x 850 mm^2 = 262.48 mm^2) on some row.
  bool moved = false;
  for (const StudyTable* t : {&held.table, &scaled.table}) {
    for (std::size_t r = 0; r < t->rows.size(); ++r) {
      double area = 0.0, power = 0.0;
      for (std::size_t c = 0; c < t->columns.size(); ++c) {
        const std::string& name = t->columns[c];
        if (name.rfind("area_mm2.", 0) == 0) area += *t->number(r, name);
        if (name.rfind("power_w.", 0) == 0) power += *t->number(r, name);
      }
      CHECK(area <= 850.0 * (1.0 + 1e-7));  // cells are printed to 9 significant digits
      CHECK(power <= 300.0 * (1.0 + 1e-7));
      CHECK(area > 0.5 * 850.0);
      moved = moved || std::abs(*t->number(r, "area_mm2.core") - 0.3088 * 850.0) > 1.0;
      // Every joint search says whether it converged, and names a move when it did not.
      const std::string converged = t->cell(r, *t->column("converged"));
      CHECK((converged == "1" || converged == "0"));
      CHECK((converged == "1") == t->cell(r, *t->column("convergence")).empty());
    }
  }
  CHECK(moved);
}

TEST_CASE("paper §9.3: multi-node packages with 2 TB/s links", "[study][paper]") {
  // Reduced Fig. 11 on the template's split with the strategy searched: 1 ... 64 nodes per
  // package (templates/case_study_package.yaml, ~2.2 TB/s UCIe per node and direction on a
  // package ring, NDR-x8 between packages).
  const StudyRun run = run_study(
      case_study("case_study_package.yaml", "  nodes_per_package: [1, 2, 4, 8, 16, 32, 64]\n"),
      test::run_options(test::fresh_dir("paper-fig11")));
  REQUIRE(run.complete());
  double t[7];
  for (std::size_t i = 0; i < 7; ++i) t[i] = iteration_s(run.table, i);
  double best_beyond_4 = t[3];
  for (std::size_t i = 3; i < 7; ++i) best_beyond_4 = std::min(best_beyond_4, t[i]);
  std::printf("\npaper §9.3 (template split, strategy searched): 1, 2, 4, ... 64 nodes/package: "
              "%.3f %.3f %.3f %.3f %.3f %.3f %.3f s; 1->4 %.2fx, 4->best beyond %.2fx, "
              "1->best %.2fx\n",
              t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[0] / t[2], t[2] / best_beyond_4,
              t[0] / std::min(t[2], best_beyond_4));
  // The paper: ~32% at best. Four nodes per package take the gradient all-reduce of the 64
  // replicas mostly onto the package links (data_comm 0.160 -> 0.038 s) and let CR-32 keep
  // its reduction 4 nodes to a package: 1.13x measured. The best package (32 nodes, CR-32 in one
  // package) gives 1.26x.
  CHECK(t[0] / t[2] > 1.05);
  CHECK(t[0] / std::min(t[2], best_beyond_4) <= 1.35);
  // Beyond 4 nodes: at most ~10% more (1.110x measured at 32), less than 1 -> 4 brought. Not
  // monotone: on a 64-node package ring a 32-node group is a ring segment, which the model
  // embeds with dilation 2 (half the per-node bandwidth), so 64 is slower than 32.
  CHECK(t[2] / best_beyond_4 <= 1.15);
  CHECK(t[2] / best_beyond_4 < t[0] / t[2]);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("Llama 3 405B on 16,384 H100: tensor parallel in the node, context parallel at 128K",
          "[study][paper]") {
  // studies/llama3_405b_strategy.yaml, every strategy ranked with memory enforced. Meta's
  // choices (Dubey et al. 2024 Table 4): TP8 PP16 at 8K, TP8 CP16 PP16 at 128K. Pipeline
  // stages take 126 layers unevenly (stage_layers).
  const StudySpec s = load_study(test::source_path("studies/llama3_405b_strategy.yaml"));
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("llama3-405b")));
  REQUIRE(run.complete());
  REQUIRE(run.table.rows.size() == 2);
  const auto strategy = [&](std::size_t r) {
    return parse_strategy(run.table.cell(r, *run.table.column("chosen_strategy")));
  };
  const Strategy at8k = strategy(0), at128k = strategy(1);
  std::printf("\nLlama 3 405B on 16,384 H100: 8K %s (%.2f s), 128K %s (%.2f s)\n",
              to_string(at8k).c_str(), iteration_s(run.table, 0), to_string(at128k).c_str(),
              iteration_s(run.table, 1));
  // Tensor parallelism inside the 8-GPU NVLink node at 8K (Meta: TP8). At 128K the model's best
  // is TP16 over two nodes with CP16, 11.77 s, 0.3% ahead of TP8 with CP32 (11.80 s): on the
  // rail-optimized fabric a 16-GPU group's all-gather of 268 MB runs at ~370 GB/s (eight
  // NICs of a node at once) and the data-parallel reduction shrinks; Meta chose TP8 CP16.
  CHECK(at8k.tp <= 8);
  CHECK(at128k.tp <= 16);
  // 128K tokens a sequence do not fit 8 GPUs' memory without splitting the sequence: the
  // answer takes context parallelism of 8 or more (Meta: 16).
  CHECK(at128k.cp >= 8);
  // Neither answer wastes the machine: both above 30% MFU (Meta reports 38-43% at 8K).
  CHECK(*run.table.number(0, "mfu") > 0.30);
  CHECK(*run.table.number(1, "mfu") > 0.30);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("Llama 3 70B fine-tuning: LoRA's gain is the memory it frees more than the FLOPs",
          "[study]") {
  // studies/finetune_lora_vs_full.yaml on 64 devices, every strategy ranked, memory enforced.
  // LoRA drops the base weights' gradient GEMMs (a third of the linear layers' work) but adds
  // its adapters' thin GEMMs and adds (5 per layer here, about as long per layer as the
  // gradient GEMMs they replace on H100 at tp4: 2.6 against 3.2 ms), so on the same strategy
  // it gains little; what it frees is memory (no gradients or optimizer states for 70B
  // parameters). On H100's 80 GB that buys a shorter pipeline (tp4-pp2-dp8 against full
  // fine-tuning's tp4-pp4-dp4), on B200's 192 GB pure data parallelism with ZeRO-3 (tp1-dp64;
  // Transformer Engine's FP8 weight copies no longer leave room for tp2-dp32): LoRA 5-12%
  // faster than full fine-tuning on H100, 20-45% on B200 (measured 12% and 22%: 9.75 against
  // 8.73 s and 3.67 against 3.00 s; 11% and 25% before the copies were counted; ZeRO-3 over dp64
  // was the B200's answer, 36% faster, until its gathers across nodes cost the compute beside
  // them main memory at the ring's rate, eight rails near NVLink's; H100 9% before its NVLink
  // collectives cost it at all, h100.yaml memory_contention: full fine-tuning's gradients cross
  // NVLink, LoRA's hardly).
  const StudySpec s = load_study(test::source_path("studies/finetune_lora_vs_full.yaml"));
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("finetune")));
  REQUIRE(run.complete());
  REQUIRE(run.table.rows.size() == 4);  // h100 full, h100 lora, b200 full, b200 lora
  const auto t = [&](std::size_t r) { return iteration_s(run.table, r); };
  std::printf("\nLlama 3 70B fine-tuning on 64 devices: H100 full %.2f s, LoRA %.2f s; B200 full "
              "%.2f s, LoRA %.2f s\n", t(0), t(1), t(2), t(3));
  const double h100 = t(0) / t(1), b200 = t(2) / t(3);
  CHECK(h100 > 1.05);
  CHECK(h100 < 1.12);
  CHECK(b200 > 1.20);
  CHECK(b200 < 1.45);
  CHECK(parse_strategy(run.table.cell(3, *run.table.column("chosen_strategy"))).pp == 1);
}

TEST_CASE("power caps: the devices' energy per token falls, the system's rises, time grows",
          "[study][energy]") {
  // studies/power_cap.yaml at three of its caps. The devices' energy per token falls as the cap
  // drops (energy per FLOP ~ V^2 at the lower operating point, leakage ~ V); the node and
  // fabric draw the same power for a longer iteration, so the system's rises. Measured by
  // the shipped study: devices 0.192 J/token at 400 W, 0.153 at 250 W, 0.122 at 100 W; system
  // 0.541, 0.590, 0.994 J/token.
  // The 100 W, 250 W and 400 W caps (the first, fifth and last).
  const StudyTable t = at_three("power_cap", "budget.power", 8, {0, 4, 7}, "250 W");
  const auto v = [&](std::size_t row, const char* column) { return number(t, row, column); };
  std::printf("\npower cap  iteration s  devices J/token  system J/token  USD/M tokens\n");
  for (std::size_t r = 0; r < 3; ++r) {
    std::printf("%9s  %11.2f  %15.4f  %14.4f  %12.4f\n", t.cell(r, 0).c_str(), v(r, "iteration_s"),
                v(r, "chip_j_per_token"), v(r, "j_per_token"), v(r, "usd_per_mtoken"));
  }
  for (std::size_t r = 0; r + 1 < 3; ++r) {
    CHECK(v(r, "iteration_s") > v(r + 1, "iteration_s"));
    CHECK(v(r, "chip_j_per_token") < v(r + 1, "chip_j_per_token"));
    CHECK(v(r, "j_per_token") > v(r + 1, "j_per_token"));
    CHECK(v(r, "device_power_w") < v(r + 1, "device_power_w"));
  }
  CHECK(v(2, "chip_j_per_token") == Approx(0.191).epsilon(0.02));
  CHECK(v(0, "chip_j_per_token") == Approx(0.120).epsilon(0.02));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("a run-time power limit: the devices' energy per token falls, then rises",
          "[study][energy]") {
  // studies/power_limit.yaml at three of its limits: the A100 as built, its board limited as
  // nvidia-smi -pl limits it. Lowering the limit lowers the long GEMMs' voltage (energy per
  // FLOP ~ V²) until the core reaches its minimum voltage; below that the clock falls alone and
  // the chip's 76 W of idle power over an ever longer iteration dominates: energy per token
  // falls, then rises (the shape the power-limit sweeps of Zeus and Perseus measure). Measured
  // by the shipped study: 0.192 J/token at 400 W, 0.165 at 200 W (175 W the same), 0.316 at 100 W;
  // 25.44, 32.40 and 101.5 s an iteration.
  const StudyTable t = at_three("power_limit", "budget.power_limit", 9, {0, 4, 8}, "200 W");
  const auto v = [&](std::size_t row, const char* column) { return number(t, row, column); };
  std::printf("\npower limit  iteration s  devices J/token  peak W\n");
  for (std::size_t r = 0; r < 3; ++r) {
    std::printf("%11s  %11.2f  %15.4f  %6.1f\n", t.cell(r, 0).c_str(), v(r, "iteration_s"),
                v(r, "chip_j_per_token"), v(r, "peak_device_power_w"));
  }
  CHECK(v(0, "iteration_s") > v(1, "iteration_s"));
  CHECK(v(1, "iteration_s") > v(2, "iteration_s"));
  CHECK(v(1, "chip_j_per_token") < v(0, "chip_j_per_token"));
  CHECK(v(1, "chip_j_per_token") < v(2, "chip_j_per_token"));
  for (std::size_t r = 0; r < 3; ++r) {
    const double watts = r == 0 ? 100.0 : r == 1 ? 200.0 : 400.0;
    CHECK(v(r, "peak_device_power_w") <= watts * (1.0 + 1e-9));
  }
  CHECK(v(2, "chip_j_per_token") == Approx(0.191).epsilon(0.02));
  CHECK(v(1, "chip_j_per_token") == Approx(0.164).epsilon(0.02));
  CHECK(v(0, "chip_j_per_token") == Approx(0.317).epsilon(0.02));
}

TEST_CASE("cost per token: the next node pays for its dearer wafer, the cheapest is best by cost",
          "[study][cost]") {
  // studies/gpt3_175b_node_memory_cost.yaml at N5 and N3 with HBM3: measured by the shipped
  // study, 0.437 and 0.315 USD per million tokens (2.06 J per token at N3) at the H100-class
  // template's own training residual (h100.yaml core.sustained_fraction 0.755, collectives
  // costing the compute beside them main memory at their ring's rate on NVLink and across
  // nodes); 0.434, 0.313 and 2.05 at 0.765; 0.438, 0.314 and 2.05 at 0.745 with NVLink's
  // contention alone; 0.427, 0.306 and 2.01
  // at 0.77 without it; 0.414, 0.299
  // and 1.96 at the A100's 0.821; 0.402 and 0.296 before a job waited for its slowest device.
  StudySpec s = load_study(test::source_path("studies/gpt3_175b_node_memory_cost.yaml"));
  REQUIRE(s.goal.kind == GoalKind::kCost);
  for (StudyAxis& a : s.axes) {
    if (a.name() == "memory") a.values = {a.values[1]};                 // HBM3
    if (a.name() == "logic") a.values = {a.values[1], a.values[3]};     // N5, N3
  }
  const StudyRun run = run_study(s, test::run_options(test::fresh_dir("node-memory-cost")));
  REQUIRE(run.complete());
  const StudyTable& t = run.table;
  REQUIRE(t.rows.size() == 2);
  const auto v = [&](std::size_t row, const char* column) {
    REQUIRE(t.cell(row, *t.column("feasible")) == "1");
    return *t.number(row, column);
  };
  REQUIRE(t.cell(0, *t.column("logic")) == "N5");
  CHECK(v(1, "usd_per_mtoken") < v(0, "usd_per_mtoken"));
  CHECK(v(0, "usd_per_mtoken") == Approx(0.438).epsilon(0.02));
  CHECK(v(1, "usd_per_mtoken") == Approx(0.314).epsilon(0.02));
  CHECK(v(1, "j_per_token") == Approx(2.05).epsilon(0.02));
  CHECK(best_row(t, GoalKind::kCost) == std::optional<std::size_t>(1));
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("software stacks: each point's best strategy is one its stack runs, Megatron-Core's "
          "the fastest", "[study]") {
  // studies/software_stack_choice.yaml: Llama 3 8B and 70B on 64 H100s, every strategy ranked
  // under each profile (its host costs, kernels, precisions, overlaps and the parallelism its
  // code offers). Megatron-Core (fused kernels, overlapped reductions, cuDNN attention) is the
  // fastest; FSDP (eager RMSNorm/rotary/SwiGLU, FlashAttention-2, fp32 loss passes; torchtitan
  // calibration 8.6%) 9-13% slower; nanotron (blocking tensor-parallel collectives, its
  // engines 1F1B and AFAB, no ZeRO beyond 1) slower still.
  const StudyTable t = shipped_study_table("software_stack_choice", 8);
  const auto row = [&](const std::string& workload, const std::string& software) {
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      if (t.cell(r, *t.column("workload")).find(workload) != std::string::npos &&
          t.cell(r, *t.column("software")) == software) {
        return r;
      }
    }
    FAIL("no row " << workload << " " << software);
    return std::size_t{0};
  };
  for (const char* w : {"llama3_8b", "llama3_70b"}) {
    const double core = iteration_s(t, row(w, "megatron-core"));
    std::printf("\n%s on 64 H100s:", w);
    for (const char* sw : {"megatron-lm", "megatron-core", "fsdp", "nanotron"}) {
      const std::size_t r = row(w, sw);
      const std::string chosen = t.cell(r, *t.column("chosen_strategy"));
      std::printf(" %s %.2f s (%s)", sw, iteration_s(t, r), chosen.c_str());
      const SoftwareProfile p =
          load_software_profile(test::source_path(std::string("templates/software/") + sw + ".yaml"));
      CHECK(p.parallelism.runs(parse_strategy(chosen)));
      CHECK(iteration_s(t, r) >= core);
    }
    std::printf("\n");
    const double fsdp = iteration_s(t, row(w, "fsdp")) / core;
    CHECK(fsdp > 1.05);
    CHECK(fsdp < 1.25);
    CHECK(iteration_s(t, row(w, "nanotron")) / core > 1.2);
  }
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("MoE dispatch: DeepEP forwarding and overlapped all-to-alls buy DeepSeek-V3 a quarter",
          "[study]") {
  // studies/moe_dispatch.yaml: DeepSeek-V3 on 2,048 H100s, every strategy ranked under
  // Megatron-Core FP8 with its flat all-to-all and under its 2025 MoE stack (megatron-core-moe:
  // DeepEP's forwarding dispatch, a token crossing to each of its <= 4 routed nodes once; the
  // all-to-alls overlapped with another micro-batch's compute; the ModelZoo's FP8 recipe).
  // Flat, the best split keeps the expert group small (tp1-pp8-dp256-ep8 with full
  // recomputation, 23.74 s; inside a DGX, tp2-pp16-dp64-ep4 at 23.55 s, it needs 86.5 GB beside
  // Megatron's fp32 main gradients); with the MoE stack the expert group may cross nodes (ep16,
  // 15.83 s).
  const StudyTable t = shipped_study_table("moe_dispatch", 3);
  const double flat = iteration_s(t, 0), moe = iteration_s(t, 1);
  const Strategy flat_best = parse_strategy(t.cell(0, *t.column("chosen_strategy")));
  const Strategy moe_best = parse_strategy(t.cell(1, *t.column("chosen_strategy")));
  std::printf("\nDeepSeek-V3 on 2,048 H100s: flat all-to-all %.2f s (%s), MoE stack %.2f s (%s)\n",
              flat, to_string(flat_best).c_str(), moe, to_string(moe_best).c_str());
  CHECK(flat_best.ep <= 8);  // the all-to-alls kept on NVLink
  CHECK(moe_best.ep > 8);    // forwarded and overlapped, they may cross nodes
  // 1.50 (1.48 before the 2024 FP8 stack's attention ran cuDNN's causal kernels of that year,
  // core.cudnn_causal_fraction, and the 2025 MoE stack's at the native rate).
  CHECK(flat / moe > 1.15);
  CHECK(flat / moe < 1.55);
  // DeepSeek's own stack (deepseek-v3.yaml), with its FP8-cached activations, BF16 moments and
  // fp32 gradients: the expert group across nodes as the MoE stack's and no full recomputation,
  // within 10% of the MoE stack and well ahead of the flat one (the study: DualPipe on 16 stages
  // with ep32, recomputing the norms and MLA up-projections as the report does, 16.93 s against
  // 15.83 and 23.74; 1F1B on 8 stages with ep16, 16.66 s without recomputation while the model
  // held 16-bit gradients, needs 100.1 GB beside fp32 ones; it was ahead of both, 16.66 against
  // 17.83, before megatron-core-moe took the ModelZoo's fused loss, FP8 parameters and BF16
  // moments). With the model's multi-token-prediction module on the last stage
  // (deepseek_v3.yaml mtp_depth 1), DualPipe's 32-stage split takes 19.32 s (14.37 s without the
  // module: the last stage's two head passes and block outweigh two layers).
  const Strategy own = parse_strategy(t.cell(2, *t.column("chosen_strategy")));
  const double deepseek = iteration_s(t, 2);
  std::printf("DeepSeek's stack %.2f s (%s)\n", deepseek, to_string(own).c_str());
  CHECK(own.ep > 8);
  CHECK(own.recompute != Recompute::kFull);
  CHECK(flat / deepseek > 1.15);
  CHECK(std::abs(deepseek / moe - 1.0) < 0.10);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("scale-out NICs: a faster network never slows the best strategy, and MoE gains most",
          "[study]") {
  // studies/scale_out_nic.yaml: Llama 3 70B and Mixtral 8x7B on 1,024 H100s joined by HDR200,
  // NDR400 or XDR800 (techlib/network.yaml: 25, 50 and 100 GB/s per GPU at NCCL's measured
  // 0.95, 0.94 and 0.94 of line rate), every strategy ranked under Megatron-Core. A faster NIC
  // leaves every strategy at least as fast, so the best one can only gain; the dense model keeps
  // most of its traffic on NVLink and gains a few percent, the MoE model's all-to-alls cross the
  // network and gain more. Energy per token: the XDR port (NIC, optics, switch ports) draws
  // 160 W per GPU against NDR's 90 W.
  const StudyTable t = shipped_study_table("scale_out_nic", 6);
  const auto row = [&](std::size_t workload, std::size_t nic) { return workload * 3 + nic; };
  for (std::size_t w = 0; w < 2; ++w) {
    const double hdr = iteration_s(t, row(w, 0)), ndr = iteration_s(t, row(w, 1)),
                 xdr = iteration_s(t, row(w, 2));
    std::printf("\n%s on 1,024 H100s: HDR200 %.3f s, NDR400 %.3f s, XDR800 %.3f s\n",
                t.cell(row(w, 0), *t.column("workload")).c_str(), hdr, ndr, xdr);
    REQUIRE(t.cell(row(w, 0), *t.column("nic")) == "HDR200");
    REQUIRE(t.cell(row(w, 2), *t.column("nic")) == "XDR800");
    CHECK(ndr <= hdr);
    CHECK(xdr <= ndr);
  }
  const double dense_gain = iteration_s(t, row(0, 0)) / iteration_s(t, row(0, 1));
  const double moe_gain = iteration_s(t, row(1, 0)) / iteration_s(t, row(1, 1));
  CHECK(dense_gain > 1.0);
  CHECK(dense_gain < 1.10);
  CHECK(moe_gain > dense_gain);
  // The NIC's power is in the energy: at nearly equal time XDR's 70 W more per GPU shows.
  CHECK(number(t, row(0, 2), "j_per_token") > number(t, row(0, 1), "j_per_token"));
}

}  // namespace pathfinder
