#include "engine/parallel/strategy_enumeration.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <variant>

#include "engine/parallel/strategy_check.hpp"

namespace pathfinder {
namespace {

using I64 = std::int64_t;

bool power_of_two(I64 n) { return n > 0 && (n & (n - 1)) == 0; }

// Divisors of n up to `limit`, ascending; powers of two only when asked.
std::vector<int> divisors(I64 n, I64 limit, bool pow2) {
  limit = std::min<I64>(limit, std::numeric_limits<int>::max());
  std::vector<I64> low, high;
  for (I64 d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  std::vector<int> out;
  for (const I64 d : low) {
    if (d <= limit && (!pow2 || power_of_two(d))) out.push_back(static_cast<int>(d));
  }
  return out;
}

template <class T>
bool contains(const std::vector<T>& v, T x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

class Enumerator {
 public:
  Enumerator(const WorkloadSpec& w, int devices, const EnumerateOptions& o)
      : w_(w), devices_(devices), o_(o) {
    // The first module set whose every module the model has (others the check would refuse).
    if (const auto* g = std::get_if<GptSpec>(&w_)) {
      for (const unsigned m : o_.recompute_modules) {
        const bool mla = (m & kRecomputeMlaUpProj) == 0 || g->mla();
        const bool moe = (m & (kRecomputeMoe | kRecomputeMoeAct)) == 0 || g->moe();
        const bool shared = (m & kRecomputeSharedExperts) == 0 || g->shared_experts > 0;
        if (m != 0 && mla && moe && shared) {
          modules_.push_back(m);
          break;
        }
      }
    }
  }

  std::vector<Strategy> run() && {
    if (devices_ < 1) return {};
    if (const auto* gpt = std::get_if<GptSpec>(&w_)) {
      gpt_shapes(*gpt);
    } else {
      kernel_split_shapes();
    }
    return std::move(out_);
  }

 private:
  [[nodiscard]] std::vector<int> device_divisors() const {
    return divisors(devices_, devices_, o_.powers_of_two);
  }
  [[nodiscard]] bool valid(const Strategy& s) const {
    return (!o_.powers_of_two || power_of_two(s.dp)) && is_valid_strategy(s, w_, devices_);
  }

  // The innermost loops: ZeRO stage (when dp > 1) and recompute mode.
  void zero_and_recompute(Strategy s, const std::vector<Recompute>& modes) {
    for (const int z : s.dp > 1 ? o_.zero_stages : kNoZero) {
      s.zero = z;
      for (const Recompute r : modes) {
        s.recompute = r;
        s.recompute_modules = 0;
        if (!valid(s)) continue;
        out_.push_back(s);
        if (r != Recompute::kSelective) continue;
        for (const unsigned m : modules_) {  // valid as plain selective is
          s.recompute_modules = m;
          out_.push_back(s);
        }
      }
    }
  }

  void gpt_shapes(const GptSpec& g) {
    const std::vector<int> divs = device_divisors();
    // Context parallelism only where it can run: fused attention; by ring (the sequence in
    // 2·cp chunks) or by all-to-all (heads split over cp).
    const bool context = o_.context_parallel && g.attention == AttentionKind::kFlash;
    for (const int tp : divs) {
      for (const int cp : divs) {
        if (cp > 1 && (!context || (devices_ / tp) % cp != 0)) continue;
        for (const int pp : divs) {
          if ((devices_ / tp / cp) % pp != 0) continue;
          for (const bool ulysses : {false, true}) {
            if (ulysses && cp == 1) continue;
            Strategy base;
            base.tp = tp;
            base.cp = cp;
            base.ulysses = ulysses;
            base.pp = pp;
            base.dp = devices_ / tp / cp / pp;
            base.micro_batch = 1;  // dp x 1 must divide global_batch, as dp x mb for any mb
            // A mixture of experts with tp > 1 runs only with sequence parallelism: the base
            // takes it, or its check would refuse every option.
            base.sequence_parallel = g.moe() && tp > 1;
            // Every rule the base breaks (heads, layers, batch, sequence) binds every option too.
            if (!valid(base)) continue;
            const I64 limit = o_.max_micro_batch > 0 ? o_.max_micro_batch : g.global_batch;
            // Experts split over the tensor group (etp 0) or whole (etp 1, tp > 1); expert
            // parallel degrees: divisors of the ranks the expert group is made of (context and
            // data ranks, with whole experts the tensor ranks too) that divide experts.
            const bool moe = g.moe() && o_.expert_parallel;
            for (const int etp : {0, 1}) {
              if (etp == 1 && (!moe || tp == 1)) continue;
              base.etp = etp;
              const int ranks = (etp == 1 ? tp : 1) * cp * base.dp;
              for (const int ep : divisors(moe ? ranks : 1, ranks, o_.powers_of_two)) {
                if (ep > 1 && g.experts % ep != 0) continue;
                // Whole experts without expert parallelism hold every expert on every rank.
                if (etp == 1 && ep == 1) continue;
                base.ep = ep;
                for (const int mb : divisors(g.global_batch / base.dp, limit, o_.powers_of_two)) {
                  base.micro_batch = mb;
                  gpt_schedules(g, base);
                }
              }
            }
          }
        }
      }
    }
  }

  void gpt_schedules(const GptSpec& g, Strategy s) {
    if (s.pp == 1) {
      if (!contains(o_.schedules, PipelineSchedule::kOneFOneB) &&
          !contains(o_.schedules, PipelineSchedule::kGpipe)) {
        return;
      }
      s.schedule = PipelineSchedule::kOneFOneB;
      gpt_options(s);
      return;
    }
    for (const PipelineSchedule sched : o_.schedules) {
      s.schedule = sched;
      if (sched != PipelineSchedule::kInterleaved) {
        s.virtual_stages = 1;
        gpt_options(s);
        continue;
      }
      const I64 limit = o_.max_virtual_stages > 0 ? o_.max_virtual_stages : g.layers;
      for (const int v : divisors(g.layers / s.pp, limit, false)) {
        // The search keeps to even chunks; an uneven split is the user's to write.
        if (v < 2 || g.layers % (I64{s.pp} * v) != 0) continue;
        s.virtual_stages = v;
        gpt_options(s);
      }
    }
  }

  void gpt_options(Strategy s) {
    for (const bool sp : {false, true}) {
      if (sp && (s.tp == 1 || !o_.sequence_parallel)) continue;
      s.sequence_parallel = sp;
      zero_and_recompute(s, o_.recompute);
    }
  }

  // LSTM and GEMM: DeepFlow's RC and CR.
  void kernel_split_shapes() {
    const std::vector<int> divs = device_divisors();
    const bool rc = contains(o_.kernel_splits, KernelSplit::kRowColumn);
    for (const KernelSplit split : o_.kernel_splits) {
      if (split == KernelSplit::kTensor) continue;
      for (const int kp1 : divs) {
        if (split == KernelSplit::kColumnRow && kp1 == 1 && rc) continue;
        for (const int kp2 : divs) {
          if (split == KernelSplit::kColumnRow && kp2 > 1) break;
          if ((devices_ / kp1) % kp2 != 0) continue;
          for (const int pp : divs) {
            if ((devices_ / kp1 / kp2) % pp != 0) continue;
            Strategy s;
            s.split = split;
            s.tp = kp1;
            s.tp2 = kp2;
            s.pp = pp;
            s.dp = devices_ / kp1 / kp2 / pp;
            s.micro_batch = 0;
            if (valid(s)) zero_and_recompute(s, kNoRecompute);
          }
        }
      }
    }
  }

  inline static const std::vector<int> kNoZero{0};
  inline static const std::vector<Recompute> kNoRecompute{Recompute::kNone};

  const WorkloadSpec& w_;
  int devices_;
  const EnumerateOptions& o_;
  std::vector<unsigned> modules_;  // o_.recompute_modules the model has
  std::vector<Strategy> out_;
};

}  // namespace

std::vector<Strategy> enumerate_strategies(const WorkloadSpec& w, int devices,
                                           const EnumerateOptions& options) {
  return Enumerator(w, devices, options).run();
}

EnumerateOptions enumerate_options(const ParallelismSupport& support) {
  EnumerateOptions o;
  if (support.offers(PipelineSchedule::kDualPipe)) o.schedules.push_back(PipelineSchedule::kDualPipe);
  return o;
}

}  // namespace pathfinder
