#include "search/search_types.hpp"

#include <cmath>
#include <utility>

#include "engine/core/enum_table.hpp"
#include "engine/core/format.hpp"
#include "engine/core/text.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<SearchAlgorithm, 5> kAlgorithms{{
    {SearchAlgorithm::kPgd, "pgd"},
    {SearchAlgorithm::kCobyla, "cobyla"},
    {SearchAlgorithm::kSlsqp, "slsqp"},
    {SearchAlgorithm::kDirect, "direct"},
    {SearchAlgorithm::kIsres, "isres"},
}};
constexpr enum_table::Table<StopReason, 7> kStopReasons{{
    {StopReason::kBudget, "budget spent"},
    {StopReason::kConverged, "converged"},
    {StopReason::kSmallStep, "step below tolerance"},
    {StopReason::kZeroGradient, "zero gradient"},
    {StopReason::kNoFeasibleStart, "no feasible start"},
    {StopReason::kRoundoff, "roundoff limited"},
    {StopReason::kFailed, "failed"},
}};

Diagnostic problem(std::string field, std::string message) {
  return Diagnostic{SourceLoc{"search options", 0, 0, std::move(field)}, std::move(message)};
}

}  // namespace

std::string_view to_string(SearchAlgorithm a) { return enum_table::name(kAlgorithms, a); }
std::optional<SearchAlgorithm> parse_search_algorithm(std::string_view s) {
  return enum_table::parse(kAlgorithms, s);
}
std::vector<std::string> valid_search_algorithms() { return enum_table::names(kAlgorithms); }
SearchAlgorithm search_algorithm_from(std::string_view s, const SourceLoc& where) {
  if (const auto a = parse_search_algorithm(s)) return *a;
  const auto valid = valid_search_algorithms();
  throw ConfigError(Diagnostic{where, "unknown optimizer \"" + std::string(s) + "\" (expected " +
                                          join_alternatives(valid) + ")" + did_you_mean(s, valid)});
}
std::string_view to_string(StopReason r) { return enum_table::name(kStopReasons, r); }

std::vector<Diagnostic> SearchOptions::problems() const {
  std::vector<Diagnostic> out;
  const auto at_least = [&](const char* field, long v, long min, const char* note = "") {
    if (v < min) {
      out.push_back(
          problem(field, printf_string("expected a whole number >= %ld%s, got %ld", min, note, v)));
    }
  };
  // Written so that NaN fails every rule.
  const auto in_range = [&](const char* field, double v, bool ok, const char* rule) {
    if (!ok || std::isnan(v)) {
      out.push_back(problem(field, printf_string("expected %s, got %g", rule, v)));
    }
  };
  const auto within = [&](const char* field, long v, long min, long max) {
    if (v < min || v > max) {
      out.push_back(
          problem(field, printf_string("expected a whole number in [%ld, %ld], got %ld", min, max, v)));
    }
  };
  within("restarts", restarts, 1, kMaxRestarts);
  within("steps", steps, 1, kMaxSteps);
  in_range("learning_rate", learning_rate, learning_rate > 0.0 && std::isfinite(learning_rate),
           "a positive finite number");
  in_range("momentum", momentum, momentum >= 0.0 && momentum < 1.0, "a number in [0, 1)");
  in_range("backtrack", backtrack, backtrack > 0.0 && backtrack < 1.0, "a number in (0, 1)");
  in_range("fd_step", fd_step, fd_step > 0.0 && fd_step <= 0.5, "a number in (0, 0.5]");
  in_range("tolerance", tolerance, tolerance >= 0.0 && std::isfinite(tolerance),
           "a finite number >= 0");
  at_least("patience", patience, 1);
  in_range("step_tolerance", step_tolerance, step_tolerance >= 0.0 && std::isfinite(step_tolerance),
           "a finite number >= 0");
  at_least("max_evaluations", max_evaluations, 0, " (0: automatic)");
  at_least("start_draws", start_draws, 1);
  within("polish_moves", polish_moves, 0, 1000);
  if (initial && !initial->allFinite()) {
    out.push_back(problem("initial", "expected finite fractions, got a NaN or infinity"));
  }
  return out;
}

void SearchOptions::validate(int dim) const {
  auto out = problems();
  if (dim > 0 && initial && initial->size() != dim) {
    out.push_back(problem("initial", printf_string("expected %d fractions (the space's "
                                                   "dimension, 3 x components), got %d",
                                                   dim, static_cast<int>(initial->size()))));
  }
  if (!out.empty()) throw ConfigError(std::move(out));
}

Start draw_start(const Objective& f, const SplitSpace& space, const SearchOptions& options,
                 int index) {
  Start s;
  const auto consider = [&](Eigen::VectorXd x) {
    const double v = evaluate_objective(f, x);
    ++s.evaluations;
    if (s.x.size() == 0 || std::isfinite(v)) {
      s.x = std::move(x);
      s.f = v;
    }
    return std::isfinite(v);
  };
  if (index == 0 && options.initial && consider(space.project(*options.initial))) return s;
  std::mt19937_64 rng = restart_rng(options.seed, index);
  for (int draw = 0; draw < options.start_draws; ++draw) {
    if (consider(space.sample(rng))) return s;
  }
  return s;
}

SearchResult summarize(SearchAlgorithm algorithm, std::vector<RestartResult> restarts) {
  SearchResult r;
  r.algorithm = algorithm;
  r.restarts = std::move(restarts);
  for (std::size_t i = 0; i < r.restarts.size(); ++i) {
    const RestartResult& s = r.restarts[i];
    r.evaluations += s.evaluations;
    r.steps += s.steps;
    if (std::isfinite(s.f) && s.f < r.f) {
      r.f = s.f;
      r.x = s.x;
      r.best_restart = static_cast<int>(i);
    }
  }
  return r;
}

std::string SearchResult::brief_report() const {
  const std::string head = std::string(to_string(algorithm)) + ": ";
  const std::string tail = printf_string("; %ld evaluations, %ld steps", evaluations, steps);
  if (!feasible()) {
    return head + printf_string("no feasible point in %zu restarts", restarts.size()) + tail;
  }
  return head + printf_string("f %.6g from restart %d of %zu", f, best_restart, restarts.size()) +
         tail;
}

std::string SearchResult::full_report() const {
  std::string out = brief_report() + "\n";
  for (std::size_t i = 0; i < restarts.size(); ++i) {
    const RestartResult& s = restarts[i];
    out += printf_string("  restart %zu: f %.6g, %d steps, %ld evaluations, %s\n", i, s.f, s.steps,
                         s.evaluations, std::string(to_string(s.stop)).c_str());
  }
  return out;
}

}  // namespace pathfinder
