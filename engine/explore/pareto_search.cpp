#include "engine/explore/pareto_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/format.hpp"
#include "engine/core/text.hpp"
#include "engine/explore/pareto.hpp"

namespace pathfinder {
namespace {

constexpr double kNoScore = std::numeric_limits<double>::infinity();

std::vector<Strategy> candidates_of(const SearchStudy& study, const DesignEvaluator& e,
                                    const Eigen::VectorXd& x0) {
  if (study.strategy) return {*study.strategy};
  std::vector<Strategy> out;
  for (const RankedStrategy& r : rank_strategies(e, x0)) {
    if (!r.result.feasible || static_cast<int>(out.size()) >= study.shortlist) break;
    out.push_back(r.strategy);
  }
  return out;
}

}  // namespace

ParetoSearch pareto_search(const SearchStudy& study, const DesignEvaluator& e,
                           const std::array<GoalKind, 2>& m, int weights) {
  ParetoSearch out;
  out.measures = m;
  const Eigen::VectorXd x0 = ResourceSplit::from_template(e.spec().tmpl).values();
  const SplitSpace space = template_split_space(e.spec().tmpl);
  const std::vector<Strategy> candidates = candidates_of(study, e, x0);
  if (candidates.empty()) return out;
  const TrainingResult r0 = e.evaluate(x0, candidates.front()).training;
  const double n0 = measure(m[0], r0), n1 = measure(m[1], r0);
  if (!(std::isfinite(n0) && std::isfinite(n1) && n0 > 0.0 && n1 > 0.0)) return out;
  std::vector<ParetoPoint> found;
  for (int k = 0; k < std::max(weights, 2); ++k) {
    const double w = static_cast<double>(k) / static_cast<double>(std::max(weights, 2) - 1);
    // The weighted sum of the normalized measures at x, for the best candidate there.
    const auto value = [&](const TrainingResult& r) {
      if (!r.feasible) return kNoScore;
      return w * measure(m[0], r) / n0 + (1.0 - w) * measure(m[1], r) / n1;
    };
    const Objective f = [&](const Eigen::VectorXd& x) {
      double best = kNoScore;
      for (const Strategy& s : candidates) best = std::min(best, value(e.evaluate(x, s).training));
      return best;
    };
    SearchOptions opt = study.options;
    opt.initial = x0;
    const SearchResult sr = minimize(f, space, opt);
    out.evaluations += sr.evaluations;
    ++out.searched;
    if (!sr.feasible()) continue;
    ParetoPoint p;
    p.weight = w;
    p.split = sr.x;
    double best = kNoScore;
    for (const Strategy& s : candidates) {
      TrainingResult r = e.evaluate(sr.x, s).training;
      const double v = value(r);
      if (v < best) {
        best = v;
        p.strategy = s;
        p.result = std::move(r);
      }
    }
    p.measures = {measure(m[0], p.result), measure(m[1], p.result)};
    found.push_back(std::move(p));
  }
  std::vector<std::array<double, 2>> points;
  for (const ParetoPoint& p : found) points.push_back(p.measures);
  for (const std::size_t i : non_dominated(points)) out.front.push_back(found[i]);
  return out;
}

namespace {

std::string split_text(const Eigen::VectorXd& x, const ArchTemplate& t) {
  const auto h = static_cast<Eigen::Index>(t.split.size());
  std::string out;
  for (Eigen::Index i = 0; i < h; ++i) {
    if (x[i] <= 0.0 && x[h + i] <= 0.0) continue;
    out += printf_string("%s%s %.3f/%.3f", out.empty() ? "" : ", ",
                         t.split[static_cast<std::size_t>(i)].name.c_str(), x[i], x[h + i]);
  }
  return out;
}

}  // namespace

std::string format_pareto_search(const ParetoSearch& p, const DesignEvaluator& e) {
  const std::string a(to_string(p.measures[0])), b(to_string(p.measures[1]));
  std::string out = printf_string(
      "Pareto front of %s and %s: %zu splits from %d weighted searches (%ld evaluations)\n",
      a.c_str(), b.c_str(), p.front.size(), p.searched, p.evaluations);
  out += printf_string("%6s %14s %14s %12s %10s  %s\n", "weight", a.c_str(), b.c_str(),
                       "iteration", "J/token", "split (area/power per component)");
  for (const ParetoPoint& q : p.front) {
    out += printf_string("%6.2f %14.6g %14.6g %12s %10.4g  %s\n", q.weight, q.measures[0],
                         q.measures[1], format_seconds(q.result.iteration_time.si()).c_str(),
                         q.result.energy.joules_per_token.si(),
                         split_text(q.split, e.spec().tmpl).c_str());
  }
  return out;
}

std::string pareto_search_csv(const ParetoSearch& p, const DesignEvaluator& e) {
  const ArchTemplate& t = e.spec().tmpl;
  const auto h = static_cast<Eigen::Index>(t.split.size());
  std::string out = "weight," + std::string(to_string(p.measures[0])) + "," +
                    std::string(to_string(p.measures[1])) + ",iteration_s,j_per_token,strategy";
  for (const char* b : {"area.", "power.", "perimeter."}) {
    for (const ComponentShare& c : t.split) out += "," + csv_field(b + c.name);
  }
  out += "\n";
  for (const ParetoPoint& q : p.front) {
    out += printf_string("%.6g,%.9g,%.9g,%.9g,%.9g,%s", q.weight, q.measures[0], q.measures[1],
                         q.result.iteration_time.si(), q.result.energy.joules_per_token.si(),
                         csv_field(to_string(q.strategy)).c_str());
    for (Eigen::Index i = 0; i < 3 * h; ++i) out += printf_string(",%.6g", q.split[i]);
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json pareto_search_json(const ParetoSearch& p, const DesignEvaluator& e) {
  nlohmann::ordered_json j;
  j["measures"] = {std::string(to_string(p.measures[0])), std::string(to_string(p.measures[1]))};
  j["searched"] = p.searched;
  j["evaluations"] = p.evaluations;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const ArchTemplate& t = e.spec().tmpl;
  const auto h = static_cast<Eigen::Index>(t.split.size());
  for (const ParetoPoint& q : p.front) {
    nlohmann::ordered_json split;
    for (Eigen::Index i = 0; i < h; ++i) {
      split[t.split[static_cast<std::size_t>(i)].name] = {
          {"area", q.split[i]}, {"power", q.split[h + i]}, {"perimeter", q.split[2 * h + i]}};
    }
    rows.push_back({{"weight", q.weight},
                    {std::string(to_string(p.measures[0])), q.measures[0]},
                    {std::string(to_string(p.measures[1])), q.measures[1]},
                    {"strategy", to_string(q.strategy)},
                    {"iteration_s", q.result.iteration_time.si()},
                    {"joules_per_token", q.result.energy.joules_per_token.si()},
                    {"split", split}});
  }
  j["front"] = rows;
  return j;
}

}  // namespace pathfinder
