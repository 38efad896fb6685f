#include "engine/parallel/strategy.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include "engine/config/enum_read.hpp"
#include "engine/config/node.hpp"
#include "engine/core/enum_table.hpp"
#include "engine/core/error.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<PipelineSchedule, 4> kSchedules{{
    {PipelineSchedule::kGpipe, "gpipe"},
    {PipelineSchedule::kOneFOneB, "1f1b"},
    {PipelineSchedule::kInterleaved, "interleaved"},
    {PipelineSchedule::kDualPipe, "dualpipe"},
}};
constexpr enum_table::Table<KernelSplit, 3> kSplits{{
    {KernelSplit::kTensor, "tensor"},
    {KernelSplit::kRowColumn, "rc"},
    {KernelSplit::kColumnRow, "cr"},
}};

// What each token sets; a slot may be set once.
enum Slot { kTp, kPp, kDp, kCp, kEp, kEtp, kMb, kV, kZero, kSchedule, kSp, kRecompute, kUlysses, kSlots };
constexpr std::array<std::string_view, kSlots> kSlotNames{
    "tensor-parallel degree", "pipeline-parallel degree", "data-parallel degree",
    "context-parallel degree", "expert-parallel degree",  "expert tensor-parallel degree",
    "micro-batch size",
    "virtual-stage count",
    "ZeRO stage",             "pipeline schedule",        "sequence parallel",
    "recompute mode",         "context-parallel kind"};
// Tokens a number follows: tp8, pp8, dp16, mb1, v2, zero1.
struct NumberToken {
  std::string_view prefix;
  Slot slot;
  int Strategy::*field;
  int min;
};
constexpr std::array<NumberToken, 9> kNumberTokens{{{"tp", kTp, &Strategy::tp, 1},
                                                    {"pp", kPp, &Strategy::pp, 1},
                                                    {"dp", kDp, &Strategy::dp, 1},
                                                    {"cp", kCp, &Strategy::cp, 1},
                                                    {"ep", kEp, &Strategy::ep, 1},
                                                    {"etp", kEtp, &Strategy::etp, 1},
                                                    {"mb", kMb, &Strategy::micro_batch, 0},
                                                    {"v", kV, &Strategy::virtual_stages, 1},
                                                    {"zero", kZero, &Strategy::zero, 0}}};
constexpr std::string_view kRecomputePrefix = "recompute=";

// none, selective, full, or selective modules joined by '+' (selective_modules); the attention
// core alone is plain selective.
std::optional<std::pair<Recompute, unsigned>> parse_recompute_spec(std::string_view mode) {
  if (const auto r = parse_recompute(mode)) return std::pair{*r, 0u};
  const auto m = parse_recompute_modules(mode);
  if (!m) return std::nullopt;
  return std::pair{Recompute::kSelective, *m == kRecomputeCoreAttn ? 0u : *m};
}
std::vector<std::string> recompute_words() {
  std::vector<std::string> out = valid_recomputes();
  for (const auto& m : valid_recompute_modules()) out.push_back(m);
  return out;
}
std::string recompute_alternatives() {
  return join_alternatives(valid_recomputes()) + ", or modules joined by '+' of " +
         join_alternatives(valid_recompute_modules());
}
constexpr std::string_view kEtpRule =
    "the experts' tensor-parallel degree is 1 (whole experts) or the tensor-parallel degree (tp";
std::string str_tp(int tp) { return std::to_string(tp); }

// etp equal to tp is the default, 0; true unless etp is neither 1 nor tp.
bool normalize_etp(Strategy& s) {
  if (s.etp == s.tp) s.etp = 0;
  return s.etp == 0 || s.etp == 1;
}

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string valid_tokens() {
  return join_alternatives({"tpN", "ppN", "dpN", "cpN", "ulysses", "epN", "etp1", "mbN", "gpipe", "1f1b",
                            "interleaved", "dualpipe", "vN", "sp", "zero0..zero3",
                            "recompute=none|selective|full"});
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}
// A whole number of digits only; nullopt for anything else or one that overflows an int.
std::optional<int> digits(std::string_view s) {
  int v = 0;
  if (!all_digits(s)) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_tokens(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dash = text.find('-', start);
    out.push_back(text.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) return out;
    start = dash + 1;
  }
}

// The paper notation's parts after RC or CR.
struct PaperPart {
  std::string_view prefix;  // "" for a bare number, else "d" or "p"
  std::string_view name;    // for messages
};

// Parses either notation into s; returns the error message, empty on success.
class StrategyParser {
 public:
  explicit StrategyParser(std::string_view text) : text_(text) {}

  std::string run() {
    if (text_.empty()) return "empty strategy; expected tokens such as tp8-pp8-dp16-mb1-1f1b";
    const std::vector<std::string_view> tokens = split_tokens(text_);
    for (const auto t : tokens) {
      if (t.empty()) {
        return "empty token in " + quote(text_) + " (a '-' at an end or two in a row)";
      }
    }
    if (is_paper_prefix(tokens[0])) {
      if (std::string e = paper(tokens); !e.empty()) return e;
    }
    for (std::size_t i = options_from_; i < tokens.size(); ++i) {
      if (std::string e = option(tokens[i], i == 0); !e.empty()) return e;
    }
    if (!set_[kV].empty() && s.schedule != PipelineSchedule::kInterleaved) {
      return quote(set_[kV]) + ": virtual stages need the interleaved schedule";
    }
    return normalize_etp(s) ? std::string{}
                            : quote(set_[kEtp]) + ": " + std::string(kEtpRule) + str_tp(s.tp) + ")";
  }

  Strategy s;
  // After run(): whether dp and the micro-batch size were written (the paper notation writes
  // d{dp} and defines micro-batch 0).
  [[nodiscard]] bool has_dp() const { return !set_[kDp].empty() || options_from_ > 0; }
  [[nodiscard]] bool has_micro_batch() const { return !set_[kMb].empty() || options_from_ > 0; }

 private:
  static bool is_paper_prefix(std::string_view t) {
    return t == "RC" || t == "rc" || t == "CR" || t == "cr";
  }

  // RC-{kp1}-{kp2}-d{dp}-p{lp} or CR-{kp1}-d{dp}-p{lp} at the start of tokens.
  std::string paper(const std::vector<std::string_view>& tokens) {
    const bool rc = tokens[0] == "RC" || tokens[0] == "rc";
    s.split = rc ? KernelSplit::kRowColumn : KernelSplit::kColumnRow;
    s.micro_batch = 0;
    const std::string form = rc ? "RC-{kp1}-{kp2}-d{dp}-p{lp}, e.g. RC-4-2-d8-p2"
                                : "CR-{kp1}-d{dp}-p{lp}, e.g. CR-8-d8-p1";
    std::vector<std::pair<PaperPart, int*>> parts{{{"", "kp1"}, &s.tp}};
    if (rc) parts.push_back({{"", "kp2"}, &s.tp2});
    parts.push_back({{"d", "dp"}, &s.dp});
    parts.push_back({{"p", "lp"}, &s.pp});
    std::size_t next = 1;
    for (const auto& [part, field] : parts) {
      const std::string what = part.prefix.empty()
                                   ? std::string(part.name) + " (a number)"
                                   : std::string(part.prefix) + "{" + std::string(part.name) + "}";
      if (next == tokens.size())
        return quote(text_) + " ends before " + what + "; expected " + form;
      const std::string_view t = tokens[next++];
      const auto v =
          t.starts_with(part.prefix) ? digits(t.substr(part.prefix.size())) : std::nullopt;
      if (!v) return quote(t) + ": expected " + what + " in " + form;
      if (*v < 1) return quote(t) + ": " + std::string(part.name) + " must be at least 1";
      *field = *v;
    }
    options_from_ = next;
    return {};
  }

  std::string option(std::string_view t, bool first) {
    if (is_paper_prefix(t)) {
      return quote(t) + ": the paper notation must come first, as in RC-4-2-d8-p2 or CR-8-d8-p1";
    }
    for (const auto& n : kNumberTokens) {
      if (!t.starts_with(n.prefix)) continue;
      const std::string_view num = t.substr(n.prefix.size());
      if (!all_digits(num)) continue;
      if (options_from_ > 0 && (n.slot == kTp || n.slot == kPp || n.slot == kDp)) {
        return quote(t) + ": the paper notation already gives kp, dp and lp";
      }
      const auto v = digits(num);
      if (!v) return quote(t) + ": the " + std::string(kSlotNames[n.slot]) + " is too large";
      if (n.slot == kZero && *v > kMaxZeroStage) {
        return quote(t) + ": the ZeRO stage must be 0, 1, 2 or 3";
      }
      if (*v < n.min) {
        return quote(t) + ": the " + std::string(kSlotNames[n.slot]) + " must be at least 1";
      }
      if (std::string e = claim(n.slot, t); !e.empty()) return e;
      s.*n.field = *v;
      return {};
    }
    if (const auto sched = parse_pipeline_schedule(t)) {
      s.schedule = *sched;
      return claim(kSchedule, t);
    }
    if (t == "sp") {
      s.sequence_parallel = true;
      return claim(kSp, t);
    }
    if (t == "ulysses") {
      s.ulysses = true;
      return claim(kUlysses, t);
    }
    if (t.starts_with(kRecomputePrefix)) {
      const std::string_view mode = t.substr(kRecomputePrefix.size());
      const auto r = parse_recompute_spec(mode);
      if (!r) {
        return quote(t) + ": unknown recompute mode " + quote(mode) + "; expected " +
               recompute_alternatives() + did_you_mean(mode, recompute_words());
      }
      s.recompute = r->first;
      s.recompute_modules = r->second;
      return claim(kRecompute, t);
    }
    // A number prefix alone ("mb-1" splits into "mb" and "1"): its number is missing.
    for (const std::string_view prefix : {"tp", "pp", "dp", "cp", "ep", "etp", "mb", "v", "zero"}) {
      if (t == prefix) {
        return quote(t) + ": expected a whole number after \"" + std::string(prefix) + "\" (" +
               std::string(prefix) + "N, e.g. " + std::string(prefix) + (prefix == "zero" ? "1" : "4") +
               "; '-' separates tokens)";
      }
    }
    return quote(t) + ": unknown token; expected " + valid_tokens() +
           did_you_mean(t, candidates(t, first));
  }

  std::string claim(Slot slot, std::string_view t) {
    if (!set_[slot].empty()) {
      return quote(t) + ": " + std::string(kSlotNames[slot]) + " given twice (" +
             std::string(set_[slot]) + " and " + std::string(t) + ")";
    }
    set_[slot] = t;
    return {};
  }

  // Spellings close to an unknown token: each number prefix with the token's trailing digits,
  // every word token, and the paper prefixes where they may stand.
  static std::vector<std::string> candidates(std::string_view t, bool first) {
    std::vector<std::string> out;
    const std::size_t d = t.find_last_not_of("0123456789") + 1;
    if (d < t.size()) {
      for (const auto& n : kNumberTokens)
        out.push_back(std::string(n.prefix) + std::string(t.substr(d)));
    }
    for (const auto& name : valid_pipeline_schedules()) out.push_back(name);
    out.emplace_back("sp");
    out.emplace_back("ulysses");
    for (const auto& r : valid_recomputes()) out.push_back(std::string(kRecomputePrefix) + r);
    if (first) {
      out.emplace_back("RC");
      out.emplace_back("CR");
    }
    return out;
  }

  std::string_view text_;
  std::array<std::string_view, kSlots> set_{};  // the token that set each slot
  std::size_t options_from_ = 0;                // tokens before it were the paper notation
};

void append_options(std::string& out, const Strategy& s, bool paper) {
  if (s.cp != 1) out += "-cp" + std::to_string(s.cp);
  if (s.ulysses) out += "-ulysses";
  if (s.ep != 1) out += "-ep" + std::to_string(s.ep);
  if (s.etp != 0) out += "-etp" + std::to_string(s.etp);
  if (!paper || s.micro_batch != 0) out += "-mb" + std::to_string(s.micro_batch);
  if (!paper || s.schedule != PipelineSchedule::kOneFOneB) {
    out += "-" + std::string(to_string(s.schedule));
  }
  if (s.schedule == PipelineSchedule::kInterleaved || s.virtual_stages != 1) {
    out += "-v" + std::to_string(s.virtual_stages);
  }
  if (s.sequence_parallel) out += "-sp";
  if (s.zero != 0) out += "-zero" + std::to_string(s.zero);
  if (s.recompute_modules != 0) {
    out += "-recompute=" + recompute_modules_name(s.recompute_modules);
  } else if (s.recompute != Recompute::kNone) {
    out += "-recompute=" + std::string(to_string(s.recompute));
  }
}

}  // namespace

std::string_view to_string(PipelineSchedule s) { return enum_table::name(kSchedules, s); }
std::string_view to_string(KernelSplit k) { return enum_table::name(kSplits, k); }
std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view s) {
  return enum_table::parse(kSchedules, s);
}
std::optional<KernelSplit> parse_kernel_split(std::string_view s) {
  return enum_table::parse(kSplits, s);
}
std::vector<std::string> valid_pipeline_schedules() { return enum_table::names(kSchedules); }
std::vector<std::string> valid_kernel_splits() { return enum_table::names(kSplits); }

SourceLoc strategy_source() { return SourceLoc{"strategy", 0, 0, ""}; }

Strategy parse_strategy(std::string_view text) { return parse_partial_strategy(text).strategy; }

PartialStrategy parse_partial_strategy(std::string_view text) {
  StrategyParser p(text);
  if (std::string e = p.run(); !e.empty()) throw ConfigError(Diagnostic{strategy_source(), e});
  return {p.s, p.has_dp(), p.has_micro_batch()};
}

Strategy read_strategy(const ConfigNode& n) { return read_partial_strategy(n).strategy; }

PartialStrategy read_partial_strategy(const ConfigNode& n) {
  if (n.is_scalar()) {
    const auto text = n.as<std::string>();
    StrategyParser p(text);
    if (std::string e = p.run(); !e.empty()) throw n.error(e);
    return {p.s, p.has_dp(), p.has_micro_batch()};
  }
  if (!n.is_map()) {
    throw n.error(
        "expected a strategy such as \"tp8-pp8-dp16-mb1-1f1b\" or a map of tp, tp2, "
        "pp, dp, cp, ulysses, ep, etp, micro_batch, schedule, virtual_stages, sequence_parallel, "
        "zero, recompute and split");
  }
  Strategy s;
  s.split = read_enum(n, "split", parse_kernel_split, valid_kernel_splits, KernelSplit::kTensor);
  s.tp = n.optional_positive<int>("tp").value_or(1);
  s.tp2 = n.optional_positive<int>("tp2").value_or(1);
  if (s.tp2 != 1 && s.split != KernelSplit::kRowColumn) {
    throw n.error_at("tp2", "tp2 is the second kernel dimension of split rc; split is " +
                                std::string(to_string(s.split)));
  }
  s.pp = n.optional_positive<int>("pp").value_or(1);
  s.dp = n.optional_positive<int>("dp").value_or(1);
  s.cp = n.optional_positive<int>("cp").value_or(1);
  s.ulysses = n.get_or<bool>("ulysses", false);
  s.ep = n.optional_positive<int>("ep").value_or(1);
  s.etp = n.optional_positive<int>("etp").value_or(0);
  if (!normalize_etp(s)) {
    throw n.error_at("etp", "expected 1 or " + str_tp(s.tp) + ": " + std::string(kEtpRule) +
                                str_tp(s.tp) + "), got " + n.quoted("etp"));
  }
  s.micro_batch =
      n.get_non_negative_or<int>("micro_batch", s.split == KernelSplit::kTensor ? 1 : 0);
  s.schedule = read_enum(n, "schedule", parse_pipeline_schedule, valid_pipeline_schedules,
                         PipelineSchedule::kOneFOneB);
  s.virtual_stages = n.optional_positive<int>("virtual_stages").value_or(1);
  if (s.virtual_stages != 1 && s.schedule != PipelineSchedule::kInterleaved) {
    throw n.error_at("virtual_stages", "virtual stages need schedule: interleaved");
  }
  s.sequence_parallel = n.get_or<bool>("sequence_parallel", false);
  s.zero = n.get_non_negative_or<int>("zero", 0);
  if (s.zero > kMaxZeroStage) {
    throw n.error_at("zero", "expected a ZeRO stage 0, 1, 2 or 3, got " + n.quoted("zero"));
  }
  {
    const auto r = parse_recompute_spec(n.get_or<std::string>("recompute", "none"));
    if (!r) {
      throw n.error_at("recompute", "expected " + recompute_alternatives() + ", got " +
                                        n.quoted("recompute"));
    }
    s.recompute = r->first;
    s.recompute_modules = r->second;
  }
  n.finish();
  return {s, n.has("dp"), n.has("micro_batch") || s.split != KernelSplit::kTensor};
}

std::int64_t stage_layers(std::int64_t layers, int stages, int stage) {
  PF_ASSERT(stages >= 1 && stage >= 0 && stage < stages && layers >= stages);
  const std::int64_t extra = layers % stages;
  return layers / stages + (stage >= 1 && stage <= extra ? 1 : 0);
}

std::int64_t stage_first_layer(std::int64_t layers, int stages, int stage) {
  PF_ASSERT(stages >= 1 && stage >= 0 && stage < stages && layers >= stages);
  const std::int64_t extra = layers % stages;
  return stage * (layers / stages) + std::min<std::int64_t>(stage > 0 ? stage - 1 : 0, extra);
}

std::string to_string(const Strategy& s) {
  std::string out;
  switch (s.split) {
    case KernelSplit::kTensor:
      out =
          "tp" + std::to_string(s.tp) + "-pp" + std::to_string(s.pp) + "-dp" + std::to_string(s.dp);
      break;
    case KernelSplit::kRowColumn:
      out = "RC-" + std::to_string(s.tp) + "-" + std::to_string(s.tp2) + "-d" +
            std::to_string(s.dp) + "-p" + std::to_string(s.pp);
      break;
    case KernelSplit::kColumnRow:
      out =
          "CR-" + std::to_string(s.tp) + "-d" + std::to_string(s.dp) + "-p" + std::to_string(s.pp);
      break;
  }
  append_options(out, s, s.split != KernelSplit::kTensor);
  return out;
}

}  // namespace pathfinder
