// The DeepFlow paper's LSTM language model (paper §8; deepflow-reference.md §3.8), one training
// iteration of batch B over S unrolled steps: embedding, L LSTM layers, a softmax over V.
//
// Kernel counts follow the reference code (perf.py getCf/getCb/getSoftmax_f/getSoftmax_b/
// getEmbedding_f, no projection layer) so the two can be compared:
//   cell forward      GEMM (m, k, n) = (B, 2D, 4D); pointwise 5 FLOPs and 13 accesses per element
//                     of the B×4D gates (three two-input ops, 3 accesses each, and two one-input
//                     ops, 2 each: 8 reads, 5 writes)
//   cell backward     GEMMs (B, 4D, 2D) for the data gradient and (2D, B, 4D) for the weight
//                     gradient; pointwise 5·B·D FLOPs, 13·B·D accesses (8 reads, 5 writes); the
//                     weight gradient summed over steps, 2D·4D adds, 3 accesses each
//   softmax forward   GEMM (B, D, V); B·(3V−1) FLOPs, 7·B·V accesses (4 reads, 3 writes)
//   softmax backward  GEMMs (D, B, V) and (B, V, D); 5·B·V FLOPs, 11·B·V accesses (7 reads,
//                     4 writes)
//   embedding         gather B rows of D (reference: 2·B·D elements) plus the B int32 token ids
// The embedding backward is a scatter-add of B gradient rows into the table gradient: read the
// B·D gradient and the B·D table-gradient rows, write the B·D rows back, B·D adds (the reference
// counts 2·B·D accesses and no FLOPs).
// Parameters: V·D + (2D+1)·4D·L + (D+1)·V (the reference's tot_param without projection).
// Batched over the sequence (LstmSpec::batching kSequence, as frameworks run the model): the
// softmax (GEMM (S·B, D, V), pointwise, backward) runs once after the last step's top cell, its
// data gradient feeding every step's backward, and each layer's weight gradient is one GEMM
// (2D, S·B, 4D) after the last backward step, with no per-step sums; names drop the "t<step>."
// prefix. Collectives follow the same rules with m = S·B.
//
// Kernel parallelism (LstmPartition; reference perf.py getDistGEMM_{f,b}_kp{1,2}, getC{f,b}_kp*,
// getSoftmax_{f,b}_kp*, getEmbedding_{f,b}_kp*, getDataParallelReduction). The graph is one
// device's. Below, a GEMM is C[m×n] = A[m×k]·W[k×n] (cell: m B, k 2D, n 4D; softmax: m B, k D,
// n V), shapes are our (m, n, k), p bytes per element, and byte counts are
// Communication::bytes, the buffer each member holds (all-gather: gathered; reduce-scatter:
// input; send-recv: what moves). A collective over a group of one device is left out.
//   CR (column-row, outer product; group kp1 = CommGroup::kTensor; kp2 must be 1):
//     forward   GEMM (m, n, k/kp1), then reduce-scatter of C: m·n·p
//     backward  all-gather of the output gradient: m·n·p; data gradient (m, k/kp1, n), the
//               device's k/kp1 columns of dA; weight gradient (k/kp1, n, m), its W slice.
//               (The reference shards the inner dimension instead, (m, n/kp1, k) and
//               (k, m/kp1, n): the same FLOPs, but partial sums no collective would finish.)
//   RC (row-column, inner product; kp1 = kTensor, kp2 = kTensorColumns):
//     forward   GEMM (m/kp1, n/kp2, k), then all-gather over kp2 of the m/kp1 × n output:
//               (m/kp1)·n·p; nothing over kp1
//     backward  data gradient (m/kp1, k/kp2, n) after all-gathers over kp2 of the gradient
//               rows, (m/kp1)·n·p, and of Wᵀ's columns, k·n·p/2; weight gradient
//               (k/kp1, n/kp2, m) after all-gathers over kp1 of Aᵀ's rows, k·m·p/2, and of the
//               gradient columns, m·(n/kp2)·p. The two halved buffers are the reference's "half
//               cost" (it halves the whole collective time; halving the buffer halves the
//               bandwidth term but not the latency term).
//     once per iteration, before the update: the weight-gradient slices (k/kp1 × n/kp2) are
//               all-gathered over kp1 into the k × n/kp2 slice the device holds, k·(n/kp2)·p,
//               in Phase::kUpdate (the reference's getDataParallelReduction "gather col(w)").
//   Gate transfer (cell only): the gate pointwise work needs the four gate slices of a hidden
//     unit together; after the forward GEMM's collective and again after the backward
//     pointwise (returning the gate gradients to the GEMM's layout) a send-recv of
//     4·(B/kp1)·(4D/kp2)·p over the kp link (CR: kTensor; RC: kTensorColumns). The reference
//     gates RC's transfer on kp_softmax_dim2 > 1; here it is on the cell's own kp2 > 1 (with
//     kp2 = 1 every device holds whole gate rows). Its RC backward moves B·(4D/kp2)·4·p; here
//     the device's B/kp1 rows, as forward. Its extra memory round trip is the cost model's.
//   Pointwise work is divided as the outputs are: the device holds 1/(kp1·kp2) of each GEMM
//     output (CR: m × n/kp1; RC: m/kp1 × n/kp2), so cell forward and backward pointwise,
//     softmax forward and backward and the cell weight-gradient sum (over the k/kp1 × n/kp2
//     slice the GEMM made) are the unpartitioned counts / (kp1·kp2). (The reference's
//     partitioned cell backward uses B·4D where its unpartitioned one uses B·D; we divide
//     ours. Its RC weight-gradient sum covers 2D·4D/kp2.)
//   Softmax row sums: the row normalisation spans devices; after the softmax forward an
//     all-gather of one partial sum per row held per member: CR B·kp1·p over kp1, RC
//     (B/kp1)·kp2·p over kp2 (the reference: B·p for CR, the same for RC).
//   Embedding (the reference's layouts): CR splits the table by vocabulary rows, V/kp1 × D: the
//     device reads the B ids and gathers the rows it owns, B/kp1 of D expected, then an
//     all-gather over kp1 of B·D·p; backward an all-gather of the B×D gradient, B·D·p, and a
//     scatter-add into the owned rows (B·D/kp1). RC splits it by columns, V × D/kp2
//     (replicated over kp1): forward B/kp1 ids and rows of D/kp2, no communication (as the
//     reference); backward an all-gather over kp1 of the B × D/kp2 gradient, B·(D/kp2)·p, and
//     a scatter-add of all B rows of D/kp2 into the replica.
//   Parameters per device: CR k/kp1 × n weights and n/kp1 biases, RC k × n/kp2 and n/kp2;
//     the table V·D/kp1 (CR) or V·D/kp2 (RC). Updates run over them.
// Divisibility (PF_ASSERT): CR kp1 | D and kp1 | V; RC kp1 | B, kp1 | D, kp2 | D, kp2 | V.
//
// Pipeline stages (first_layer, layers, embedding, softmax) as GptPartition: layer ids and
// names are global (offset by first_layer). Without the embedding the bottom layer's forward
// starts from no dependency; without the softmax the top layer's backward has no gradient
// dependency and only waits for the stage's forward (the stored gates), as the unpartitioned
// graph's backward waits for the whole forward.
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

using Deps = std::vector<KernelId>;

double as_double(std::int64_t v) { return static_cast<double>(v); }

// Kernel names: t<step>.l<layer>.what; without the step (-1, once per sequence) or the layer.
std::string at(int layer, int step, const std::string& what) {
  std::string s = step >= 0 ? "t" + std::to_string(step) + "." : "";
  if (layer >= 0) s += "l" + std::to_string(layer) + ".";
  return s + what;
}

void add_to(Deps& deps, std::optional<KernelId> id) {
  if (id) deps.push_back(*id);
}

Kernel in_step(Kernel k, int layer, int step) {
  k.layer = layer;
  k.step = step;
  return k;
}

// One distributed GEMM C[m×n] = A[m×k]·W[k×n]; its kernels are named base.fwd, base.dgrad,
// base.wgrad.
struct DistGemm {
  std::string base;
  int layer;  // global layer id, -1 outside the layers
  std::int64_t m, n, k;
  ParamId weight;
};

class LstmBuilder {
 public:
  LstmBuilder(const LstmSpec& s, const LstmPartition& part)
      : s_(s),
        part_(part),
        cr_(part.split == GemmSplit::kColumnRow),
        rc_(part.split == GemmSplit::kRowColumn),
        kp1_(part.kp1),
        kp2_(part.kp2),
        devices_(static_cast<double>(part.kp1) * static_cast<double>(part.kp2)),
        wdiv_(part.split == GemmSplit::kColumnRow ? part.kp1 : part.kp2),
        B_(as_double(s.batch)),
        D_(as_double(s.hidden)),
        V_(as_double(s.vocabulary)),
        p_(bytes_per_element(s.precision)),
        dt_(s.precision) {}

  ComputeGraph build();

 private:
  [[nodiscard]] int size_of(CommGroup g) const { return g == CommGroup::kTensor ? kp1_ : kp2_; }
  // A communication step over `g` after `after`; none (nullopt) for a group of one device.
  // Outside the steps (step -1) `what` is the whole name.
  std::optional<KernelId> collective(int layer, int step, const std::string& what, Phase ph,
                                     CommKind kind, CommGroup g, Bytes bytes, const Deps& after) {
    if (size_of(g) == 1) return std::nullopt;
    return b_.add(in_step(comm_kernel(at(layer, step, what), ph, dt_,
                                      Communication{kind, g, bytes, false}, after),
                          layer, step));
  }
  // As collective, but the dependencies of what follows: the step, or `after` if there is none.
  Deps comm(int layer, int step, const std::string& what, Phase ph, CommKind kind, CommGroup g,
            Bytes bytes, Deps after) {
    const auto id = collective(layer, step, what, ph, kind, g, bytes, after);
    return id ? Deps{*id} : after;
  }
  // Bring the four gate slices of the device's hidden units together (see the file comment).
  Deps gate_transfer(int layer, int step, const std::string& what, Phase ph, Deps after) {
    if (!cr_ && !rc_) return after;
    return comm(layer, step, what, ph, CommKind::kSendRecv,
                cr_ ? CommGroup::kTensor : CommGroup::kTensorColumns,
                4.0 * B_ * 4.0 * D_ * p_ / devices_, std::move(after));
  }
  KernelId stream(int layer, int step, const std::string& what, KernelKind kind, Phase ph,
                  double work, Bytes read, Bytes written, Deps deps) {
    return b_.add(in_step(stream_kernel(at(layer, step, what), kind, ph, dt_, flops(work), read,
                                        written, std::move(deps)),
                          layer, step));
  }
  // The forward GEMM and its collective; returns what the consumer depends on.
  Deps gemm_fwd(const DistGemm& g, int step, Deps deps);
  // The backward pass from the output gradient `grad`: CR first all-gathers it (grad_gather);
  // the data and weight gradients then take the gathered gradient, each with its own RC
  // collectives; the weight gradient also waits for `extra`. gemm_bwd does all three.
  Deps grad_gather(const DistGemm& g, int step, Deps grad);
  KernelId gemm_dgrad(const DistGemm& g, int step, const Deps& grad);
  KernelId gemm_wgrad(const DistGemm& g, int step, const Deps& grad, const Deps& extra);
  // Returns {data gradient, weight gradient}.
  std::pair<KernelId, KernelId> gemm_bwd(const DistGemm& g, int step, const Deps& grad,
                                         const Deps& wgrad_extra) {
    const Deps gathered = grad_gather(g, step, grad);
    const KernelId dg = gemm_dgrad(g, step, gathered);
    return {dg, gemm_wgrad(g, step, gathered, wgrad_extra)};
  }
  // The softmax over sm.m rows (one step's or the sequence's): GEMM, pointwise, row sums;
  // returns the last kernel.
  KernelId softmax_forward(const DistGemm& sm, int step, Deps below) {
    const double rows = as_double(sm.m), V = V_, g = devices_;
    const Bytes p = p_;
    const Deps logits = gemm_fwd(sm, step, std::move(below));
    const KernelId pw = stream(-1, step, "softmax.fwd", KernelKind::kSoftmax, Phase::kForward,
                               rows * (3.0 * V - 1.0) / g, 4.0 * rows * V * p / g,
                               3.0 * rows * V * p / g, logits);
    // One partial sum per row held, from each member of the group that splits the columns.
    const double held = rc_ ? rows / kp1_ : rows;
    const CommGroup cols = cr_ ? CommGroup::kTensor : CommGroup::kTensorColumns;
    return comm(-1, step, "softmax.rowsum.fwd", Phase::kForward, CommKind::kAllGather, cols,
                held * size_of(cols) * p, {pw})
        .front();
  }
  // Its backward: pointwise, then the GEMM's data and weight gradients (the latter also after
  // `extra`). Returns {data gradient, weight gradient}.
  std::pair<KernelId, KernelId> softmax_backward(const DistGemm& sm, int step, Deps deps,
                                                 const Deps& extra) {
    const double rows = as_double(sm.m), V = V_, g = devices_;
    const Bytes p = p_;
    const KernelId pw = stream(-1, step, "softmax.bwd", KernelKind::kSoftmax,
                               Phase::kBackwardData, 5.0 * rows * V / g, 7.0 * rows * V * p / g,
                               4.0 * rows * V * p / g, std::move(deps));
    return gemm_bwd(sm, step, {pw}, extra);
  }
  // RC's once-per-iteration gather of the weight-gradient slices; returns the update's deps.
  Deps wgrad_gather(const DistGemm& g, const std::string& name, Deps after) {
    if (!rc_) return after;
    return comm(g.layer, -1, name, Phase::kUpdate, CommKind::kAllGather, CommGroup::kTensor,
                as_double(g.k) * as_double(g.n / kp2_) * p_, std::move(after));
  }

  const LstmSpec& s_;
  LstmPartition part_;
  bool cr_, rc_;
  int kp1_, kp2_;
  double devices_;  // kp1·kp2: the share of every GEMM output and pointwise stream
  int wdiv_;        // weights split: CR kp1 (rows), RC kp2 (columns)
  double B_, D_, V_;
  Bytes p_;
  DataType dt_;
  ComputeGraphBuilder b_;
};

Deps LstmBuilder::gemm_fwd(const DistGemm& g, int t, Deps deps) {
  GemmShape shape{1, g.m, g.n, g.k};
  if (cr_) shape.k = g.k / kp1_;
  if (rc_) {
    shape.m = g.m / kp1_;
    shape.n = g.n / kp2_;
  }
  Kernel k = gemm_kernel(at(g.layer, t, g.base + ".fwd"), KernelKind::kGemm, Phase::kForward,
                         dt_, shape, std::move(deps));
  k.weight = g.weight;
  Deps out{b_.add(in_step(std::move(k), g.layer, t))};
  if (cr_) {
    return comm(g.layer, t, g.base + ".fwd.reduce_scatter", Phase::kForward,
                CommKind::kReduceScatter, CommGroup::kTensor, as_double(g.m) * as_double(g.n) * p_,
                std::move(out));
  }
  if (rc_) {
    return comm(g.layer, t, g.base + ".fwd.gather", Phase::kForward, CommKind::kAllGather,
                CommGroup::kTensorColumns, as_double(g.m / kp1_) * as_double(g.n) * p_,
                std::move(out));
  }
  return out;
}

Deps LstmBuilder::grad_gather(const DistGemm& g, int t, Deps grad) {
  if (!cr_) return grad;
  return comm(g.layer, t, g.base + ".grad.gather", Phase::kBackwardData, CommKind::kAllGather,
              CommGroup::kTensor, as_double(g.m) * as_double(g.n) * p_, std::move(grad));
}

KernelId LstmBuilder::gemm_dgrad(const DistGemm& g, int t, const Deps& grad) {
  GemmShape shape{1, g.m, g.k, g.n};  // dA[m×k] = dC[m×n]·Wᵀ[n×k]
  Deps deps;
  if (cr_) {
    shape.n = g.k / kp1_;
  } else if (rc_) {
    shape.m = g.m / kp1_;
    shape.n = g.k / kp2_;
    add_to(deps, collective(g.layer, t, g.base + ".dgrad.gather_grad_rows",
                            Phase::kBackwardData, CommKind::kAllGather,
                            CommGroup::kTensorColumns,
                            as_double(g.m / kp1_) * as_double(g.n) * p_, grad));
    add_to(deps, collective(g.layer, t, g.base + ".dgrad.gather_weight", Phase::kBackwardData,
                            CommKind::kAllGather, CommGroup::kTensorColumns,
                            0.5 * as_double(g.k) * as_double(g.n) * p_, grad));
  }
  if (deps.empty()) deps = grad;
  Kernel k = gemm_kernel(at(g.layer, t, g.base + ".dgrad"), KernelKind::kGemm,
                         Phase::kBackwardData, dt_, shape, std::move(deps));
  k.weight = g.weight;
  return b_.add(in_step(std::move(k), g.layer, t));
}

KernelId LstmBuilder::gemm_wgrad(const DistGemm& g, int t, const Deps& grad, const Deps& extra) {
  GemmShape shape{1, g.k, g.n, g.m};  // dW[k×n] = Aᵀ[k×m]·dC[m×n]
  Deps deps;
  if (cr_) {
    shape.m = g.k / kp1_;
  } else if (rc_) {
    shape.m = g.k / kp1_;
    shape.n = g.n / kp2_;
    add_to(deps, collective(g.layer, t, g.base + ".wgrad.gather_input", Phase::kBackwardWeight,
                            CommKind::kAllGather, CommGroup::kTensor,
                            0.5 * as_double(g.k) * as_double(g.m) * p_, grad));
    add_to(deps, collective(g.layer, t, g.base + ".wgrad.gather_grad_columns",
                            Phase::kBackwardWeight, CommKind::kAllGather, CommGroup::kTensor,
                            as_double(g.m) * as_double(g.n / kp2_) * p_, grad));
  }
  if (deps.empty()) deps = grad;
  deps.insert(deps.end(), extra.begin(), extra.end());
  Kernel k = gemm_kernel(at(g.layer, t, g.base + ".wgrad"), KernelKind::kGemm,
                         Phase::kBackwardWeight, dt_, shape, std::move(deps));
  k.weight = g.weight;
  return b_.add(in_step(std::move(k), g.layer, t));
}

ComputeGraph LstmBuilder::build() {
  const std::int64_t Bi = s_.batch, Di = s_.hidden, Vi = s_.vocabulary;
  const int S = static_cast<int>(s_.sequence);
  const int first = part_.first_layer;
  const int L = part_.layers >= 0 ? part_.layers : static_cast<int>(s_.layers) - first;
  const double B = B_, D = D_, g = devices_;
  const Bytes p = p_;
  const Bytes id_bytes = bytes(4);  // int32 token ids

  std::optional<ParamId> emb_w, sm_w;
  if (part_.embedding) emb_w = b_.add_parameter({"embedding.weight", -1, Vi * Di / wdiv_});
  std::vector<DistGemm> cell;
  std::vector<std::int64_t> layer_elements;
  for (int i = 0; i < L; ++i) {
    const int l = first + i;
    const std::string n = "lstm" + std::to_string(l);
    const ParamId w = b_.add_parameter({n + ".weight", l, 2 * Di * 4 * Di / wdiv_});
    const ParamId bias = b_.add_parameter({n + ".bias", l, 4 * Di / wdiv_});
    cell.push_back(DistGemm{"cell", l, Bi, 4 * Di, 2 * Di, w});
    layer_elements.push_back(b_.parameter(w).elements + b_.parameter(bias).elements);
  }
  std::int64_t sm_elements = 0;
  if (part_.softmax) {
    sm_w = b_.add_parameter({"softmax.weight", -1, Di * Vi / wdiv_});
    const ParamId bias = b_.add_parameter({"softmax.bias", -1, Vi / wdiv_});
    sm_elements = b_.parameter(*sm_w).elements + b_.parameter(bias).elements;
  }
  // Per step the softmax GEMM takes the step's B rows; over the sequence all S·B at once.
  const bool sequence = s_.batching == LstmBatching::kSequence;
  const std::int64_t sm_rows = sequence ? S * Bi : Bi;
  const DistGemm sm{"softmax.gemm", -1, sm_rows, Vi, Di, sm_w.value_or(0)};

  // Forward, step by step; within a step, layer by layer.
  std::vector<std::vector<KernelId>> cell_out(static_cast<std::size_t>(L),
                                              std::vector<KernelId>(static_cast<std::size_t>(S)));
  std::vector<KernelId> sm_fwd(static_cast<std::size_t>(S));  // softmax ids (sequence: [0])
  Deps tops;  // what the softmax reads: the top layer's outputs of every step
  for (int t = 0; t < S; ++t) {
    const auto tu = static_cast<std::size_t>(t);
    Deps below;
    if (part_.embedding) {
      // CR: B ids, the owned B/kp1 rows; RC: B/kp1 ids, rows of D/kp2; see the file comment.
      const double ids = rc_ ? B / kp1_ : B;
      Kernel emb = stream_kernel(at(-1, t, "embedding.fwd"), KernelKind::kEmbedding,
                                 Phase::kForward, dt_, flops(0), ids * id_bytes + B * D * p / g,
                                 B * D * p / g, {});
      emb.weight = *emb_w;
      below = {b_.add(in_step(std::move(emb), -1, t))};
      if (cr_) {
        below = comm(-1, t, "embedding.gather.fwd", Phase::kForward, CommKind::kAllGather,
                     CommGroup::kTensor, B * D * p, std::move(below));
      }
    }
    for (int i = 0; i < L; ++i) {
      const auto iu = static_cast<std::size_t>(i);
      const int l = first + i;
      Deps deps = below;
      if (t > 0) deps.push_back(cell_out[iu][tu - 1]);  // h(t-1) and c(t-1)
      Deps gates = gemm_fwd(cell[iu], t, std::move(deps));
      gates = gate_transfer(l, t, "cell.gates.fwd", Phase::kForward, std::move(gates));
      const double e = B * 4.0 * D / g;  // gate elements on this device
      cell_out[iu][tu] = stream(l, t, "cell.pointwise.fwd", KernelKind::kLstmCell,
                                Phase::kForward, 5.0 * e, 8.0 * e * p, 5.0 * e * p,
                                std::move(gates));
      below = {cell_out[iu][tu]};
    }
    if (part_.softmax && !sequence) sm_fwd[tu] = softmax_forward(sm, t, below);
    tops.insert(tops.end(), below.begin(), below.end());
  }
  if (part_.softmax && sequence) sm_fwd[0] = softmax_forward(sm, -1, tops);
  // Every cell and embedding precedes the last step's softmax; the backward pass starts when
  // the forward pass has finished (the reference's simulator does the same).
  const KernelId last_forward = b_.next_id() - 1;

  // Backward, last step first; within a step, top layer first.
  std::vector<KernelId> next_dgrad(static_cast<std::size_t>(L), 0);  // cell data gradient, t+1
  std::vector<KernelId> next_acc(static_cast<std::size_t>(L), 0);    // weight-gradient sum, t+1
  KernelId next_sm_wgrad = 0, next_emb = 0;
  KernelId sm_dgrad = 0;  // sequence: the data gradient of every step's top output
  if (part_.softmax && sequence) {
    Deps sdeps{sm_fwd[0]};
    if (sm_fwd[0] != last_forward) sdeps.push_back(last_forward);
    std::tie(sm_dgrad, next_sm_wgrad) = softmax_backward(sm, -1, std::move(sdeps), {});
  }
  std::vector<Deps> cell_grads(static_cast<std::size_t>(L));  // sequence: every step's
  for (int t = S - 1; t >= 0; --t) {
    const auto tu = static_cast<std::size_t>(t);
    const bool last = (t == S - 1);
    Deps above{last_forward};  // without the softmax: no gradient from above on this stage
    if (part_.softmax && sequence) {
      above = {sm_dgrad};
    } else if (part_.softmax) {
      Deps sdeps{sm_fwd[tu]};
      if (!last) sdeps.push_back(last_forward);
      Deps extra;
      if (!last) extra.push_back(next_sm_wgrad);  // accumulates into the same gradient
      const auto [dg, wg] = softmax_backward(sm, t, std::move(sdeps), extra);
      above = {dg};
      next_sm_wgrad = wg;
    }
    for (int i = L - 1; i >= 0; --i) {
      const auto iu = static_cast<std::size_t>(i);
      const int l = first + i;
      Deps deps = above;
      if (!last) deps.push_back(next_dgrad[iu]);  // gradient of h(t) and c(t) from step t+1
      const KernelId pw = stream(l, t, "cell.pointwise.bwd", KernelKind::kLstmCell,
                                 Phase::kBackwardData, 5.0 * B * D / g, 8.0 * B * D * p / g,
                                 5.0 * B * D * p / g, std::move(deps));
      const Deps grad = gate_transfer(l, t, "cell.gates.bwd", Phase::kBackwardData, {pw});
      if (sequence) {  // the weight gradient waits for every step's gate gradients
        const Deps gathered = grad_gather(cell[iu], t, grad);
        next_dgrad[iu] = gemm_dgrad(cell[iu], t, gathered);
        cell_grads[iu].insert(cell_grads[iu].end(), gathered.begin(), gathered.end());
        above = {next_dgrad[iu]};
        continue;
      }
      const auto [dg, wg] = gemm_bwd(cell[iu], t, grad, {});
      next_dgrad[iu] = dg;
      Deps adeps{wg};
      if (!last) adeps.push_back(next_acc[iu]);
      const double w = 2.0 * D * 4.0 * D / g;  // the weight-gradient slice the GEMM made
      Kernel acc = stream_kernel(at(l, t, "cell.wgrad.accumulate"), KernelKind::kElementwise,
                                 Phase::kBackwardWeight, dt_, flops(w), 2.0 * w * p, w * p,
                                 std::move(adeps));
      acc.weight = cell[iu].weight;
      next_acc[iu] = b_.add(in_step(std::move(acc), l, t));
      above = {dg};
    }
    if (part_.embedding) {
      // CR: gather the whole gradient, scatter-add the owned rows (B·D/kp1); RC: gather the
      // B × D/kp2 gradient over kp1, scatter-add all B rows (B·D/kp2).
      Deps edeps = above;
      if (cr_) {
        edeps = comm(-1, t, "embedding.gather.bwd", Phase::kBackwardWeight,
                     CommKind::kAllGather, CommGroup::kTensor, B * D * p, std::move(edeps));
      } else if (rc_) {
        edeps = comm(-1, t, "embedding.gather.bwd", Phase::kBackwardWeight,
                     CommKind::kAllGather, CommGroup::kTensor, B * D * p / kp2_,
                     std::move(edeps));
      }
      if (!last) edeps.push_back(next_emb);  // scatter-adds into the same table gradient
      const double rows = rc_ ? B * D / kp2_ : B * D / g;  // elements scatter-added
      Kernel eb = stream_kernel(at(-1, t, "embedding.bwd"), KernelKind::kEmbedding,
                                Phase::kBackwardWeight, dt_, flops(rows),
                                B * id_bytes + 2.0 * rows * p, rows * p, std::move(edeps));
      eb.weight = *emb_w;
      next_emb = b_.add(in_step(std::move(eb), -1, t));
    }
  }

  // Sequence: one weight-gradient GEMM per layer over all S·B rows, (2D, 4D, S·B).
  for (int i = 0; sequence && i < L; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    DistGemm whole = cell[iu];
    whole.m = S * Bi;
    next_acc[iu] = gemm_wgrad(whole, -1, cell_grads[iu], {});
  }

  // One optimizer step per parameter group once every gradient is complete.
  if (part_.embedding) {
    (void)b_.add(update_kernel("embedding.update", s_.optimizer, dt_,
                               b_.parameter(*emb_w).elements, -1, {next_emb}));
  }
  for (int i = 0; i < L; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    const int l = first + i;
    const std::string n = "l" + std::to_string(l);
    Deps deps = wgrad_gather(cell[iu], "wgrad.gather", {next_acc[iu]});
    (void)b_.add(update_kernel(n + ".update", s_.optimizer, dt_, layer_elements[iu], l,
                               std::move(deps)));
  }
  if (part_.softmax) {
    Deps deps = wgrad_gather(sm, "softmax.wgrad.gather", {next_sm_wgrad});
    (void)b_.add(update_kernel("softmax.update", s_.optimizer, dt_, sm_elements, -1,
                               std::move(deps)));
  }
  return std::move(b_).build();
}

}  // namespace

ComputeGraph build_lstm_graph(const LstmSpec& spec, const LstmPartition& part) {
  PF_ASSERT(spec.batch > 0 && spec.sequence > 0 && spec.hidden > 0 && spec.vocabulary > 0 &&
            spec.layers > 0);
  PF_ASSERT(part.kp1 > 0 && part.kp2 > 0);
  switch (part.split) {
    case GemmSplit::kNone: PF_ASSERT(part.kp1 == 1 && part.kp2 == 1); break;
    case GemmSplit::kColumnRow:
      PF_ASSERT(part.kp2 == 1 && spec.hidden % part.kp1 == 0 &&
                spec.vocabulary % part.kp1 == 0);
      break;
    case GemmSplit::kRowColumn:
      PF_ASSERT(spec.batch % part.kp1 == 0 && spec.hidden % part.kp1 == 0 &&
                spec.hidden % part.kp2 == 0 && spec.vocabulary % part.kp2 == 0);
      break;
  }
  const std::int64_t layers = part.layers >= 0 ? part.layers : spec.layers - part.first_layer;
  PF_ASSERT(part.first_layer >= 0 && layers >= 0 && part.first_layer + layers <= spec.layers);
  PF_ASSERT(layers > 0 || part.embedding || part.softmax);
  return LstmBuilder(spec, part).build();
}

}  // namespace pathfinder
