// Kernel-parallel and pipeline partitions of the LSTM LM graph (DeepFlow RC and CR,
// deepflow-reference.md §3.8), checked against hand-computed counts.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

double fl(Flops f) { return f.si(); }

// A small LM whose shapes divide by every grid used below: B 8, S 3, D 4, V 16, L 2, fp16.
LstmSpec small() { return LstmSpec{8, 3, 4, 16, 2, DataType::kFp16, Optimizer::kSgd}; }
// A larger one for FLOP ratios: B 64, S 5, D 32, V 96, L 2.
LstmSpec medium() { return LstmSpec{64, 5, 32, 96, 2, DataType::kFp16, Optimizer::kSgd}; }

LstmPartition rc(int kp1, int kp2) {
  LstmPartition p;
  p.split = GemmSplit::kRowColumn;
  p.kp1 = kp1;
  p.kp2 = kp2;
  return p;
}
LstmPartition cr(int kp1) {
  LstmPartition p;
  p.split = GemmSplit::kColumnRow;
  p.kp1 = kp1;
  return p;
}

// Communication of the kernels whose names start with `prefix`, by (group, kind).
struct Comms {
  std::map<std::pair<CommGroup, CommKind>, int> count;
  std::map<std::pair<CommGroup, CommKind>, double> bytes;
  int total = 0;
  [[nodiscard]] int n(CommGroup g, CommKind k) const {
    const auto it = count.find({g, k});
    return it == count.end() ? 0 : it->second;
  }
  [[nodiscard]] double b(CommGroup g, CommKind k) const {
    const auto it = bytes.find({g, k});
    return it == bytes.end() ? 0.0 : it->second;
  }
};

Comms comms(const ComputeGraph& g, const std::string& prefix = "") {
  Comms c;
  for (const Kernel& k : g.kernels()) {
    if (!k.comm || k.name.rfind(prefix, 0) != 0) continue;
    ++c.count[{k.comm->group, k.comm->kind}];
    c.bytes[{k.comm->group, k.comm->kind}] += k.comm->bytes.in(units::bytes);
    ++c.total;
  }
  return c;
}

const Kernel& named(const ComputeGraph& g, const std::string& name) {
  for (const Kernel& k : g.kernels()) {
    if (k.name == name) return k;
  }
  FAIL("no kernel " << name);
  return g.kernels().front();
}

bool has(const ComputeGraph& g, const std::string& name) {
  for (const Kernel& k : g.kernels()) {
    if (k.name == name) return true;
  }
  return false;
}

double comm_bytes(const ComputeGraph& g) {
  double b = 0;
  for (const Kernel& k : g.kernels()) {
    if (k.comm) b += k.comm->bytes.in(units::bytes);
  }
  return b;
}

void check_identical(const ComputeGraph& a, const ComputeGraph& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.parameters().size() == b.parameters().size());
  for (std::size_t i = 0; i < a.parameters().size(); ++i) {
    CHECK(a.parameters()[i].name == b.parameters()[i].name);
    CHECK(a.parameters()[i].layer == b.parameters()[i].layer);
    CHECK(a.parameters()[i].elements == b.parameters()[i].elements);
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Kernel& x = a.kernels()[i];
    const Kernel& y = b.kernels()[i];
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.phase == y.phase);
    CHECK(x.layer == y.layer);
    CHECK(x.step == y.step);
    CHECK(x.gemm == y.gemm);
    CHECK(x.comm.has_value() == y.comm.has_value());
    CHECK(x.flops.si() == y.flops.si());
    CHECK(x.bytes_read.si() == y.bytes_read.si());
    CHECK(x.bytes_written.si() == y.bytes_written.si());
    CHECK(x.weight == y.weight);
    CHECK(x.deps == y.deps);
  }
}

}  // namespace

TEST_CASE("LSTM default partition is the unpartitioned graph", "[graph][lstm]") {
  const LstmSpec s = small();
  const ComputeGraph whole = build_lstm_graph(s);
  check_identical(whole, build_lstm_graph(s, LstmPartition{}));
  // Groups of one device communicate nothing and shard nothing.
  check_identical(whole, build_lstm_graph(s, cr(1)));
  check_identical(whole, build_lstm_graph(s, rc(1, 1)));
  // The unpartitioned closed forms (test_workload.cpp's): 7 forward kernels per step
  // (embedding, 2·(GEMM + pointwise), softmax GEMM + pointwise), 12 backward (softmax
  // pointwise + 2 GEMMs, 2·(pointwise + 2 GEMMs + sum), embedding), 4 updates: 3·19 + 4 = 61.
  CHECK(whole.size() == 61);
  CHECK(comms(whole).total == 0);
  const double B = 8, S = 3, D = 4, V = 16, L = 2;
  CHECK(fl(whole.gemm_flops()) == Approx(S * (L * 48.0 * B * D * D + 6.0 * B * D * V)));
  // 4·16 + 9·16·2 + 5·16 = 432 parameters.
  CHECK(whole.parameter_count() == 432);
}

TEST_CASE("LSTM RC and CR divide every GEMM by the group size", "[graph][lstm]") {
  const LstmSpec s = medium();
  const ComputeGraph whole = build_lstm_graph(s);
  const double full = fl(whole.gemm_flops());
  const auto gemm_phase = [](const ComputeGraph& g, Phase p) {
    double f = 0;
    for (const Kernel& k : g.kernels()) {
      if (k.gemm && k.phase == p) f += fl(k.gemm->flops());
    }
    return f;
  };
  for (const auto& [part, devices] : {std::pair{rc(2, 4), 8.0}, std::pair{rc(4, 1), 4.0},
                                      std::pair{rc(1, 2), 2.0}, std::pair{cr(4), 4.0},
                                      std::pair{cr(2), 2.0}}) {
    const ComputeGraph g = build_lstm_graph(s, part);
    CHECK(fl(g.gemm_flops()) == Approx(full / devices).epsilon(1e-12));
    for (const Phase p : {Phase::kForward, Phase::kBackwardData, Phase::kBackwardWeight}) {
      CHECK(gemm_phase(g, p) == Approx(gemm_phase(whole, p) / devices).epsilon(1e-12));
    }
    CHECK(dependencies_precede(g));
    CHECK(is_acyclic(g));
  }
  // Shapes (m, n, k) of layer 0's GEMMs; the cell is C[B×4D] = A[B×2D]·W[2D×4D] = (64, 128, 64).
  // RC 2×4: forward (m/kp1, n/kp2, k) = (32, 32, 64); data gradient (m/kp1, k/kp2, n) =
  // (32, 16, 128); weight gradient (k/kp1, n/kp2, m) = (32, 32, 64).
  const ComputeGraph r = build_lstm_graph(s, rc(2, 4));
  CHECK(*named(r, "t2.l0.cell.fwd").gemm == GemmShape{1, 32, 32, 64});
  CHECK(*named(r, "t2.l0.cell.dgrad").gemm == GemmShape{1, 32, 16, 128});
  CHECK(*named(r, "t2.l0.cell.wgrad").gemm == GemmShape{1, 32, 32, 64});
  // Softmax C[B×V] = A[B×D]·W[D×V] = (64, 96, 32): (32, 24, 32), (32, 8, 96), (16, 24, 64).
  CHECK(*named(r, "t2.softmax.gemm.fwd").gemm == GemmShape{1, 32, 24, 32});
  CHECK(*named(r, "t2.softmax.gemm.dgrad").gemm == GemmShape{1, 32, 8, 96});
  CHECK(*named(r, "t2.softmax.gemm.wgrad").gemm == GemmShape{1, 16, 24, 64});
  // CR 4: forward (m, n, k/kp1) = (64, 128, 16); data gradient (m, k/kp1, n) = (64, 16, 128);
  // weight gradient (k/kp1, n, m) = (16, 128, 64).
  const ComputeGraph c = build_lstm_graph(s, cr(4));
  CHECK(*named(c, "t2.l0.cell.fwd").gemm == GemmShape{1, 64, 128, 16});
  CHECK(*named(c, "t2.l0.cell.dgrad").gemm == GemmShape{1, 64, 16, 128});
  CHECK(*named(c, "t2.l0.cell.wgrad").gemm == GemmShape{1, 16, 128, 64});
  CHECK(*named(c, "t2.softmax.gemm.fwd").gemm == GemmShape{1, 64, 96, 8});
}

TEST_CASE("LSTM RC communication per step and layer", "[graph][lstm]") {
  // B 8, D 4, V 16, p 2, kp1 = kp2 = 2. Cell m 8, n 4D = 16, k 2D = 8.
  const ComputeGraph g = build_lstm_graph(small(), rc(2, 2));
  const auto G1 = CommGroup::kTensor, G2 = CommGroup::kTensorColumns;
  const auto AG = CommKind::kAllGather, SR = CommKind::kSendRecv;
  // One cell of a middle step:
  //   forward  all-gather over kp2 of (m/kp1)·n = 4·16 elements: 128 B;
  //            gate transfer over kp2, 4·(B/kp1)·(4D/kp2)·p = 4·4·8·2 = 256 B
  //   backward gate transfer 256 B; over kp2 the gradient rows (m/kp1)·n·p = 128 B and Wᵀ at
  //            half cost k·n·p/2 = 8·16·2/2 = 128 B; over kp1 Aᵀ at half cost k·m·p/2 =
  //            8·8·2/2 = 64 B and the gradient columns m·(n/kp2)·p = 8·8·2 = 128 B
  const Comms cell = comms(g, "t1.l1.");
  CHECK(cell.total == 7);
  CHECK(cell.n(G2, AG) == 3);
  CHECK(cell.b(G2, AG) == 128 + 128 + 128);
  CHECK(cell.n(G2, SR) == 2);
  CHECK(cell.b(G2, SR) == 2 * 256);
  CHECK(cell.n(G1, AG) == 2);
  CHECK(cell.b(G1, AG) == 64 + 128);
  CHECK(named(g, "t1.l1.cell.fwd.gather").comm->bytes.in(units::bytes) == 128);
  CHECK(named(g, "t1.l1.cell.gates.fwd").comm->bytes.in(units::bytes) == 256);
  CHECK(named(g, "t1.l1.cell.dgrad.gather_weight").comm->bytes.in(units::bytes) == 128);
  CHECK(named(g, "t1.l1.cell.wgrad.gather_input").comm->bytes.in(units::bytes) == 64);
  CHECK(named(g, "t1.l1.cell.wgrad.gather_grad_columns").comm->bytes.in(units::bytes) == 128);
  // Softmax (m 8, n V = 16, k D = 4): forward gather (m/kp1)·n·p = 128 B and the row sums,
  // (B/kp1)·kp2·p = 4·2·2 = 16 B, over kp2; backward over kp2 gradient rows 128 B and Wᵀ
  // 4·16·2/2 = 64 B, over kp1 Aᵀ 4·8·2/2 = 32 B and gradient columns 8·8·2 = 128 B.
  const Comms sm = comms(g, "t1.softmax.");
  CHECK(sm.total == 6);
  CHECK(sm.n(G2, AG) == 4);
  CHECK(sm.b(G2, AG) == 128 + 16 + 128 + 64);
  CHECK(sm.n(G1, AG) == 2);
  CHECK(sm.b(G1, AG) == 32 + 128);
  // Embedding: nothing forward; backward the B × D/kp2 gradient over kp1, 8·2·2 = 32 B.
  const Comms emb = comms(g, "t1.embedding.");
  CHECK(emb.total == 1);
  CHECK(emb.b(G1, AG) == 32);
  // Once per iteration the weight-gradient slices are gathered over kp1 into k × n/kp2:
  // cells 8·8·2 = 128 B each, softmax 4·8·2 = 64 B, in the update phase.
  CHECK(named(g, "l0.wgrad.gather").comm->bytes.in(units::bytes) == 128);
  CHECK(named(g, "l1.wgrad.gather").phase == Phase::kUpdate);
  CHECK(named(g, "softmax.wgrad.gather").comm->bytes.in(units::bytes) == 64);
  // The whole graph: S = 3 steps of 2 cells, a softmax and an embedding, plus 3 gathers.
  CHECK(comms(g).total == 3 * (2 * 7 + 6 + 1) + 3);
  // Forward chain: GEMM → gather over kp2 → gate transfer → pointwise.
  const Kernel& pw = named(g, "t1.l1.cell.pointwise.fwd");
  REQUIRE(pw.deps.size() == 1);
  CHECK(g.kernel(pw.deps[0]).name == "t1.l1.cell.gates.fwd");
  CHECK(g.kernel(g.kernel(pw.deps[0]).deps[0]).name == "t1.l1.cell.fwd.gather");
}

TEST_CASE("LSTM RC with one grid dimension of one device", "[graph][lstm]") {
  // kp2 = 1: only the kp1 collectives (Aᵀ and gradient columns; no gate transfer, no row sums;
  // forward has none at all). Aᵀ 8·8·2/2 = 64 B, gradient columns m·n·p = 8·16·2 = 256 B.
  const ComputeGraph a = build_lstm_graph(small(), rc(2, 1));
  const Comms ca = comms(a, "t1.l0.");
  CHECK(ca.total == 2);
  CHECK(ca.b(CommGroup::kTensor, CommKind::kAllGather) == 64 + 256);
  CHECK(comms(a, "t1.softmax.").total == 2);
  for (const Kernel& k : a.kernels()) {
    if (k.comm) CHECK(k.phase != Phase::kForward);
    if (k.comm) CHECK(k.comm->group == CommGroup::kTensor);
  }
  // kp1 = 1: only the kp2 ones (forward gather, gate transfers, gradient rows, Wᵀ).
  const ComputeGraph b = build_lstm_graph(small(), rc(1, 2));
  const Comms cb = comms(b, "t1.l0.");
  CHECK(cb.total == 5);
  CHECK(cb.n(CommGroup::kTensorColumns, CommKind::kSendRecv) == 2);
  // Gate transfer 4·B·(4D/kp2)·p = 4·8·8·2 = 512 B.
  CHECK(named(b, "t1.l0.cell.gates.bwd").comm->bytes.in(units::bytes) == 512);
  CHECK_FALSE(has(b, "l0.wgrad.gather"));
  CHECK_FALSE(has(b, "t1.embedding.gather.bwd"));
}

TEST_CASE("LSTM CR communication per step and layer", "[graph][lstm]") {
  // B 8, D 4, V 16, p 2, kp1 = 2. Cell m 8, n 16, k 8.
  const ComputeGraph g = build_lstm_graph(small(), cr(2));
  const auto G1 = CommGroup::kTensor;
  // One cell: forward reduce-scatter of C, m·n·p = 8·16·2 = 256 B, and the gate transfer
  // 4·(B/kp1)·(4D/kp2)·p = 4·4·16·2 = 512 B; backward the gate transfer 512 B and the
  // all-gather of the output gradient m·n·p = 256 B. Everything over kp1.
  const Comms cell = comms(g, "t1.l0.");
  CHECK(cell.total == 4);
  CHECK(cell.n(G1, CommKind::kReduceScatter) == 1);
  CHECK(cell.b(G1, CommKind::kReduceScatter) == 256);
  CHECK(cell.n(G1, CommKind::kSendRecv) == 2);
  CHECK(cell.b(G1, CommKind::kSendRecv) == 2 * 512);
  CHECK(cell.n(G1, CommKind::kAllGather) == 1);
  CHECK(cell.b(G1, CommKind::kAllGather) == 256);
  // Softmax (m 8, n 16): reduce-scatter 256 B, row sums B·kp1·p = 8·2·2 = 32 B, gradient
  // all-gather 256 B.
  const Comms sm = comms(g, "t1.softmax.");
  CHECK(sm.total == 3);
  CHECK(sm.b(G1, CommKind::kReduceScatter) == 256);
  CHECK(sm.b(G1, CommKind::kAllGather) == 32 + 256);
  // Embedding (vocabulary-split table): all-gather of the B×D rows forward and of the B×D
  // gradient backward, 8·4·2 = 64 B each.
  const Comms emb = comms(g, "t1.embedding.");
  CHECK(emb.total == 2);
  CHECK(emb.b(G1, CommKind::kAllGather) == 2 * 64);
  // No kp2 group, no per-iteration gathers: 3 steps × (2·4 + 3 + 2).
  CHECK(comms(g).total == 3 * 13);
  for (const Kernel& k : g.kernels()) {
    if (k.comm) CHECK(k.comm->group == G1);
  }
  // Backward chain: pointwise → gate transfer → gradient all-gather → both GEMMs.
  const Kernel& dg = named(g, "t1.l0.cell.dgrad");
  const Kernel& wg = named(g, "t1.l0.cell.wgrad");
  REQUIRE(dg.deps.size() == 1);
  CHECK(wg.deps == dg.deps);
  const Kernel& gather = g.kernel(dg.deps[0]);
  CHECK(gather.name == "t1.l0.cell.grad.gather");
  CHECK(g.kernel(gather.deps[0]).name == "t1.l0.cell.gates.bwd");
  CHECK(g.kernel(g.kernel(gather.deps[0]).deps[0]).name == "t1.l0.cell.pointwise.bwd");
}

TEST_CASE("LSTM partitions divide the pointwise work and shard the parameters",
          "[graph][lstm]") {
  const LstmSpec s = small();
  const double B = 8, D = 4, V = 16, p = 2;
  const ComputeGraph whole = build_lstm_graph(s);
  // Per device: CR the k/kp1 × n weight and n/kp1 bias slices and a V/kp1 × D table, so
  // 432/kp1; RC k × n/kp2 and n/kp2 (replicated over kp1) and V × D/kp2, so 432/kp2.
  CHECK(build_lstm_graph(s, cr(2)).parameter_count() == 216);
  CHECK(build_lstm_graph(s, cr(4)).parameter_count() == 108);
  CHECK(build_lstm_graph(s, rc(2, 2)).parameter_count() == 216);
  CHECK(build_lstm_graph(s, rc(2, 4)).parameter_count() == 108);
  CHECK(build_lstm_graph(s, rc(4, 1)).parameter_count() == 432);
  const ComputeGraph r = build_lstm_graph(s, rc(2, 4));
  // Cell: (2D+1)·4D/kp2 = 9·16/4 = 36; SGD updates over exactly those: 3 FLOPs each.
  CHECK(fl(named(r, "l1.update").flops) == 3.0 * 36);
  CHECK(fl(r.flops(Phase::kUpdate)) == 3.0 * 108);
  CHECK(fl(build_lstm_graph(s, cr(2)).flops(Phase::kUpdate)) == 3.0 * 216);

  // Pointwise: 1/(kp1·kp2) of each stream, as the GEMM outputs (RC 2×4: 8 devices).
  const double g = 8;
  CHECK(fl(named(r, "t1.l0.cell.pointwise.fwd").flops) == 5.0 * B * 4 * D / g);
  CHECK(named(r, "t1.l0.cell.pointwise.fwd").bytes_read.in(units::bytes) ==
        8.0 * B * 4 * D * p / g);
  CHECK(fl(named(r, "t1.l0.cell.pointwise.bwd").flops) == 5.0 * B * D / g);
  CHECK(fl(named(r, "t1.l0.cell.wgrad.accumulate").flops) == 2.0 * D * 4 * D / g);
  CHECK(fl(named(r, "t1.softmax.fwd").flops) == B * (3 * V - 1) / g);
  CHECK(fl(named(r, "t1.softmax.bwd").flops) == 5.0 * B * V / g);
  // Embedding RC: B/kp1 ids and B/kp1 rows of D/kp2 forward; backward all B rows of D/kp2.
  CHECK(named(r, "t1.embedding.fwd").bytes_read.in(units::bytes) == 4.0 * 4 + 4 * 1 * p);
  CHECK(fl(named(r, "t1.embedding.bwd").flops) == B * D / 4);
  // Embedding CR 2: all B ids, B/kp1 owned rows of D forward; B·D/kp1 adds backward.
  const ComputeGraph c = build_lstm_graph(s, cr(2));
  CHECK(named(c, "t1.embedding.fwd").bytes_written.in(units::bytes) == B * D * p / 2);
  CHECK(named(c, "t1.embedding.fwd").bytes_read.in(units::bytes) == B * 4 + B * D * p / 2);
  CHECK(fl(named(c, "t1.embedding.bwd").flops) == B * D / 2);
  // With every stream divided by the group, CR 2's non-GEMM forward FLOPs are half the
  // whole graph's (no GEMM epilogues here).
  const auto non_gemm = [](const ComputeGraph& x, Phase ph) {
    double f = 0;
    for (const Kernel& k : x.kernels()) {
      if (!k.gemm && k.phase == ph) f += fl(k.flops);
    }
    return f;
  };
  CHECK(non_gemm(c, Phase::kForward) == Approx(non_gemm(whole, Phase::kForward) / 2));
  CHECK(non_gemm(c, Phase::kBackwardWeight) ==
        Approx(non_gemm(whole, Phase::kBackwardWeight) / 2));
}

TEST_CASE("LSTM pipeline stages partition the graph", "[graph][lstm]") {
  LstmSpec s = small();
  s.layers = 4;
  struct Stage {
    int first, layers;
    bool emb, sm;
  };
  // The reference's placements: lp > 2 puts the embedding and the softmax on stages of their
  // own; lp = 2 splits the layers with the embedding first and the softmax last.
  const std::vector<std::vector<Stage>> placements{
      {{0, 0, true, false}, {0, 2, false, false}, {2, 2, false, false}, {0, 0, false, true}},
      {{0, 2, true, false}, {2, 2, false, true}},
      {{0, 1, true, false}, {1, 3, false, true}}};
  for (const LstmPartition& base : {LstmPartition{}, rc(2, 2), cr(2)}) {
    const ComputeGraph whole = build_lstm_graph(s, base);
    for (const auto& stages : placements) {
      double gemm = 0, flops = 0, bytes = 0;
      std::size_t kernels = 0;
      std::int64_t params = 0;
      for (const Stage& st : stages) {
        LstmPartition part = base;
        part.first_layer = st.first;
        part.layers = st.layers;
        part.embedding = st.emb;
        part.softmax = st.sm;
        const ComputeGraph g = build_lstm_graph(s, part);
        CHECK(dependencies_precede(g));
        CHECK(is_acyclic(g));
        gemm += fl(g.gemm_flops());
        flops += fl(g.total_flops());
        bytes += comm_bytes(g);
        kernels += g.size();
        params += g.parameter_count();
        for (const Kernel& k : g.kernels()) {
          CHECK((k.layer == -1 || (k.layer >= st.first && k.layer < st.first + st.layers)));
        }
        for (const ParameterTensor& t : g.parameters()) {
          CHECK((t.layer == -1 || (t.layer >= st.first && t.layer < st.first + st.layers)));
        }
        // A stage without the embedding starts from no dependency.
        if (!st.emb) CHECK(g.kernels().front().deps.empty());
        // Without the softmax the top layer's last-step backward has no gradient input: it
        // waits only for the stage's forward.
        if (!st.sm && st.layers > 0) {
          const std::string top = "t2.l" + std::to_string(st.first + st.layers - 1) + ".";
          const Kernel& pw = named(g, top + "cell.pointwise.bwd");
          REQUIRE(pw.deps.size() == 1);
          CHECK(g.kernel(pw.deps[0]).phase == Phase::kForward);
        }
      }
      CHECK(gemm == Approx(fl(whole.gemm_flops())).epsilon(1e-12));
      CHECK(flops == Approx(fl(whole.total_flops())).epsilon(1e-12));
      CHECK(bytes == Approx(comm_bytes(whole)).epsilon(1e-12));
      CHECK(kernels == whole.size());
      CHECK(params == whole.parameter_count());
    }
  }
  // A middle stage carries global layer ids and names.
  LstmPartition mid;
  mid.first_layer = 2;
  mid.layers = 2;
  mid.embedding = false;
  mid.softmax = false;
  const ComputeGraph g = build_lstm_graph(s, mid);
  CHECK(named(g, "t0.l2.cell.fwd").layer == 2);
  CHECK(named(g, "l3.update").layer == 3);
  CHECK(g.parameters().front().name == "lstm2.weight");
  CHECK_FALSE(has(g, "t0.l0.cell.fwd"));
  CHECK_FALSE(has(g, "t0.embedding.fwd"));
  CHECK_FALSE(has(g, "t0.softmax.fwd"));
}

}  // namespace pathfinder

namespace pathfinder {
namespace {

LstmSpec batched(LstmSpec s) {
  s.batching = LstmBatching::kSequence;
  return s;
}

// Bytes moved per (group, kind) over the whole graph.
std::map<std::pair<CommGroup, CommKind>, double> comm_totals(const ComputeGraph& g) {
  return comms(g).bytes;
}

}  // namespace

TEST_CASE("LSTM sequence batching: one softmax and one weight gradient per layer over S·B rows",
          "[graph][lstm]") {
  // medium(): B 64, S 5, D 32, V 96, L 2; S·B = 320 rows.
  const LstmSpec s = medium();
  const ComputeGraph step = build_lstm_graph(s);
  const ComputeGraph seq = build_lstm_graph(batched(s));
  CHECK(dependencies_precede(seq));
  CHECK(is_acyclic(seq));
  // Softmax C[S·B×V] = A[S·B×D]·W[D×V]: (320, 96, 32), dgrad (320, 32, 96), wgrad (32, 96, 320).
  CHECK(*named(seq, "softmax.gemm.fwd").gemm == GemmShape{1, 320, 96, 32});
  CHECK(*named(seq, "softmax.gemm.dgrad").gemm == GemmShape{1, 320, 32, 96});
  CHECK(*named(seq, "softmax.gemm.wgrad").gemm == GemmShape{1, 32, 96, 320});
  // The cell's weight gradient dW[2D×4D] over all rows: (64, 128, 320); forward stays per step.
  CHECK(*named(seq, "l1.cell.wgrad").gemm == GemmShape{1, 64, 128, 320});
  CHECK(*named(seq, "t4.l1.cell.fwd").gemm == GemmShape{1, 64, 128, 64});
  CHECK_FALSE(has(seq, "t0.softmax.gemm.fwd"));
  CHECK_FALSE(has(seq, "t0.l0.cell.wgrad"));
  CHECK_FALSE(has(seq, "t0.l0.cell.wgrad.accumulate"));
  // Kernels: per step embedding fwd/bwd and per layer cell fwd GEMM + pointwise, pointwise bwd
  // + dgrad: S·(2 + 4L) = 50; softmax fwd GEMM + pointwise, bwd pointwise + 2 GEMMs: 5;
  // one weight gradient per layer: 2; updates: 4. 61 in all.
  CHECK(seq.size() == 61);
  // The same GEMM work: each S-step sum of (m, n, k) products becomes one product with S·m
  // rows (or an S·m inner dimension).
  CHECK(fl(seq.gemm_flops()) == Approx(fl(step.gemm_flops())).epsilon(1e-12));
  // All that goes is the per-step weight-gradient sums, 2D·4D adds per step and layer.
  const double D = 32, S = 5, L = 2;
  CHECK(fl(step.total_flops()) - fl(seq.total_flops()) ==
        Approx(S * L * 2.0 * D * 4.0 * D).epsilon(1e-12));
  // The softmax's dependencies: its forward reads every step's top layer output.
  const Kernel& logits = named(seq, "softmax.gemm.fwd");
  CHECK(logits.deps.size() == 5);
  for (const KernelId d : logits.deps) {
    CHECK(seq.kernel(d).name.find(".l1.cell.pointwise.fwd") != std::string::npos);
  }
}

TEST_CASE("LSTM sequence batching moves the same bytes, except RC's weight gathers",
          "[graph][lstm]") {
  const LstmSpec s = medium();
  // CR: every collective is linear in the rows m, so S steps of B rows move what S·B rows do.
  {
    const auto a = comm_totals(build_lstm_graph(s, cr(4)));
    const auto b = comm_totals(build_lstm_graph(batched(s), cr(4)));
    REQUIRE(a.size() == b.size());
    for (const auto& [key, bytes] : a) CHECK(b.at(key) == Approx(bytes).epsilon(1e-12));
  }
  // RC 2×2: the softmax data gradient gathers half of Wᵀ's columns once instead of per step,
  // 0.5·k·n·p = 0.5·32·96·2 = 3072 bytes over kp2, S − 1 = 4 times fewer; all else linear in m.
  const auto a = comm_totals(build_lstm_graph(s, rc(2, 2)));
  const auto b = comm_totals(build_lstm_graph(batched(s), rc(2, 2)));
  const std::pair key{CommGroup::kTensorColumns, CommKind::kAllGather};
  CHECK(a.at(key) - b.at(key) == Approx(4 * 3072.0).epsilon(1e-12));
  const std::pair rows{CommGroup::kTensor, CommKind::kAllGather};
  CHECK(b.at(rows) == Approx(a.at(rows)).epsilon(1e-12));
}

TEST_CASE("LSTM sequence batching on pipeline stages", "[graph][lstm]") {
  LstmSpec s = batched(small());
  s.layers = 4;
  const ComputeGraph whole = build_lstm_graph(s, cr(2));
  double gemm = 0;
  std::size_t kernels = 0;
  // The reference's lp = 4 placement: embedding, two layer stages, softmax.
  for (const auto& [first, layers, emb, sm] :
       {std::tuple{0, 0, true, false}, std::tuple{0, 2, false, false},
        std::tuple{2, 2, false, false}, std::tuple{0, 0, false, true}}) {
    LstmPartition part = cr(2);
    part.first_layer = first;
    part.layers = layers;
    part.embedding = emb;
    part.softmax = sm;
    const ComputeGraph g = build_lstm_graph(s, part);
    CHECK(dependencies_precede(g));
    CHECK(is_acyclic(g));
    gemm += fl(g.gemm_flops());
    kernels += g.size();
  }
  CHECK(gemm == Approx(fl(whole.gemm_flops())).epsilon(1e-12));
  CHECK(kernels == whole.size());
}

}  // namespace pathfinder
