#include "engine/explore/search_study.hpp"

#include "search/budget_moves.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "engine/config/node.hpp"
#include "engine/core/format.hpp"
#include "engine/parallel/strategy_enumeration.hpp"

namespace pathfinder {
namespace {

std::string beside(const std::string& study, const std::string& relative) {
  return (std::filesystem::path(study).parent_path() / relative).lexically_normal().string();
}

// A strategy string's problems, located at the study's `strategy:` value.
PartialStrategy located_strategy(const ConfigNode& root) {
  try {
    return parse_partial_strategy(root.require<std::string>("strategy"));
  } catch (const ConfigError& e) {
    throw root.error_at("strategy", e.diagnostics().front().message);
  }
}

}  // namespace

SearchOptions read_search_options(const ConfigNode& n) {
  SearchOptions o;
  if (n.has("optimizer")) {
    o.algorithm = search_algorithm_from(n.require<std::string>("optimizer"), n.loc_of("optimizer"));
  }
  // Bounded here too, so the error points at the key (SearchOptions::validate has no file).
  const auto count = [&](const char* key, int fallback, int max) {
    const int v = n.get_or<int>(key, fallback);
    if (v < 1 || v > max) {
      throw n.error_at(key, "expected a whole number in [1, " + std::to_string(max) + "], got " +
                                n.quoted(key));
    }
    return v;
  };
  o.restarts = count("restarts", o.restarts, kMaxRestarts);
  o.steps = count("steps", o.steps, kMaxSteps);
  o.learning_rate = n.get_or<double>("learning_rate", o.learning_rate);
  o.momentum = n.get_or<double>("momentum", o.momentum);
  o.fd_step = n.get_or<double>("fd_step", o.fd_step);
  o.seed = static_cast<std::uint64_t>(n.get_or<std::int64_t>("seed", 1));
  o.polish_moves = n.get_or<int>("polish_moves", o.polish_moves);
  if (o.polish_moves < 0 || o.polish_moves > 1000) {
    throw n.error_at("polish_moves", "expected a whole number in [0, 1000], got " +
                                         n.quoted("polish_moves"));
  }
  n.finish();
  return o;
}

SearchStudy load_search_study(const std::string& path) {
  return read_search_study(ConfigNode::load_file(path));
}

SearchStudy read_search_study(const ConfigNode& root) {
  const std::string& path = root.file();
  SearchStudy s;
  s.file = path;
  s.name = root.require<std::string>("name");
  check_single_line(root, "name", s.name);  // printed, and written into PREFIX.yaml
  (void)root.optional<std::string>("question");
  s.template_path = beside(path, root.require<std::string>("template"));
  s.workload_path = beside(path, root.require<std::string>("workload"));
  s.template_loc = root.loc_of("template");
  s.workload_loc = root.loc_of("workload");
  s.devices = root.require_positive<int>("devices");
  if (root.get_or<std::string>("strategy", "search") != "search") {
    s.written_strategy = located_strategy(root);
    s.strategy = s.written_strategy->strategy;
    s.strategy_loc = root.loc_of("strategy");
  }
  s.shortlist = root.optional_positive<int>("shortlist").value_or(3);
  s.check_memory = root.get_or<bool>("check_memory", true);
  if (auto sw = root.optional<std::string>("software")) {
    const bool file = sw->find('/') != std::string::npos || sw->ends_with(".yaml");
    s.software = file ? beside(path, *sw) : *sw;
    s.software_loc = root.loc_of("software");
  }
  if (auto b = root.optional_child("budget")) {
    for (const char* key : {"chip_area", "node_area", "power", "perimeter"}) {
      if (auto v = b->optional<std::string>(key)) {
        s.budget.push_back(ConfigOverride{std::string("budget.") + key, *v,
                                          std::string("budget.") + key, b->loc_of(key)});
      }
    }
    b->finish();
  }
  if (auto n = root.optional_child("search")) s.options = read_search_options(*n);
  s.goal = read_goal(root);
  root.finish();
  s.options.validate();
  return s;
}

StudyOutcome run_search_study(const SearchStudy& study, const DesignEvaluator& e,
                              const ProgressCallback& progress) {
  StudyOutcome o;
  o.template_split = ResourceSplit::from_template(e.spec().tmpl).values();
  const SplitSpace space = template_split_space(e.spec().tmpl);
  std::vector<Strategy> candidates;
  if (study.strategy) {
    candidates.push_back(*study.strategy);
    o.at_template = e.evaluate(o.template_split, *study.strategy).training;
    o.strategies_ranked = 1;
  } else {
    // Only the shortlist's strategies need timing (best-first by a lower bound, for the time
    // goal); the count reported is every strategy the shortlist was chosen from.
    const std::vector<RankedStrategy> ranked = rank_strategies(
        e, o.template_split, nullptr, nullptr, static_cast<std::size_t>(std::max(study.shortlist, 0)));
    o.strategies_ranked =
        enumerate_strategies(e.workload(), e.devices(), enumerate_options(e.options().parallelism))
            .size();
    for (const RankedStrategy& r : ranked) {
      if (!r.result.feasible || static_cast<int>(candidates.size()) >= study.shortlist) break;
      candidates.push_back(r.strategy);
    }
    if (!ranked.empty()) o.at_template = ranked.front().result;
  }
  // Joint search: at every hardware point the best of the shortlisted strategies (one
  // strategy when the study fixes it), so the split and the parallelism are chosen together.
  // Restart 0 starts at the template's split.
  SearchOptions opt = study.options;
  opt.initial = o.template_split;
  const Objective f = [&e, &candidates](const Eigen::VectorXd& x) {
    return e.objective(x, candidates);
  };
  if (candidates.empty()) return o;
  o.search = minimize(f, space, opt, progress);
  if (!o.search.feasible()) return o;
  if (opt.polish_moves > 0) {  // finish with budget moves (budget_moves.hpp), serially
    const PolishResult p =
        polish_split(f, space, o.search.x, o.search.f, 0.01, 1e-3, opt.polish_moves);
    o.search.x = p.x;
    o.search.f = p.f;
    o.search.evaluations += p.evaluations;
    o.polish_moves = p.moves;
  }
  // The strategy that wins at the searched split.
  double best = std::numeric_limits<double>::infinity();
  for (const Strategy& s : candidates) {
    DesignEvaluation d = e.evaluate(o.search.x, s);
    const TrainingResult& r = d.training;
    o.tried.push_back({s, r});
    if (r.feasible && r.iteration_time.si() < best) {
      best = r.iteration_time.si();
      o.strategy = s;
      o.best = std::move(d);
    }
  }
  o.sensitivities = sensitivities(e, space, o.search.x, o.strategy);
  o.convergence = check_convergence(e, space, o.search.x, o.strategy);
  return o;
}

std::string format_outcome(const StudyOutcome& o, const DesignEvaluator& e) {
  const ArchTemplate& t = e.spec().tmpl;
  std::string out;
  if (!o.search.feasible()) {
    return "no feasible design: " + (o.at_template.reason.empty() ? std::string("every search failed")
                                                                  : o.at_template.reason) + "\n";
  }
  const double t0 = o.at_template.iteration_time.si(), t1 = o.best.training.iteration_time.si();
  out += printf_string("strategy %s (%zu ranked, best %zu searched jointly with the split)\n",
                       to_string(o.strategy).c_str(), o.strategies_ranked, o.tried.size());
  out += printf_string("iteration: template split %s -> searched split %s (%.2fx), MFU %.1f%%\n\n",
                       format_seconds(t0).c_str(), format_seconds(t1).c_str(),
                       t1 > 0 && o.at_template.feasible ? t0 / t1 : 0.0,
                       100.0 * o.best.training.mfu);
  const GoalKind goal = e.goal().kind;
  if (goal != GoalKind::kTime) {
    const double m0 = measure(goal, o.at_template), m1 = measure(goal, o.best.training);
    out += printf_string("objective %s: template split %.6g %s -> searched split %.6g %s (%.2fx)\n\n",
                         std::string(to_string(goal)).c_str(), m0,
                         std::string(goal_unit(goal)).c_str(), m1,
                         std::string(goal_unit(goal)).c_str(),
                         m1 > 0 && o.at_template.feasible ? m0 / m1 : 0.0);
  }
  const std::string unit(goal_unit(goal));
  out += printf_string("%-14s %15s %15s %15s %11s %11s %11s\n", "component", "area", "power",
                       "perimeter", (unit + " per mm2").c_str(), (unit + " per W").c_str(),
                       (unit + " per mm").c_str());
  const int h = static_cast<int>(t.split.size());
  for (int i = 0; i < h; ++i) {
    const auto frac = [&](int b) {
      return printf_string("%.3f->%.3f", o.template_split[b * h + i], o.search.x[b * h + i]);
    };
    const Sensitivity& s = o.sensitivities.components[static_cast<std::size_t>(i)];
    out += printf_string("%-14s %15s %15s %15s %+11.3g %+11.3g %+11.3g\n",
                         t.split[static_cast<std::size_t>(i)].name.c_str(), frac(0).c_str(),
                         frac(1).c_str(), frac(2).c_str(), s.per_mm2, s.per_watt, s.per_mm);
  }
  const auto& b = o.sensitivities.binds;
  out += printf_string("\nbinding budgets: area %s, power %s, perimeter %s\n", b[0] ? "yes" : "no",
                       b[1] ? "yes" : "no", b[2] ? "yes" : "no");
  out += o.search.brief_report() +
         (o.polish_moves > 0 ? printf_string(", then %d budget moves of 1%%", o.polish_moves) : "") +
         "\n";
  out += o.convergence.converged
             ? printf_string("converged: no move of 1%% of a budget saves more than 0.1%% (%d tried)\n",
                             o.convergence.moves_tried)
             : "NOT converged: " + o.convergence.move +
                   "; rerun with more steps or restarts (search --start PREFIX.yaml continues from "
                   "this split)\n";
  for (const StrategyOutcome& s : o.tried) {
    out += printf_string("  at the searched split: %-48s %s\n", to_string(s.strategy).c_str(),
                         s.result.feasible ? format_seconds(s.result.iteration_time.si()).c_str()
                                           : ("infeasible: " + s.result.reason).c_str());
  }
  return out;
}

std::string outcome_yaml(const StudyOutcome& o, const DesignEvaluator& e) {
  const ArchTemplate& t = e.spec().tmpl;
  const int h = static_cast<int>(t.split.size());
  std::string out = printf_string("# searched split for %s; strategy %s; iteration %.6g s "
                                  "(template split %.6g s)\nsplit:\n",
                                  t.name.c_str(), to_string(o.strategy).c_str(),
                                  o.best.training.iteration_time.si(),
                                  o.at_template.iteration_time.si());
  if (o.search.feasible()) {
    out.insert(out.find("\nsplit:\n") + 1,
               o.convergence.converged ? std::string("# converged (KKT check: no 1% budget move saves 0.1%)\n")
                                       : "# NOT converged: " + o.convergence.move + "\n");
  }
  // perimeter only for the components that can have a share of it (the template rejects it
  // elsewhere), so the block reads back as a template's split: or search --start.
  const SplitSpace space = template_split_space(t);
  for (int i = 0; o.search.feasible() && i < h; ++i) {
    out += printf_string("  %s: {area: %.5f, power: %.5f", t.split[static_cast<std::size_t>(i)].name,
                         o.search.x[i], o.search.x[h + i]);
    if (space.upper()[2 * h + i] > 0.0) out += printf_string(", perimeter: %.5f", o.search.x[2 * h + i]);
    out += "}\n";
  }
  return out;
}

nlohmann::ordered_json outcome_json(const StudyOutcome& o, const DesignEvaluator& e) {
  const ArchTemplate& t = e.spec().tmpl;
  nlohmann::ordered_json j;
  j["feasible"] = o.search.feasible();
  if (!o.search.feasible()) {
    j["reason"] = o.at_template.reason.empty() ? "the search found no feasible design"
                                               : o.at_template.reason;
    j["iteration_s"] = nullptr;
    return j;
  }
  const TrainingResult& r = o.best.training;
  j["strategy"] = to_string(o.strategy);
  j["iteration_s"] = r.iteration_time.si();
  j["template_split_iteration_s"] =
      o.at_template.feasible ? nlohmann::ordered_json(o.at_template.iteration_time.si()) : nullptr;
  j["mfu"] = r.mfu;
  nlohmann::ordered_json parts;
  for (const auto& [name, time] : r.breakdown.parts()) parts[std::string(name) + "_s"] = time.si();
  j["breakdown"] = parts;
  const int h = static_cast<int>(t.split.size());
  nlohmann::ordered_json split = nlohmann::ordered_json::array();
  for (int i = 0; i < h; ++i) {
    const Sensitivity& s = o.sensitivities.components[static_cast<std::size_t>(i)];
    split.push_back({{"component", t.split[static_cast<std::size_t>(i)].name},
                     {"area", o.search.x[i]},
                     {"power", o.search.x[h + i]},
                     {"perimeter", o.search.x[2 * h + i]},
                     {"template_area", o.template_split[i]},
                     {"template_power", o.template_split[h + i]},
                     {"template_perimeter", o.template_split[2 * h + i]},
                     {"area_mm2", o.search.x[i] * t.budget.chip_area.in(units::square_millimeters)},
                     {"power_w", o.search.x[h + i] * t.budget.power.in(units::watts)},
                     {"perimeter_mm", o.search.x[2 * h + i] * t.budget.perimeter.in(units::millimeters)},
                     {"s_per_mm2", s.per_mm2},
                     {"s_per_w", s.per_watt},
                     {"s_per_mm", s.per_mm}});
  }
  j["split"] = split;
  const auto& b = o.sensitivities.binds;
  j["binding"] = {{"area", b[0]}, {"power", b[1]}, {"perimeter", b[2]}};
  j["converged"] = o.convergence.converged;
  j["convergence"] = {{"best_move", o.convergence.move},
                      {"saving", o.convergence.saving},
                      {"moves_tried", o.convergence.moves_tried}};
  j["search"] = {{"algorithm", std::string(to_string(o.search.algorithm))},
                 {"restarts", o.search.restarts.size()},
                 {"best_restart", o.search.best_restart},
                 {"evaluations", o.search.evaluations},
                 {"steps", o.search.steps},
                 {"polish_moves", o.polish_moves}};
  nlohmann::ordered_json tried = nlohmann::ordered_json::array();
  for (const StrategyOutcome& s : o.tried) {
    tried.push_back({{"strategy", to_string(s.strategy)},
                     {"feasible", s.result.feasible},
                     {"iteration_s", s.result.feasible
                                         ? nlohmann::ordered_json(s.result.iteration_time.si())
                                                       : nlohmann::ordered_json(nullptr)},
                     {"reason", s.result.reason}});
  }
  j["shortlist"] = tried;
  j["strategies_ranked"] = o.strategies_ranked;
  return j;
}

std::string outcome_csv(const StudyOutcome& o) {
  std::string out = "strategy,feasible,iteration_s,mfu\n";
  for (const StrategyOutcome& s : o.tried) {
    out += printf_string("%s,%d,%.9g,%.6g\n", to_string(s.strategy).c_str(),
                         s.result.feasible ? 1 : 0, s.result.iteration_time.si(), s.result.mfu);
  }
  return out;
}

}  // namespace pathfinder
