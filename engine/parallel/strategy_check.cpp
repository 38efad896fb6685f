#include "engine/parallel/strategy_check.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace pathfinder {
namespace {

using I64 = std::int64_t;

// Collects problems: with a list, each with its message; without one, only whether any
// occurred (messages are then never built).
class Sink {
 public:
  Sink(std::vector<Diagnostic>* out, const SourceLoc* where) : out_(out), where_(where) {}
  template <class F>
  void require(bool ok, F&& message) {
    if (ok) return;
    ok_ = false;
    if (out_ != nullptr) out_->push_back(Diagnostic{*where_, message()});
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  std::vector<Diagnostic>* out_;
  const SourceLoc* where_;
  bool ok_ = true;
};

std::string str(I64 v) { return std::to_string(v); }

// "heads = 64 is not a multiple of tp = 6" unless divisor divides value.
void multiple(Sink& k, const char* what, I64 value, const char* by, I64 divisor,
              const char* why = "") {
  k.require(value % divisor == 0, [&] {
    return std::string(what) + " = " + str(value) + " is not a multiple of " + by + " = " +
           str(divisor) + why;
  });
}

bool is_paper(const Strategy& s) { return s.split != KernelSplit::kTensor; }
const char* split_name(const Strategy& s) {
  return s.split == KernelSplit::kRowColumn ? "RC" : "CR";
}
bool interleaved(const Strategy& s) { return s.schedule == PipelineSchedule::kInterleaved; }

// "tp8 x pp8 x dp16" or "kp1 4 x kp2 2 x d8 x p2".
std::string degrees_text(const Strategy& s) {
  if (!is_paper(s)) {
    return "tp" + str(s.tp) + (s.cp != 1 ? " x cp" + str(s.cp) : "") + " x pp" + str(s.pp) +
           " x dp" + str(s.dp);
  }
  std::string out = "kp1 " + str(s.tp);
  if (s.split == KernelSplit::kRowColumn) out += " x kp2 " + str(s.tp2);
  return out + " x d" + str(s.dp) + " x p" + str(s.pp);
}

// Ranges and the device count; false when a degree is below 1 (later rules divide by them).
bool check_degrees(const Strategy& s, int devices, Sink& k) {
  const bool positive = s.tp >= 1 && s.tp2 >= 1 && s.cp >= 1 && s.ep >= 1 && s.pp >= 1 &&
                        s.dp >= 1 && s.virtual_stages >= 1;
  const std::pair<const char*, int> degrees[] = {{"tp", s.tp},
                                                 {"tp2", s.tp2},
                                                 {"cp", s.cp},
                                                 {"ep", s.ep},
                                                 {"pp", s.pp},
                                                 {"dp", s.dp},
                                                 {"virtual_stages", s.virtual_stages}};
  for (const auto& degree : degrees) {  // not a structured binding: clang 14 cannot capture one
    k.require(degree.second >= 1, [&] {
      return std::string(degree.first) + " = " + str(degree.second) + " must be at least 1";
    });
  }
  k.require(s.micro_batch >= 0,
            [&] { return "micro_batch = " + str(s.micro_batch) + " must be at least 0"; });
  k.require(s.zero >= 0 && s.zero <= kMaxZeroStage,
            [&] { return "zero = " + str(s.zero) + " must be 0, 1, 2 or 3"; });
  k.require(s.tp2 == 1 || s.split == KernelSplit::kRowColumn, [&] {
    return "tp2 = " + str(s.tp2) + " is RC's second kernel dimension; it must be 1 with split " +
           std::string(to_string(s.split));
  });
  k.require(s.virtual_stages == 1 || interleaved(s), [&] {
    return "virtual stages (v" + str(s.virtual_stages) + ") need the interleaved schedule";
  });
  k.require(devices >= 1, [&] { return "--devices must be at least 1, got " + str(devices); });
  if (!positive) return false;
  // Five ints can multiply past 64 bits (tp2147483647-pp2147483647-...).
  I64 product = 1;
  bool overflow = false;
  for (const int d : {s.tp, s.tp2, s.cp, s.pp, s.dp}) {
    overflow = overflow || __builtin_mul_overflow(product, I64{d}, &product);
  }
  k.require(!overflow && product == devices, [&] {
    return degrees_text(s) + " = " + (overflow ? std::string("too many") : str(product)) +
           " devices, but --devices is " + str(devices);
  });
  return true;
}

// Transformer-only techniques, for LSTM and GEMM workloads.
void no_transformer_options(const Strategy& s, const char* workload, Sink& k) {
  // The message's tail is made only for a failed check (a valid strategy allocates nothing).
  const auto only = [workload] {
    return " applies to GPT workloads only, not to " + std::string(workload);
  };
  k.require(!s.sequence_parallel, [&] { return "sequence parallel (sp)" + only(); });
  k.require(s.recompute == Recompute::kNone,
            [&] { return "recompute=" + std::string(to_string(s.recompute)) + only(); });
  k.require(!interleaved(s), [&] { return "the interleaved schedule" + only(); });
  k.require(s.schedule != PipelineSchedule::kDualPipe,
            [&] { return "the dualpipe schedule" + only(); });
  k.require(s.cp == 1, [&] { return "context parallel (cp" + str(s.cp) + ")" + only(); });
  k.require(!s.ulysses, [&] { return "context parallel by all-to-all (ulysses)" + only(); });
  k.require(s.ep == 1, [&] { return "expert parallel (ep" + str(s.ep) + ")" + only(); });
  k.require(s.etp == 0, [&] { return "expert tensor parallelism (etp1)" + only(); });
}

void check_gpt(const Strategy& s, const GptSpec& w, Sink& k) {
  if (is_paper(s)) {
    k.require(false, [&] {
      return std::string(split_name(s)) +
             " is DeepFlow's kernel split for LSTM and GEMM workloads; split a GPT with tpN "
             "(Megatron tensor parallel)";
    });
    return;
  }
  multiple(k, "heads", w.heads, "tp", s.tp);
  // Each rank holds kv_heads/tp key/value heads, or one replicated head when tp > kv_heads
  // (with kv_heads = heads the heads rule says it).
  k.require(w.kv() == w.heads || w.kv() % s.tp == 0 || s.tp % w.kv() == 0, [&] {
    return "kv_heads = " + str(w.kv()) + " and tp = " + str(s.tp) +
           ": one must be a multiple of the other (KV heads split or replicated over tp)";
  });
  multiple(k, "hidden", w.hidden, "tp", s.tp);
  multiple(k, "ffn", w.ffn, "tp", s.tp);
  multiple(k, "vocabulary", w.vocabulary, "tp", s.tp);
  if (s.sequence_parallel) {
    multiple(k, "sequence", w.sequence, "tp", s.tp, " (sequence parallel splits it)");
  }
  if (s.ep > 1) {
    k.require(w.moe(), [&] {
      return "expert parallel (ep" + str(s.ep) + ") splits a mixture of experts; the workload "
             "has no experts";
    });
    if (w.moe()) multiple(k, "experts", w.experts, "ep", s.ep);
    // Megatron-Core folds the experts' parallelism over the attention's ranks (etp x ep x edp
    // = tp x cp x dp; Liu et al. 2025, "MoE Parallel Folding"): the expert group is made of the
    // context and data ranks, and with whole experts (etp1) of the tensor ranks too.
    if (s.etp == 1) {
      multiple(k, "tp x cp x dp", I64{s.tp} * s.cp * s.dp, "ep", s.ep,
               " (with etp1 the expert group is made of tensor, context and data-parallel "
               "ranks)");
    } else {
      multiple(k, "cp x dp", I64{s.cp} * s.dp, "ep", s.ep,
               " (the expert group is made of context and data-parallel ranks)");
    }
  }
  // Recomputed modules the model has (Megatron-Core's TransformerConfig asserts them likewise).
  const unsigned mods = s.recompute_modules;
  const auto module_on = [&](unsigned m, bool has, const char* what) {
    k.require((mods & m) == 0 || has, [&] {
      return "recompute=" + recompute_modules_name(mods) + ": " + recompute_modules_name(m) +
             " needs " + what + "; the workload has none";
    });
  };
  module_on(kRecomputeMlaUpProj, w.mla(), "multi-head latent attention");
  module_on(kRecomputeMoe, w.moe(), "a mixture of experts");
  module_on(kRecomputeMoeAct, w.moe(), "a mixture of experts");
  module_on(kRecomputeSharedExperts, w.moe() && w.shared_experts > 0, "shared experts");
  k.require(s.etp == 0 || w.moe(), [&] {
    return std::string("etp1 keeps a mixture of experts' experts whole; the workload has no "
                       "experts");
  });
  if (w.moe()) {
    // Megatron-Core routes the tensor group's tokens sharded (its MoE layer asserts sequence
    // parallelism when tp > 1); the model's dispatch follows it.
    k.require(s.tp == 1 || s.sequence_parallel, [&] {
      return "a mixture of experts with tp" + str(s.tp) +
             " needs sequence parallelism (sp), as Megatron-Core's MoE layers do";
    });
    multiple(k, "expert_ffn", w.expert_width(), "the experts' tp", s.expert_tp());
    multiple(k, "shared experts' width", w.shared_experts * w.expert_width(), "tp", s.tp);
  }
  k.require(s.cp == 1 || w.document == 0, [&] {
    return "context parallel (cp" + str(s.cp) + ") over packed documents is not modelled";
  });
  k.require(!s.ulysses || s.cp > 1, [] {
    return std::string("ulysses is a kind of context parallelism: give cpN, N > 1");
  });
  if (s.cp > 1 && !s.ulysses) {
    // Causal load balancing (Megatron-Core / TE): the sequence in 2·cp chunks, rank r taking
    // chunks r and 2·cp - 1 - r; sequence parallelism splits each rank's part over tp again.
    const I64 chunks = 2 * I64{s.cp} * (s.sequence_parallel ? s.tp : 1);
    multiple(k, "sequence", w.sequence, s.sequence_parallel ? "2 x cp x tp" : "2 x cp", chunks,
             " (context parallel splits it in 2 x cp chunks)");
  }
  if (s.cp > 1 && s.ulysses) {
    // DeepSpeed-Ulysses (Jacobs et al. 2023): each rank holds s/cp tokens of every head; an
    // all-to-all regroups them into whole sequences of heads/cp heads for the attention, and
    // back. Key/value heads split the same way, or replicated when fewer than cp.
    const I64 tokens = I64{s.cp} * (s.sequence_parallel ? s.tp : 1);
    multiple(k, "sequence", w.sequence, s.sequence_parallel ? "cp x tp" : "cp", tokens,
             " (context parallel splits it)");
    if (w.heads % s.tp == 0) {
      multiple(k, "heads / tp", w.heads / s.tp, "cp", s.cp, " (ulysses splits heads over cp)");
    }
    const I64 kv_local = std::max<I64>(w.kv() / s.tp, 1);
    k.require(kv_local % s.cp == 0 || s.cp % kv_local == 0, [&] {
      return "kv_heads / tp = " + str(kv_local) + " and cp = " + str(s.cp) +
             ": one must be a multiple of the other (ulysses splits or replicates KV heads)";
    });
  }
  if (s.cp > 1) {
    k.require(w.attention == AttentionKind::kFlash, [&] {
      return std::string("context parallel (cp") + str(s.cp) +
             (s.ulysses ? "-ulysses) regroups heads for fused attention kernels"
                        : ") passes keys and values around a ring of fused attention kernels") +
             "; set the workload's attention: flash";
    });
  }
  if (interleaved(s)) {
    k.require(s.pp > 1, [&] { return "interleaved needs pp > 1, got pp" + str(s.pp); });
    k.require(s.virtual_stages >= 2, [&] {
      return "interleaved needs at least 2 virtual stages (v2), got v" + str(s.virtual_stages);
    });
    // Chunks need not hold equal layer counts (stage_layers over pp x v chunks: Llama 3 405B's
    // 126 layers as 32 x 4 less one on the first and the last chunk; Dubey et al. 2024
    // section 3.3.2), only at least one each.
    const I64 chunks = I64{s.pp} * s.virtual_stages;
    k.require(w.layers >= chunks, [&] {
      return "layers = " + str(w.layers) + " is fewer than pp x v = " + str(s.pp) + " x " +
             str(s.virtual_stages) + " = " + str(chunks) + ": every model chunk holds a layer";
    });
  } else {
    // Stages need not hold equal layer counts (stage_layers), only at least one each.
    k.require(w.layers >= s.pp, [&] {
      return "layers = " + str(w.layers) + " is fewer than pp = " + str(s.pp) +
             ": every stage holds at least one layer";
    });
  }
  // Megatron-LM splits every replica's batch into micro-batches of at least one sequence;
  // mb0 (no micro-batching) is the paper notation's, for LSTM and GEMM workloads.
  if (s.micro_batch == 0) {
    k.require(false, [&] {
      return std::string("mb0 (the whole batch at once) is for LSTM and GEMM workloads; a GPT "
                         "needs a micro-batch of at least 1 sequence (mbN)");
    });
    return;
  }
  const I64 per_step = I64{s.dp} * s.micro_batch;
  k.require(w.global_batch % per_step == 0, [&] {
    return "global_batch = " + str(w.global_batch) +
           " is not a multiple of dp x mb = " + str(s.dp) + " x " + str(s.micro_batch) + " = " +
           str(per_step);
  });
  if (interleaved(s) && w.global_batch % per_step == 0) {
    const I64 m = w.global_batch / per_step;
    k.require(m % s.pp == 0, [&] {
      return "interleaved needs the micro-batches per pipeline, global_batch / (dp x mb) = " +
             str(m) + ", to be a multiple of pp = " + str(s.pp);
    });
  }
  if (s.schedule == PipelineSchedule::kDualPipe && w.global_batch % per_step == 0) {
    // DualPipe's step(): "assert num_ranks % 2 == 0" and "num_chunks % 2 == 0 and num_chunks
    // >= num_ranks * 2" (deepseek-ai/DualPipe dualpipe/dualpipe.py).
    const I64 m = w.global_batch / per_step;
    k.require(s.pp % 2 == 0, [&] {
      return "dualpipe needs an even pp (each device holds stage d and stage pp - 1 - d), got pp" +
             str(s.pp);
    });
    k.require(m % 2 == 0 && m >= 2 * I64{s.pp}, [&] {
      return "dualpipe needs an even number of micro-batches per pipeline, at least 2 x pp = " +
             str(2 * I64{s.pp}) + "; global_batch / (dp x mb) = " + str(m);
    });
  }
}

void check_tensor_split_unused(const Strategy& s, const char* workload, const char* how, Sink& k) {
  k.require(s.split != KernelSplit::kTensor || s.tp == 1, [&] {
    return "tp" + str(s.tp) + ": Megatron tensor parallel applies to GPT workloads; split " +
           workload + " with " + how;
  });
}

void check_lstm(const Strategy& s, const LstmSpec& w, Sink& k) {
  no_transformer_options(s, "an LSTM", k);
  check_tensor_split_unused(s, "an LSTM's kernels",
                            "RC-{kp1}-{kp2}-d{dp}-p{lp} or CR-{kp1}-d{dp}-p{lp}", k);
  multiple(k, "batch", w.batch, "dp", s.dp);
  if (w.batch % s.dp == 0) {
    const I64 rows = w.batch / s.dp;
    if (s.micro_batch > 0) multiple(k, "batch / dp", rows, "mb", s.micro_batch);
    if (s.split == KernelSplit::kRowColumn) {
      if (s.micro_batch > 0) {
        multiple(k, "mb", s.micro_batch, "kp1", s.tp, " (RC splits the rows)");
      } else {
        multiple(k, "batch / dp", rows, "kp1", s.tp, " (RC splits the rows)");
      }
    }
  }
  // The same divisibility the partitioned graph needs (engine/graph/lstm_graph.cpp).
  if (s.split == KernelSplit::kRowColumn) {
    multiple(k, "hidden", w.hidden, "kp1", s.tp, " (RC splits the weight-gradient rows)");
    multiple(k, "hidden", w.hidden, "kp2", s.tp2, " (RC splits the gate columns)");
    multiple(k, "vocabulary", w.vocabulary, "kp2", s.tp2, " (RC splits the softmax columns)");
  } else if (s.split == KernelSplit::kColumnRow) {
    multiple(k, "hidden", w.hidden, "kp1", s.tp, " (CR splits the inner dimension)");
    multiple(k, "vocabulary", w.vocabulary, "kp1", s.tp, " (CR splits the embedding rows)");
  }
  if (s.pp > 2) {
    const I64 stages = s.pp - 2;
    k.require(w.layers % stages == 0, [&] {
      return "layers = " + str(w.layers) + " is not a multiple of pp - 2 = " + str(stages) +
             " (with pp > 2 the embedding and the softmax take a stage each)";
    });
  } else {
    multiple(k, "layers", w.layers, "pp", s.pp);
  }
}

void check_gemm(const Strategy& s, const GemmSpec& w, Sink& k) {
  no_transformer_options(s, "a GEMM", k);
  check_tensor_split_unused(s, "a GEMM", "RC-{kp1}-{kp2}-d1-p1 or CR-{kp1}-d1-p1", k);
  k.require(s.dp == 1 && s.pp == 1, [&] {
    return "a GEMM has no batch or layers to split: dp and pp must be 1, got dp" + str(s.dp) +
           " and pp" + str(s.pp);
  });
  if (s.split == KernelSplit::kRowColumn) {
    multiple(k, "m", w.m, "kp1", s.tp);
    multiple(k, "n", w.n, "kp2", s.tp2);
  } else if (s.split == KernelSplit::kColumnRow) {
    multiple(k, "k", w.k, "kp1", s.tp);
  }
}

void check(const Strategy& s, const WorkloadSpec& w, int devices, Sink& k) {
  if (!check_degrees(s, devices, k)) return;
  if (const auto* gpt = std::get_if<GptSpec>(&w)) {
    check_gpt(s, *gpt, k);
  } else if (const auto* lstm = std::get_if<LstmSpec>(&w)) {
    check_lstm(s, *lstm, k);
  } else {
    check_gemm(s, std::get<GemmSpec>(w), k);
  }
}

}  // namespace

std::vector<Diagnostic> check_strategy(const Strategy& s, const WorkloadSpec& w, int devices,
                                       const SourceLoc& where) {
  std::vector<Diagnostic> out;
  Sink k(&out, &where);
  check(s, w, devices, k);
  return out;
}

bool is_valid_strategy(const Strategy& s, const WorkloadSpec& w, int devices) {
  Sink k(nullptr, nullptr);
  check(s, w, devices, k);
  return k.ok();
}

Strategy complete_strategy(const PartialStrategy& p, const WorkloadSpec& w, int devices,
                           const SourceLoc& devices_loc) {
  Strategy s = p.strategy;
  if (const auto* gpt = std::get_if<GptSpec>(&w); gpt != nullptr && !p.has_micro_batch) {
    s.micro_batch = static_cast<int>(gpt->micro_batch);
  }
  if (devices == 0) return s;
  // The degrees other than dp as check_strategy names them ("tp8 x pp8"), and their product in
  // double: exact below 2^53, and degrees near INT_MAX must not overflow.
  const bool tensor = s.split == KernelSplit::kTensor;
  std::string degrees = tensor ? "tp" + std::to_string(s.tp) : "kp1 " + std::to_string(s.tp);
  if (s.split == KernelSplit::kRowColumn) degrees += " x kp2 " + std::to_string(s.tp2);
  if (s.cp != 1) degrees += " x cp" + std::to_string(s.cp);
  degrees += (tensor ? " x pp" : " x p") + std::to_string(s.pp);
  const double model = static_cast<double>(s.tp) * s.tp2 * s.cp * s.pp;
  const auto count = [](double n) {
    return n < 0x1p53 ? std::to_string(static_cast<I64>(n)) : std::string("too many");
  };
  if (p.has_dp) {
    const double product = model * s.dp;
    if (product != devices) {
      throw ConfigError(Diagnostic{
          devices_loc, "--devices is " + std::to_string(devices) + ", but the strategy's " +
                           degrees + (tensor ? " x dp" : " x d") + std::to_string(s.dp) + " = " +
                           count(product) + " devices (leave dp out to derive it)"});
    }
    return s;
  }
  if (model > devices || devices % static_cast<I64>(model) != 0) {
    throw ConfigError(Diagnostic{
        devices_loc, std::to_string(devices) + " is not a multiple of " + degrees + " = " +
                         count(model) + ": no whole data-parallel degree dp fills " +
                         std::to_string(devices) + " devices"});
  }
  s.dp = static_cast<int>(devices / static_cast<I64>(model));
  return s;
}

void validate_strategy(const Strategy& s, const WorkloadSpec& w, int devices,
                       const SourceLoc& where) {
  auto problems = check_strategy(s, w, devices, where);
  if (!problems.empty()) throw ConfigError(std::move(problems));
}

}  // namespace pathfinder
