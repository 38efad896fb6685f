#include "engine/study/study_checks.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/core/format.hpp"

namespace pathfinder {
namespace {

bool is_budget_axis(AxisKind k) {
  return k == AxisKind::kPower || k == AxisKind::kPowerLimit || k == AxisKind::kChipArea ||
         k == AxisKind::kNodeArea ||
         k == AxisKind::kPerimeter;
}

bool feasible(const StudyTable& t, std::size_t r) {
  const auto f = t.column("feasible");
  return f && t.cell(r, *f) == "1" && t.number(r, "iteration_s").has_value();
}

// "logic N7, memory HBM2": the row's other axes (those that are set).
std::string where(const StudySpec& s, const StudyTable& t, std::size_t r, std::size_t skip) {
  std::string out;
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    if (a == skip || t.cell(r, a).empty()) continue;
    out += (out.empty() ? "" : ", ") + s.axes[a].name() + " " + t.cell(r, a);
  }
  return out;
}

std::optional<std::string> convergence_check(const StudySpec& s, const StudyTable& t) {
  const auto c = t.column("converged"), how = t.column("convergence");
  if (!c || !how) return std::nullopt;
  std::size_t searched = 0, unconverged = 0;
  std::string example;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& v = t.cell(r, *c);
    if (v.empty()) continue;
    ++searched;
    if (v == "0" && unconverged++ == 0) {
      const std::string w = where(s, t, r, s.axes.size());
      example = (w.empty() ? "" : w + ": ") + t.cell(r, *how);
    }
  }
  if (unconverged == 0) return std::nullopt;
  return printf_string("%zu of %zu split searches did not converge (column converged; rerun "
                       "with more steps or restarts), e.g. ",
                       unconverged, searched) + example;
}

void monotone_checks(const StudySpec& s, const StudyTable& t, double tolerance,
                     std::vector<std::string>& out) {
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    const StudyAxis& axis = s.axes[a];
    if (!is_budget_axis(axis.kind)) continue;
    std::map<std::string, double> value;  // cell text -> SI budget
    for (const AxisValue& v : axis.values) {
      if (!v.unset) value.emplace(v.text, v.number);
    }
    // Rows grouped by every other axis, each group ordered by this budget.
    std::map<std::string, std::vector<std::pair<double, std::size_t>>> groups;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto it = value.find(t.cell(r, a));
      if (it == value.end() || !feasible(t, r)) continue;
      std::string key;
      for (std::size_t o = 0; o < s.axes.size(); ++o) {
        if (o != a) key += t.cell(r, o) + '\x1f';
      }
      groups[key].emplace_back(it->second, r);
    }
    for (auto& [key, rows] : groups) {
      std::sort(rows.begin(), rows.end());
      for (std::size_t k = 1; k < rows.size(); ++k) {
        const std::size_t lo = rows[k - 1].second, hi = rows[k].second;
        if (rows[k].first <= rows[k - 1].first) continue;
        const double t_lo = *t.number(lo, "iteration_s"), t_hi = *t.number(hi, "iteration_s");
        if (t_hi <= t_lo * (1.0 + tolerance)) continue;
        const std::string w = where(s, t, hi, a);
        out.push_back(printf_string("non-monotone %s: %s is %.1f%% slower than %s",
                                    axis.name().c_str(), t.cell(hi, a).c_str(),
                                    100.0 * (t_hi / t_lo - 1.0), t.cell(lo, a).c_str()) +
                      (w.empty() ? "" : " (" + w + ")") +
                      "; a larger budget never removes options: a search that stopped short, "
                      "or a model kink");
      }
    }
  }
}

}  // namespace

std::vector<std::string> study_checks(const StudySpec& s, const StudyTable& t, double tolerance) {
  std::vector<std::string> out;
  if (auto c = convergence_check(s, t)) out.push_back(std::move(*c));
  monotone_checks(s, t, tolerance, out);
  return out;
}

}  // namespace pathfinder
