// Tests for engine/graph/compute_graph.hpp: enum spellings, GEMM shape counts, the builder's
// invariants and the graph's sums.
#include "engine/graph/compute_graph.hpp"
#include "engine/graph/workload.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace pathfinder;

TEST_CASE("kernel kinds, phases and data types round-trip through their names", "[graph]") {
  for (const auto& s : valid_kernel_kinds()) {
    INFO(s);
    const auto k = parse_kernel_kind(s);
    REQUIRE(k.has_value());
    CHECK(to_string(*k) == s);
  }
  for (const auto& s : valid_phases()) {
    const auto p = parse_phase(s);
    REQUIRE(p.has_value());
    CHECK(to_string(*p) == s);
  }
  for (const auto& s : valid_data_types()) {
    const auto t = parse_data_type(s);
    REQUIRE(t.has_value());
    CHECK(to_string(*t) == s);
  }
  CHECK(valid_kernel_kinds().size() == 14);  // flash-attention added by issue 13
  CHECK(to_string(CommKind::kReduceScatter) == "reduce-scatter");
  CHECK(to_string(CommGroup::kPipeline) == "pipeline");
  for (const auto& s : valid_recomputes()) {
    const auto r = parse_recompute(s);
    REQUIRE(r.has_value());
    CHECK(to_string(*r) == s);
  }
  CHECK(valid_data_types() == std::vector<std::string>{"fp32", "fp16", "bf16", "fp8", "fp4"});
  CHECK(valid_phases() ==
        std::vector<std::string>{"forward", "backward-data", "backward-weight", "update"});
  CHECK_FALSE(parse_kernel_kind("GEMM").has_value());  // spellings are exact
  CHECK_FALSE(parse_data_type("fp64").has_value());
  CHECK_FALSE(parse_phase("backward").has_value());
}

TEST_CASE("bytes per element and GEMM-shaped kinds", "[graph]") {
  CHECK(bytes_per_element(DataType::kFp32).in(units::bytes) == 4.0);
  CHECK(bytes_per_element(DataType::kFp16).in(units::bytes) == 2.0);
  CHECK(bytes_per_element(DataType::kBf16).in(units::bytes) == 2.0);
  CHECK(bytes_per_element(DataType::kFp8).in(units::bytes) == 1.0);
  CHECK(is_gemm(KernelKind::kGemm));
  CHECK(is_gemm(KernelKind::kBatchedGemm));
  CHECK(is_gemm(KernelKind::kAttentionScores));
  CHECK(is_gemm(KernelKind::kAttentionContext));
  CHECK_FALSE(is_gemm(KernelKind::kSoftmax));
  CHECK_FALSE(is_gemm(KernelKind::kLstmCell));
  CHECK_FALSE(is_gemm(KernelKind::kOptimizerUpdate));
}

TEST_CASE("GEMM shape: 2·m·n·k FLOPs and compulsory traffic", "[graph][golden]") {
  const GemmShape g{1, 8192, 8192, 8192};
  // 2 · 8192³ = 2 · 549755813888 = 1099511627776 FLOP
  CHECK(g.flops().in(units::flops) == 1099511627776.0);
  // A and B: 2 · 8192² elements · 2 B = 268435456 B; C: 8192² · 2 B = 134217728 B
  CHECK(g.bytes_read(DataType::kFp16).in(units::bytes) == 268435456.0);
  CHECK(g.bytes_written(DataType::kFp16).in(units::bytes) == 134217728.0);
  // fp8 halves it, fp32 doubles it.
  CHECK(g.bytes_read(DataType::kFp8).in(units::bytes) == 134217728.0);
  CHECK(g.bytes_written(DataType::kFp32).in(units::bytes) == 268435456.0);

  // Non-square, m ≠ n ≠ k: 2 · 64 · 12288 · 512 = 805306368 FLOP;
  // read (64·512 + 512·12288) · 2 B = (32768 + 6291456) · 2 = 12648448 B; write 64·12288·2 = 1572864 B
  const GemmShape r{1, 64, 12288, 512};
  CHECK(r.flops().in(units::flops) == 805306368.0);
  CHECK(r.bytes_read(DataType::kFp16).in(units::bytes) == 12648448.0);
  CHECK(r.bytes_written(DataType::kFp16).in(units::bytes) == 1572864.0);
  // Accumulated into an fp32 buffer (a weight gradient into main_grad): C read and written in
  // fp32, 64·12288·4 = 3145728 B each way.
  GemmShape acc = r;
  acc.accumulate = 4;
  CHECK(acc.bytes_read(DataType::kFp16).in(units::bytes) == 12648448.0 + 3145728.0);
  CHECK(acc.bytes_written(DataType::kFp16).in(units::bytes) == 3145728.0);
  CHECK_FALSE(acc == r);

  // Batched: 3 products of (m, n, k) = (4, 5, 6): 2·3·4·5·6 = 720 FLOP;
  // read 3·(4·6 + 6·5)·2 B = 3·54·2 = 324 B; write 3·4·5·2 B = 120 B.
  const GemmShape bt{3, 4, 5, 6};
  CHECK(bt.flops().in(units::flops) == 720.0);
  CHECK(bt.bytes_read(DataType::kFp16).in(units::bytes) == 324.0);
  CHECK(bt.bytes_written(DataType::kFp16).in(units::bytes) == 120.0);
}

TEST_CASE("builder: ids in order, dependencies earlier, sums by phase", "[graph]") {
  ComputeGraphBuilder b;
  const ParamId w = b.add_parameter({"w", 0, 6 * 5});
  (void)b.add_parameter({"bias", 0, 5});
  CHECK(b.next_id() == 0);
  Kernel fwd = gemm_kernel("fwd", KernelKind::kGemm, Phase::kForward, DataType::kFp16,
                           GemmShape{1, 4, 5, 6}, {});
  fwd.weight = w;
  const KernelId a = b.add(fwd);
  // 4·5 elements: 1 FLOP each; read 20 · 2 B, write 20 · 2 B.
  const KernelId c = b.add(stream_kernel("act", KernelKind::kElementwise, Phase::kForward,
                                         DataType::kFp16, flops(20), bytes(40), bytes(40), {a}));
  const KernelId d = b.add(gemm_kernel("dgrad", KernelKind::kGemm, Phase::kBackwardData,
                                       DataType::kFp16, GemmShape{1, 4, 6, 5}, {c}));
  const KernelId e = b.add(gemm_kernel("wgrad", KernelKind::kGemm, Phase::kBackwardWeight,
                                       DataType::kFp16, GemmShape{1, 6, 5, 4}, {c}));
  const KernelId u = b.add(stream_kernel("update", KernelKind::kOptimizerUpdate, Phase::kUpdate,
                                         DataType::kFp32, flops(3 * 35), bytes(8 * 35),
                                         bytes(4 * 35), {d, e}));
  CHECK(a == 0);
  CHECK(c == 1);
  CHECK(u == 4);
  const ComputeGraph g = std::move(b).build();
  REQUIRE(g.size() == 5);
  CHECK(g.kernel(a).name == "fwd");
  CHECK(g.kernel(a).weight == w);
  CHECK(g.kernel(u).deps == std::vector<KernelId>{d, e});
  CHECK(g.parameter_count() == 35);  // 6·5 + 5
  CHECK(g.parameters().size() == 2);
  // Each GEMM: 2·4·5·6 = 240 FLOP.
  CHECK(g.flops(Phase::kForward).in(units::flops) == 260.0);  // 240 + 20
  CHECK(g.flops(Phase::kBackwardData).in(units::flops) == 240.0);
  CHECK(g.flops(Phase::kBackwardWeight).in(units::flops) == 240.0);
  CHECK(g.flops(Phase::kUpdate).in(units::flops) == 105.0);  // 3 · 35
  CHECK(g.gemm_flops().in(units::flops) == 720.0);
  CHECK(g.total_flops().in(units::flops) == 845.0);  // 260 + 240 + 240 + 105
  // fwd GEMM: read (4·6 + 6·5)·2 = 108, write 4·5·2 = 40; act 80; dgrad: read (4·5 + 5·6)·2 =
  // 100, write 4·6·2 = 48; wgrad: read (6·4 + 4·5)·2 = 88, write 6·5·2 = 60; update 35·12 = 420.
  CHECK(g.total_bytes().in(units::bytes) == 108 + 40 + 80 + 100 + 48 + 88 + 60 + 420);
  CHECK(dependencies_precede(g));
  CHECK(is_acyclic(g));
  CHECK(g.kernel(a).bytes().in(units::bytes) == 148.0);
}

TEST_CASE("an empty graph is trivially ordered", "[graph]") {
  const ComputeGraph g = ComputeGraphBuilder{}.build();
  CHECK(g.size() == 0);
  CHECK(g.total_flops().in(units::flops) == 0.0);
  CHECK(dependencies_precede(g));
  CHECK(is_acyclic(g));
}

TEST_CASE("timing classes: kernels the timers cannot tell apart share one", "[graph]") {
  ComputeGraphBuilder b;
  // Two time steps of the same GEMM and reduce-scatter (names, phases and dependencies differ),
  // a GEMM of another shape, the same reduce-scatter over another group and of other bytes.
  const GemmShape s{1, 64, 32, 16};
  Communication rs{CommKind::kReduceScatter, CommGroup::kTensor, bytes(4096)};
  const KernelId g0 = b.add(gemm_kernel("t0.gemm", KernelKind::kGemm, Phase::kForward,
                                        DataType::kFp16, s, {}));
  const KernelId r0 = b.add(comm_kernel("t0.rs", Phase::kForward, DataType::kFp16, rs, {g0}));
  const KernelId g1 = b.add(gemm_kernel("t1.gemm", KernelKind::kGemm, Phase::kBackwardData,
                                        DataType::kFp16, s, {r0}));
  const KernelId r1 = b.add(comm_kernel("t1.rs", Phase::kBackwardData, DataType::kFp16, rs, {g1}));
  const KernelId other = b.add(gemm_kernel("other", KernelKind::kGemm, Phase::kForward,
                                           DataType::kFp16, GemmShape{1, 64, 32, 8}, {}));
  const KernelId bf16 = b.add(gemm_kernel("bf16", KernelKind::kGemm, Phase::kForward,
                                          DataType::kBf16, s, {}));
  rs.group = CommGroup::kData;
  const KernelId data = b.add(comm_kernel("data.rs", Phase::kForward, DataType::kFp16, rs, {}));
  rs.group = CommGroup::kTensor;
  rs.bytes = bytes(8192);
  const KernelId bigger = b.add(comm_kernel("big.rs", Phase::kForward, DataType::kFp16, rs, {}));
  Kernel epilogue = gemm_kernel("bias", KernelKind::kGemm, Phase::kForward, DataType::kFp16, s, {});
  epilogue.flops += flops(64 * 32);  // a fused bias add: same shape, more work
  const KernelId fused = b.add(epilogue);
  const ComputeGraph g = std::move(b).build();
  // Numbered in order of first appearance: gemm 0, rs 1, then one new class per distinct kernel.
  CHECK(g.timing_class(g0) == 0);
  CHECK(g.timing_class(r0) == 1);
  CHECK(g.timing_class(g1) == 0);
  CHECK(g.timing_class(r1) == 1);
  CHECK(g.timing_class(other) == 2);
  CHECK(g.timing_class(bf16) == 3);
  CHECK(g.timing_class(data) == 4);
  CHECK(g.timing_class(bigger) == 5);
  CHECK(g.timing_class(fused) == 6);
  CHECK(g.timing_classes() == 7);
  // Each class's first kernel, in order of appearance.
  const std::vector<KernelId> firsts{g0, r0, other, bf16, data, bigger, fused};
  for (std::uint32_t c = 0; c < 7; ++c) CHECK(g.class_first(c) == firsts[c]);
  // Passes: the forward kernels, then the backward ones (t1's GEMM and reduce-scatter), each
  // step with its class and kind.
  const auto ids = [&](int p) {
    std::vector<KernelId> out;
    for (const ComputeGraph::PassStep& st : g.pass_steps(p)) {
      CHECK(st.cls == g.timing_class(st.id));
      CHECK((st.kind == ComputeGraph::StepKind::kCompute) == !g.kernel(st.id).comm.has_value());
      out.push_back(st.id);
    }
    return out;
  };
  CHECK(ids(0) == std::vector<KernelId>{g0, r0, other, bf16, data, bigger, fused});
  CHECK(ids(1) == std::vector<KernelId>{g1, r1});
  CHECK(ids(2).empty());
  CHECK(g.pass(g1) == 1);
  // Dependencies that can delay a kernel: none here. r0 (a blocking collective) waits on g0
  // and r1 on g1, but each input ran on the compute stream just before it; g1's input r0 is
  // the forward's.
  for (int p = 0; p < 2; ++p) {
    for (const ComputeGraph::PassStep& st : g.pass_steps(p)) CHECK(st.deps_begin == st.deps_end);
  }
  CHECK(ComputeGraph::pass_of(Phase::kBackwardWeight) == 1);
  CHECK(ComputeGraph::pass_of(Phase::kUpdate) == 2);
}

TEST_CASE("pass steps: ring transfers listed for their consumers, from any pass", "[graph]") {
  // A key/value ring of 3 steps in the forward feeding a forward kernel, and the same ring
  // named by a backward kernel: each consumer lists it with its steps; an overlapped
  // collective is its own kind.
  ComputeGraphBuilder b;
  Communication ring{CommKind::kSendRecv, CommGroup::kContext, bytes(4096), false, 3};
  const KernelId r = b.add(comm_kernel("ring", Phase::kForward, DataType::kBf16, ring, {}));
  const KernelId f = b.add(stream_kernel("fwd", KernelKind::kElementwise, Phase::kForward,
                                         DataType::kBf16, flops(1), bytes(2), bytes(2), {r}));
  Communication side{CommKind::kAllGather, CommGroup::kTensor, bytes(4096), true};
  const KernelId o = b.add(comm_kernel("side", Phase::kBackwardData, DataType::kBf16, side, {f}));
  const KernelId k = b.add(stream_kernel("bwd", KernelKind::kElementwise, Phase::kBackwardData,
                                         DataType::kBf16, flops(1), bytes(2), bytes(2), {r, o}));
  const ComputeGraph g = std::move(b).build();
  using Kind = ComputeGraph::StepKind;
  REQUIRE(g.pass_steps(0).size() == 2);
  REQUIRE(g.pass_steps(1).size() == 2);
  CHECK(g.pass_steps(0)[0].kind == Kind::kRingComm);
  CHECK(g.pass_steps(1)[0].kind == Kind::kOverlappedComm);
  const ComputeGraph::PassStep& fs = g.pass_steps(0)[1];
  CHECK(fs.id == f);
  CHECK(fs.deps_end - fs.deps_begin == 1);  // the ring (passed through, off the stream)
  REQUIRE(fs.rings_end - fs.deps_end == 1);
  CHECK(g.step_deps()[fs.deps_end].id == r);
  CHECK(g.step_deps()[fs.deps_end].ring_steps == 3.0);
  const ComputeGraph::PassStep& ks = g.pass_steps(1)[1];
  CHECK(ks.id == k);
  CHECK(ks.deps_end - ks.deps_begin == 1);  // the side collective; the ring is the forward's
  CHECK(g.step_deps()[ks.deps_begin].id == o);
  REQUIRE(ks.rings_end - ks.deps_end == 1);
  CHECK(g.step_deps()[ks.deps_end].id == r);
}
