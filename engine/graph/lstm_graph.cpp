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
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/graph/workload.hpp"

namespace pathfinder {
namespace {

std::string at(int layer, int step, const char* what) {
  std::string s = "t" + std::to_string(step) + ".";
  if (layer >= 0) s += "l" + std::to_string(layer) + ".";
  return s + what;
}

Kernel in_step(Kernel k, int layer, int step) {
  k.layer = layer;
  k.step = step;
  return k;
}

}  // namespace

ComputeGraph build_lstm_graph(const LstmSpec& spec) {
  PF_ASSERT(spec.batch > 0 && spec.sequence > 0 && spec.hidden > 0 && spec.vocabulary > 0 &&
            spec.layers > 0);
  const std::int64_t Bi = spec.batch, Di = spec.hidden, Vi = spec.vocabulary;
  const int S = static_cast<int>(spec.sequence);
  const int L = static_cast<int>(spec.layers);
  const double B = static_cast<double>(Bi), D = static_cast<double>(Di),
               V = static_cast<double>(Vi);
  const DataType dt = spec.precision;
  const Bytes p = bytes_per_element(dt);
  const Bytes id_bytes = bytes(4);  // int32 token ids

  ComputeGraphBuilder b;
  const ParamId emb_w = b.add_parameter({"embedding.weight", -1, Vi * Di});
  std::vector<ParamId> cell_w;
  std::vector<ParamId> cell_bias;
  for (int l = 0; l < L; ++l) {
    const std::string n = "lstm" + std::to_string(l);
    cell_w.push_back(b.add_parameter({n + ".weight", l, 2 * Di * 4 * Di}));
    cell_bias.push_back(b.add_parameter({n + ".bias", l, 4 * Di}));
  }
  const ParamId sm_w = b.add_parameter({"softmax.weight", -1, Di * Vi});
  (void)b.add_parameter({"softmax.bias", -1, Vi});

  // Forward, step by step; within a step, layer by layer.
  std::vector<std::vector<KernelId>> cell(L, std::vector<KernelId>(S));  // cell pointwise ids
  std::vector<KernelId> sm_fwd(S);                                      // softmax ids
  for (int t = 0; t < S; ++t) {
    Kernel emb = stream_kernel(at(-1, t, "embedding.fwd"), KernelKind::kEmbedding,
                               Phase::kForward, dt, flops(0), B * id_bytes + B * D * p,
                               B * D * p, {});
    emb.weight = emb_w;
    KernelId below = b.add(in_step(std::move(emb), -1, t));
    for (int l = 0; l < L; ++l) {
      std::vector<KernelId> deps{below};
      if (t > 0) deps.push_back(cell[l][t - 1]);  // h(t-1) and c(t-1)
      Kernel g = gemm_kernel(at(l, t, "cell.fwd"), KernelKind::kGemm, Phase::kForward, dt,
                             GemmShape{1, Bi, 4 * Di, 2 * Di}, std::move(deps));
      g.weight = cell_w[l];
      const KernelId gid = b.add(in_step(std::move(g), l, t));
      const double gates = B * 4.0 * D;
      cell[l][t] = b.add(in_step(
          stream_kernel(at(l, t, "cell.pointwise.fwd"), KernelKind::kLstmCell, Phase::kForward,
                        dt, flops(5.0 * gates), 8.0 * gates * p, 5.0 * gates * p, {gid}),
          l, t));
      below = cell[l][t];
    }
    Kernel g = gemm_kernel(at(-1, t, "softmax.gemm.fwd"), KernelKind::kGemm, Phase::kForward, dt,
                           GemmShape{1, Bi, Vi, Di}, {below});
    g.weight = sm_w;
    const KernelId gid = b.add(in_step(std::move(g), -1, t));
    sm_fwd[t] = b.add(in_step(stream_kernel(at(-1, t, "softmax.fwd"), KernelKind::kSoftmax,
                                            Phase::kForward, dt, flops(B * (3.0 * V - 1.0)),
                                            4.0 * B * V * p, 3.0 * B * V * p, {gid}),
                              -1, t));
  }
  // Every cell and embedding precedes the last step's softmax; the backward pass starts when
  // the forward pass has finished (the reference's simulator does the same).
  const KernelId last_forward = b.next_id() - 1;

  // Backward, last step first; within a step, top layer first.
  std::vector<KernelId> next_dgrad(L, 0);  // cell data gradient of step t+1 (valid if t < S-1)
  std::vector<KernelId> next_acc(L, 0);    // weight-gradient sum of step t+1
  KernelId next_sm_wgrad = 0, next_emb = 0;
  for (int t = S - 1; t >= 0; --t) {
    const bool last = (t == S - 1);
    std::vector<KernelId> sdeps{sm_fwd[t]};
    if (!last) sdeps.push_back(last_forward);
    const KernelId sm_b = b.add(in_step(
        stream_kernel(at(-1, t, "softmax.bwd"), KernelKind::kSoftmax, Phase::kBackwardData, dt,
                      flops(5.0 * B * V), 7.0 * B * V * p, 4.0 * B * V * p, std::move(sdeps)),
        -1, t));
    Kernel dg = gemm_kernel(at(-1, t, "softmax.gemm.dgrad"), KernelKind::kGemm,
                            Phase::kBackwardData, dt, GemmShape{1, Bi, Di, Vi}, {sm_b});
    dg.weight = sm_w;
    KernelId above = b.add(in_step(std::move(dg), -1, t));
    std::vector<KernelId> wdeps{sm_b};
    if (!last) wdeps.push_back(next_sm_wgrad);  // accumulates into the same gradient
    Kernel wg = gemm_kernel(at(-1, t, "softmax.gemm.wgrad"), KernelKind::kGemm,
                            Phase::kBackwardWeight, dt, GemmShape{1, Di, Vi, Bi}, std::move(wdeps));
    wg.weight = sm_w;
    next_sm_wgrad = b.add(in_step(std::move(wg), -1, t));

    for (int l = L - 1; l >= 0; --l) {
      std::vector<KernelId> deps{above};
      if (!last) deps.push_back(next_dgrad[l]);  // gradient of h(t) and c(t) from step t+1
      const KernelId pw = b.add(in_step(
          stream_kernel(at(l, t, "cell.pointwise.bwd"), KernelKind::kLstmCell,
                        Phase::kBackwardData, dt, flops(5.0 * B * D), 8.0 * B * D * p,
                        5.0 * B * D * p, std::move(deps)),
          l, t));
      Kernel cdg = gemm_kernel(at(l, t, "cell.dgrad"), KernelKind::kGemm, Phase::kBackwardData,
                               dt, GemmShape{1, Bi, 2 * Di, 4 * Di}, {pw});
      cdg.weight = cell_w[l];
      next_dgrad[l] = b.add(in_step(std::move(cdg), l, t));
      Kernel cwg = gemm_kernel(at(l, t, "cell.wgrad"), KernelKind::kGemm, Phase::kBackwardWeight,
                               dt, GemmShape{1, 2 * Di, 4 * Di, Bi}, {pw});
      cwg.weight = cell_w[l];
      const KernelId wgid = b.add(in_step(std::move(cwg), l, t));
      std::vector<KernelId> adeps{wgid};
      if (!last) adeps.push_back(next_acc[l]);
      const double w = 2.0 * D * 4.0 * D;
      Kernel acc = stream_kernel(at(l, t, "cell.wgrad.accumulate"), KernelKind::kElementwise,
                                 Phase::kBackwardWeight, dt, flops(w), 2.0 * w * p, w * p,
                                 std::move(adeps));
      acc.weight = cell_w[l];
      next_acc[l] = b.add(in_step(std::move(acc), l, t));
      above = next_dgrad[l];
    }
    std::vector<KernelId> edeps{above};
    if (!last) edeps.push_back(next_emb);  // scatter-adds into the same table gradient
    Kernel eb = stream_kernel(at(-1, t, "embedding.bwd"), KernelKind::kEmbedding,
                              Phase::kBackwardWeight, dt, flops(B * D),
                              B * id_bytes + 2.0 * B * D * p, B * D * p, std::move(edeps));
    eb.weight = emb_w;
    next_emb = b.add(in_step(std::move(eb), -1, t));
  }

  // One optimizer step per parameter group once every gradient is complete.
  (void)b.add(update_kernel("embedding.update", spec.optimizer, dt, Vi * Di, -1, {next_emb}));
  for (int l = 0; l < L; ++l) {
    const std::int64_t n = b.parameter(cell_w[l]).elements + b.parameter(cell_bias[l]).elements;
    (void)b.add(update_kernel("l" + std::to_string(l) + ".update", spec.optimizer, dt, n, l,
                              {next_acc[l]}));
  }
  (void)b.add(update_kernel("softmax.update", spec.optimizer, dt, (Di + 1) * Vi, -1,
                            {next_sm_wgrad}));
  return std::move(b).build();
}

}  // namespace pathfinder
