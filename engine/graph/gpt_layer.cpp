// GptBuilder's transformer layer (gpt_builder.hpp): its forward pass (run again by full
// recomputation), its backward pass, and the selective recomputation (by module or op-level)
// at the start of the backward.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "engine/graph/gpt_builder.hpp"

namespace pathfinder::gpt_detail {

void GptBuilder::recompute_modules(int i, const LayerFwd& stored, unsigned modules, Deps& g) {
  const auto on = [modules](unsigned m) { return (modules & m) != 0; };
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  set_pass(Pass::kRecomputeLayer);
  if (on(kRecomputeLayernorm)) {
    g.push_back(layernorm_fwd(i, "ln1", {stored.ln1}));
    g.push_back(layernorm_fwd(i, "ln2", {stored.ln2}));
  }
  if (on(kRecomputeMlaUpProj) && s_.mla()) {
    const KernelId q = linear_fwd(i, "q_up", w.q_up, false,
                                  {s_.q_lora_rank > 0 ? stored.q_norm : stored.ln1});
    g.push_back(linear_fwd(i, "kv_up", w.kv_up, false, {stored.kv_norm}));
    g.push_back(rotary_ ? rotary(i, "rotary" + suffix_, phase_, {q, stored.kv_down}) : q);
  }
  LayerFwd again{};
  if (!moe_at(i)) {
    if (on(kRecomputeMlp)) {
      const Deps out = dense_mlp_fwd(i, again, w, static_cast<double>(s_.ffn / tp_), "",
                                     gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
      g.insert(g.end(), out.begin(), out.end());
    }
  } else if (on(kRecomputeMoe)) {
    const Deps out = moe_fwd(i, again, {stored.ln2},
                             gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
    g.insert(g.end(), out.begin(), out.end());
  } else {
    if (on(kRecomputeMoeAct)) g.push_back(expert_activation(i, {stored.permuted}));
    if (on(kRecomputeSharedExperts) && s_.shared_experts > 0) {
      const Deps out = dense_mlp_fwd(
          i, again, w, static_cast<double>(s_.shared_experts * s_.expert_width() / tp_),
          "shared.", gather_in(i, "ln2.gather" + suffix_, phase_, {stored.ln2}));
      g.insert(g.end(), out.begin(), out.end());
    }
  }
  set_pass(Pass::kForward);
}

void GptBuilder::recompute_ops(int i, const LayerFwd& stored, Deps& g) {
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  const double hd = static_cast<double>(s_.hidden);
  set_pass(Pass::kRecomputeLayer);
  const KernelId ln1 = layernorm_fwd(i, "ln1", {stored.ln1});
  // The key projection, kv_t·d of the fused QKV's columns (the same shape as wk alone).
  Linear wk = w.qkv;
  wk.out = kv_local_ * s_.head_dim();
  const KernelId k = linear_fwd(i, "k", wk, false, {ln1});
  KernelId rot = k;
  if (rotary_) rot = rotary(i, "rotary" + suffix_, phase_, {k});
  const KernelId proj = linear_fwd(i, "proj", w.proj, false, {stored.context});
  const double add_ops = s_.bias ? 2.0 : 1.0;
  const KernelId res1 = stream(i, "residual1" + suffix_, KernelKind::kElementwise, phase_,
                               add_ops * rows_ * hd, 2.0 * rows_ * hd * p_, rows_ * hd * p_,
                               {proj});
  const KernelId ln2 = layernorm_fwd(i, "ln2", {res1});
  g.insert(g.end(), {ln1, rot, res1, ln2});
  if (!moe_at(i)) {
    const double fd = static_cast<double>(s_.ffn / tp_);
    const Linear& up = swiglu_ ? w.up : w.fc1;
    const KernelId u = linear_fwd(i, swiglu_ ? "up" : "fc1", up, false, {ln2});
    const double e = t_ * fd;  // the MLP's local width on every token
    const KernelId act = swiglu_ ? swiglu_fwd(i, "swiglu", e, {u})
                                 : stream(i, "gelu" + suffix_, KernelKind::kElementwise, phase_,
                                          10.0 * e, e * p_, e * p_, {u});
    g.push_back(act);
  }
  set_pass(Pass::kForward);
}

GptBuilder::LayerFwd GptBuilder::layer_fwd(int i, const Deps& x, Pass pass) {
  const double hd = static_cast<double>(s_.hidden);
  const double fd = static_cast<double>(s_.ffn / tp_);
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  set_pass(pass);
  LayerFwd r{};
  r.ln1 = layernorm_fwd(i, "ln1", x);
  if (s_.mla()) {
    mla_fwd(i, r, w, gather_in(i, "ln1.gather" + suffix_, phase_, {r.ln1}));
    attention_fwd(i, r, {r.qkv, r.kv_up});
  } else {
    const bool q1 = fp8_gathers();
    r.qkv = linear_fwd(i, "qkv", w.qkv, /*bias_epilogue=*/true,
                       q1 ? quantized_gather(i, "ln1.gather" + suffix_, "ln1.cast" + suffix_,
                                             phase_, hd, {r.ln1})
                          : gather_in(i, "ln1.gather" + suffix_, phase_, {r.ln1}),
                       /*cast_input=*/!q1);
    if (part_.eager.qkv_layout) {
      // nanotron (models/llama.py): q, k, v split and each made contiguous in the kernel's
      // layout (transpose(0, 1).contiguous(), or one permute of the whole without GQA), then
      // k and v concatenated and permuted contiguous for the rotary: (a_t + 2g_t) + 2·2g_t
      // heads of d read and written.
      const double e = t_ * static_cast<double>((s_.heads / tp_ + 6 * kv_local_) * s_.head_dim());
      r.qkv = stream(i, "qkv.layout" + suffix_, KernelKind::kElementwise, phase_, 0.0, e * p_,
                     e * p_, {r.qkv});
    }
    if (rotary_) r.qkv = rotary(i, "rotary" + suffix_, phase_, {r.qkv});
    attention_fwd(i, r, {r.qkv});
  }
  Deps res1 = reduce_out(i, "proj.reduce" + suffix_, phase_,
                         {linear_fwd(i, "proj", w.proj, false, {r.context})});
  res1.insert(res1.end(), x.begin(), x.end());
  // The residual adds fuse the preceding row-parallel GEMM's bias (and dropout): 2 per element,
  // 1 without a bias. Both are Megatron's bias_dropout_add, so both write their dropout mask
  // (read back by the backward's merges below).
  const double add_ops = s_.bias ? 2.0 : 1.0;
  const Bytes bias_bytes = s_.bias ? hd * p_ : Bytes{};
  r.res1 = stream(i, "residual1" + suffix_, KernelKind::kElementwise, phase_,
                  add_ops * rows_ * hd, 2.0 * rows_ * hd * p_ + bias_bytes,
                  rows_ * hd * (p_ + mask_), std::move(res1));
  r.ln2 = layernorm_fwd(i, "ln2", {r.res1});
  Deps res2;
  if (moe_at(i)) {
    res2 = moe_fwd(i, r, {r.ln2}, gather_in(i, "ln2.gather" + suffix_, phase_, {r.ln2}));
  } else if (fp8_gathers()) {
    res2 = dense_mlp_fwd(i, r, w, fd, "",
                         quantized_gather(i, "ln2.gather" + suffix_, "ln2.cast" + suffix_, phase_,
                                          hd, {r.ln2}),
                         /*cast_input=*/false);
  } else {
    res2 = dense_mlp_fwd(i, r, w, fd, "", gather_in(i, "ln2.gather" + suffix_, phase_, {r.ln2}));
  }
  res2.push_back(r.res1);
  r.res2 = stream(i, "residual2" + suffix_, KernelKind::kElementwise, phase_,
                  add_ops * rows_ * hd, 2.0 * rows_ * hd * p_ + bias_bytes,
                  rows_ * hd * (p_ + mask_), std::move(res2));
  set_pass(Pass::kForward);
  return r;
}

Deps GptBuilder::layer_bwd(int i, const LayerFwd& stored, const Deps& g_in) {
  const std::int64_t s = s_.sequence;
  const double fd = static_cast<double>(s_.ffn / tp_);
  const std::int64_t ba = s_.micro_batch * (s_.heads / tp_);
  const double probs = static_cast<double>(ba) * static_cast<double>(s * s);
  const std::int64_t head = s_.head_dim();
  const LayerParams& w = params_[static_cast<std::size_t>(i)];
  auto& grads = grads_[static_cast<std::size_t>(i)];

  // Selective recomputation re-runs the attention core from the stored QKV output, or (op-level)
  // every second linear and the element-wise kernels.
  LayerFwd fw = stored;
  Deps g = g_in;
  if (part_.recompute == Recompute::kSelective && part_.selective_op) {
    recompute_ops(i, stored, g);
  } else {
    const unsigned modules = selective_modules(part_.recompute, part_.recompute_modules);
    if ((modules & kRecomputeCoreAttn) != 0 && !flash_) {
      set_pass(Pass::kRecomputeAttention);
      attention_fwd(i, fw, {stored.qkv});
      set_pass(Pass::kForward);
      g.push_back(fw.context);
    }
    if ((modules & ~kRecomputeCoreAttn) != 0) recompute_modules(i, stored, modules, g);
  }

  // FFN: gather the gradient rows (SP), FFN2 and GeLU backward, FFN1, reduce its input gradient.
  const double hd = static_cast<double>(s_.hidden);
  const bool q2 = fp8_gathers() && !moe_at(i), q1 = fp8_gathers() && !s_.mla();
  const Deps g_rows = q2 ? quantized_gather(i, "fc2.gather.bwd", "fc2.grad.cast",
                                            Phase::kBackwardData, hd, g)
                         : gather_in(i, "fc2.gather.bwd", Phase::kBackwardData, g);
  // On a side stream the re-gather is launched when the MLP's backward starts (Megatron-LM and
  // TE launch it in the column-parallel layer's backward, beside its data-gradient GEMM), not
  // beside the blocking gather before it.
  Deps ln2_after{fw.ln2};
  if (part_.overlap_sp_regather) ln2_after.insert(ln2_after.end(), g_rows.begin(), g_rows.end());
  const Deps ln2_in = regather(i, "ln2.regather.bwd", q2, std::move(ln2_after));
  Deps mlp_w;
  const Deps fc1_r = moe_at(i) ? moe_bwd(i, fw, g, g_rows, ln2_in, mlp_w)
                              : dense_mlp_bwd(i, fw, w, fd, "", g_rows, ln2_in, mlp_w, !q2);
  const KernelId ln2_b = layernorm_bwd(i, "ln2", fc1_r);
  Deps m1 = g_in;
  m1.push_back(ln2_b);
  const KernelId g1 = merge(i, "residual1.grad", std::move(m1));

  // Attention: gather (SP), projection, context and scores backward, QKV, reduce.
  const auto [proj_d, proj_w] =
      fp8_gathers()
          ? linear_bwd(i, "proj", w.proj,
                       quantized_gather(i, "proj.gather.bwd", "proj.grad.cast",
                                        Phase::kBackwardData, hd, {g1}),
                       {}, /*cast_grad=*/false)
          : linear_bwd(i, "proj", w.proj, gather_in(i, "proj.gather.bwd", Phase::kBackwardData, {g1}));
  Deps dqkv;
  if (flash_) {
    dqkv = repeat_kv(i, true, {flash(i, "attn.flash.bwd", Phase::kBackwardData, false,
                                     {proj_d, fw.context})});
  } else {
    // Context C = P·V: dP = dC·Vᵀ (s, s, h/a) and dV = Pᵀ·dC (s, h/a, s) per (sequence, head).
    const KernelId dp =
        attention_bwd(i, "attn.context.dgrad_probs", KernelKind::kAttentionContext,
                      GemmShape{ba, s, s, head}, proj_d);
    const KernelId dv =
        attention_bwd(i, "attn.context.dgrad_values", KernelKind::kAttentionContext,
                      GemmShape{ba, s, head, s}, proj_d);
    const KernelId dp_in =
        s_.dropout ? stream(i, "attn.dropout.bwd", KernelKind::kElementwise, Phase::kBackwardData,
                            probs, probs * p_ + probs * bytes(1), probs * p_, {dp})
                   : dp;
    KernelId sm_b = 0;
    if (fused_softmax()) {
      sm_b = stream(i, "attn.softmax.bwd", KernelKind::kSoftmax, Phase::kBackwardData, 5.0 * probs,
                    2.0 * probs * p_, probs * p_, {dp_in, fw.softmax});
    } else {
      // Autograd through the five ops: the gradient to fp32, Softmax's backward (reading its
      // fp32 output), masked_fill's (zeroing the masked entries), the scale's, back to 16 bits.
      const Bytes f = probs * bytes(4);
      const Phase bd = Phase::kBackwardData;
      KernelId k = stream(i, "attn.softmax.to_16bit.bwd", KernelKind::kElementwise, bd, 0.0,
                          probs * p_, f, {dp_in, fw.softmax});
      k = stream(i, "attn.softmax.bwd", KernelKind::kSoftmax, bd, 3.0 * probs, 2.0 * f, f, {k});
      k = stream(i, "attn.softmax.mask.bwd", KernelKind::kElementwise, bd, probs, f, f, {k});
      k = stream(i, "attn.softmax.scale.bwd", KernelKind::kElementwise, bd, probs, f, f, {k});
      sm_b = stream(i, "attn.softmax.to_fp32.bwd", KernelKind::kElementwise, bd, 0.0, f,
                    probs * p_, {k});
    }
    // Scores S = Q·Kᵀ: dQ = dS·K and dK = dSᵀ·Q, each (s, h/a, s) per (sequence, head).
    const KernelId dq =
        attention_bwd(i, "attn.scores.dgrad_query", KernelKind::kAttentionScores,
                      GemmShape{ba, s, head, s}, sm_b);
    const KernelId dk =
        attention_bwd(i, "attn.scores.dgrad_key", KernelKind::kAttentionScores,
                      GemmShape{ba, s, head, s}, sm_b);
    dqkv = {dq, dk, dv};
  }
  if (rotary_) dqkv = {rotary(i, "rotary.bwd", Phase::kBackwardData, dqkv)};
  if ((!flash_ || part_.eager.qkv_layout) && !s_.mla()) {
    // The query, key and value gradients into the fused QKV output's gradient: the backward of
    // the split of that output into q, k and v (autograd's torch.cat) by the unfused attention,
    // or by a flash path that splits it (EagerOps::qkv_layout).
    const double e = t_ * static_cast<double>(w.qkv.out);
    dqkv = {stream(i, "qkv.grad.concat", KernelKind::kElementwise, Phase::kBackwardData, 0.0,
                   e * p_, e * p_, dqkv)};
  }
  Deps ln1_after{fw.ln1};
  if (part_.overlap_sp_regather) ln1_after.insert(ln1_after.end(), dqkv.begin(), dqkv.end());
  const Deps ln1_in = regather(i, "ln1.regather.bwd", q1, std::move(ln1_after));
  Deps qkv_r;
  if (s_.mla()) {
    qkv_r = mla_bwd(i, fw, w, dqkv, ln1_in, grads);
  } else {
    const auto [qkv_d, qkv_w] = linear_bwd(i, "qkv", w.qkv, dqkv, ln1_in);
    qkv_r = reduce_out(i, "qkv.reduce.bwd", Phase::kBackwardData, {qkv_d},
                       part_.overlap_tp_backward);
    grads.push_back(qkv_w);
  }
  const KernelId ln1_b = layernorm_bwd(i, "ln1", qkv_r);
  grads.insert(grads.end(), mlp_w.begin(), mlp_w.end());
  grads.insert(grads.end(), {ln2_b, proj_w, ln1_b});
  const KernelId out = merge(i, "residual0.grad", {g1, ln1_b});
  if (adds_every_gradient()) {
    double elements = 0.0;
    for (const auto& p : b_.parameters()) {
      if (p.layer == i + part_.first_layer && p.trainable) {
        elements += static_cast<double>(p.elements);
      }
    }
    grads.push_back(gradient_add(i, "grad.accumulate", elements, grads));
  }
  return {out};
}

}  // namespace pathfinder::gpt_detail
