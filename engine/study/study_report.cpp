#include "engine/study/study_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "engine/core/format.hpp"
#include "engine/study/plot_data.hpp"
#include "engine/study/study_outputs.hpp"

namespace pathfinder {
namespace {

// Okabe-Ito colours (distinguishable with every common colour-vision deficiency), then grey:
// one for each of the nine breakdown parts.
constexpr const char* kColours[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                    "#56B4E9", "#F0E442", "#000000", "#999999"};
const char* colour(std::size_t i) { return kColours[i % (sizeof kColours / sizeof *kColours)]; }

constexpr double kWidth = 680, kHeight = 360, kLeft = 78, kRight = 20, kTop = 16, kBottom = 58;

std::string number(double v) { return printf_string("%.4g", v); }

// y to pixels: linear, or log10 when asked and every value is positive.
struct Scale {
  double lo = 0.0, hi = 1.0;
  bool log = false;
  [[nodiscard]] double at(double v) const {
    const double f = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return kTop + (1.0 - f) * (kHeight - kTop - kBottom);
  }
};

Scale y_scale(const PlotData& d, const PlotSpec& p, bool from_zero) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& row : d.y) {
    for (const auto& y : row) {
      if (!y) continue;
      lo = std::min(lo, plotted(p.y, *y));
      hi = std::max(hi, plotted(p.y, *y));
    }
  }
  Scale s;
  s.log = p.log_y && lo > 0.0;
  if (s.log) {
    s.lo = lo / 1.15;
    s.hi = hi * 1.15;
    if (s.lo == s.hi) s.hi = s.lo * 10.0;
    return s;
  }
  if (from_zero) lo = std::min(lo, 0.0);
  const double pad = hi > lo ? 0.06 * (hi - lo) : (hi != 0.0 ? 0.1 * std::abs(hi) : 1.0);
  s.lo = from_zero && lo >= 0.0 ? 0.0 : lo - pad;
  s.hi = hi + pad;
  return s;
}

std::string chart(const StudySpec& s, const PlotSpec& p, const StudyTable& t) {
  const PlotData d = plot_data(s, p, t);
  const bool bars = p.kind == PlotKind::kBars;
  const Scale ys = y_scale(d, p, bars);
  const std::size_t nx = d.x_labels.size();
  const double plot_w = kWidth - kLeft - kRight;
  const double step = plot_w / static_cast<double>(std::max<std::size_t>(nx, 1));
  const auto x_at = [&](std::size_t i) { return kLeft + step * (static_cast<double>(i) + 0.5); };
  // The best point, as the gnuplot plots mark it.
  std::optional<std::pair<std::size_t, std::size_t>> best;
  for (std::size_t i = 0; i < nx; ++i) {
    for (std::size_t j = 0; j < d.series.size(); ++j) {
      const auto& y = d.y[i][j];
      if (!y) continue;
      const double b = best ? *d.y[best->first][best->second] : 0.0;
      if (!best || (larger_is_better(p.y) ? *y > b * (1.0 + 1e-9) : *y < b * (1.0 - 1e-9))) {
        best = {{i, j}};
      }
    }
  }
  std::size_t points = 0;
  std::string svg;
  // Axes, y ticks and grid, x labels.
  svg += printf_string(
      "<line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>"
      "<line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>",
      kLeft, kTop, kLeft, kHeight - kBottom, kLeft, kHeight - kBottom, kWidth - kRight,
      kHeight - kBottom);
  for (int k = 0; k <= 4; ++k) {
    const double v = ys.log ? std::pow(10.0, std::log10(ys.lo) +
                                                 k * (std::log10(ys.hi) - std::log10(ys.lo)) / 4)
                            : ys.lo + k * (ys.hi - ys.lo) / 4;
    const double y = ys.at(v);
    svg += printf_string("<line class=\"grid\" x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\"/>"
                         "<text class=\"tick\" x=\"%g\" y=\"%.2f\" text-anchor=\"end\">%s</text>",
                         kLeft, y, kWidth - kRight, y, kLeft - 6, y + 4, number(v).c_str());
  }
  for (std::size_t i = 0; i < nx; ++i) {
    svg += printf_string("<text class=\"tick\" x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%s</text>",
                         x_at(i), kHeight - kBottom + 18,
                         html_escape(shown(p.x, d.x_labels[i])).c_str());
  }
  svg += printf_string("<text class=\"label\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>",
                       kLeft + plot_w / 2, kHeight - 12, html_escape(axis_label(p.x)).c_str());
  svg += printf_string("<text class=\"label\" transform=\"translate(16 %g) rotate(-90)\" "
                       "text-anchor=\"middle\">%s</text>",
                       kTop + (kHeight - kTop - kBottom) / 2, html_escape(axis_label(p.y)).c_str());
  // One group per series: its line (or bars) and a marker per point with its value.
  const std::size_t ns = d.series.size();
  const double slot = step * 0.8 / static_cast<double>(ns);
  for (std::size_t j = 0; j < ns; ++j) {
    if (!has_points(d, j)) continue;
    svg += printf_string("<g class=\"series\" data-series=\"%zu\" fill=\"%s\" stroke=\"%s\">", j,
                         colour(j), colour(j));
    if (!bars) {
      std::string path;
      for (std::size_t i = 0; i < nx; ++i) {
        if (!d.y[i][j]) continue;
        path += printf_string("%s%.2f,%.2f", path.empty() ? "" : " ", x_at(i),
                              ys.at(plotted(p.y, *d.y[i][j])));
      }
      svg += "<polyline class=\"line\" fill=\"none\" points=\"" + path + "\"/>";
    }
    for (std::size_t i = 0; i < nx; ++i) {
      if (!d.y[i][j]) continue;
      const double v = plotted(p.y, *d.y[i][j]);
      std::string tip = shown(p.x, d.x_labels[i]);
      if (!d.series[j].empty()) tip += ", " + shown(p.series, d.series[j]);
      tip += ": " + number(v);
      const std::string cls = best && best->first == i && best->second == j ? "point best" : "point";
      if (bars) {
        const double x0 = x_at(i) - step * 0.4 + slot * static_cast<double>(j);
        const double top = ys.at(v), base = ys.at(std::max(ys.lo, 0.0));
        svg += printf_string(
            "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
            "data-tip=\"%s\"><title>%s</title></rect>",
            cls.c_str(), x0, std::min(top, base), slot * 0.92, std::abs(base - top),
            html_escape(tip).c_str(), html_escape(tip).c_str());
      } else {
        svg += printf_string("<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"4.5\" "
                             "data-tip=\"%s\"><title>%s</title></circle>",
                             cls.c_str(), x_at(i), ys.at(v), html_escape(tip).c_str(),
                             html_escape(tip).c_str());
      }
      ++points;
    }
    svg += "</g>";
  }
  std::string html = printf_string("<figure class=\"chart\" id=\"plot-%s\" data-points=\"%zu\">",
                                   html_escape(p.name).c_str(), points);
  html += "<figcaption>" + html_escape(p.title.empty() ? axis_label(p.y) + " by " + axis_label(p.x)
                                                       : p.title) +
          "</figcaption>";
  html += printf_string("<svg viewBox=\"0 0 %g %g\" role=\"img\">", kWidth, kHeight) + svg +
          "</svg>";
  if (ns > 1 || !d.series.front().empty()) {
    html += "<div class=\"legend\">" + html_escape(axis_label(p.series)) + ":";
    for (std::size_t j = 0; j < ns; ++j) {
      if (!has_points(d, j)) continue;
      html += printf_string(
          " <label><input type=\"checkbox\" checked data-series=\"%zu\"><span class=\"swatch\" "
          "style=\"background:%s\"></span>%s</label>",
          j, colour(j), html_escape(shown(p.series, d.series[j])).c_str());
    }
    html += "</div>";
  }
  return html + "</figure>\n";
}

// The columns the ranked table shows, when the table has them: (column, heading).
const std::vector<std::pair<std::string, std::string>>& ranked_columns() {
  static const std::vector<std::pair<std::string, std::string>> c{
      {"chosen_strategy", "strategy"},       {"iteration_s", "iteration (s)"},
      {"mfu", "MFU (%)"},                    {"tokens_per_s", "tokens/s"},
      {"memory_used_gb", "memory used (GB)"}, {"j_per_token", "J/token"},
      {"usd_per_mtoken", "USD/M tokens"}};
  return c;
}

const char* kParts[] = {"compute_s",       "embedding_head_s", "tensor_comm_s",
                        "pipeline_comm_s", "pipeline_bubble_s", "data_comm_s",
                        "gradient_sync_s", "optimizer_s",       "host_s"};

std::string row_name(const StudySpec& s, const StudyTable& t, std::size_t r) {
  std::string name;
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    if (!name.empty()) name += ", ";
    name += shown(s.axes[a].name(), t.cell(r, a));
  }
  return name.empty() ? "the point" : name;
}

constexpr const char* kStyle = R"(
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}.question{font-size:1.1em;color:#444}
.answer{background:#eef6ee;border-left:4px solid #009E73;padding:.6em 1em}
.checks{background:#fff6e5;border-left:4px solid #E69F00;padding:.4em 1em}
figure.chart{margin:1.5em 0}figcaption{font-weight:600;margin-bottom:.3em}
svg{width:100%;height:auto;max-width:680px}.axis{stroke:#444}.grid{stroke:#ddd}
.tick{font-size:11px;fill:#444}.label{font-size:12px;fill:#222}
.line{stroke-width:2}.point{cursor:pointer;stroke:#fff;stroke-width:1}
.point.best{stroke:#d00;stroke-width:3}.legend{font-size:13px}.legend label{margin-left:.8em}
.swatch{display:inline-block;width:.8em;height:.8em;margin:0 .3em;border-radius:2px}
table{border-collapse:collapse;font-size:13px}td,th{padding:.2em .6em;border-bottom:1px solid #ddd}
td.n{text-align:right;font-variant-numeric:tabular-nums}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:2px 6px;
border-radius:3px;font-size:12px;display:none}
code{font-size:12px}
)";

constexpr const char* kScript = R"(
(function () {
  var tip = document.getElementById('tip');
  document.querySelectorAll('.point, .part').forEach(function (el) {
    el.addEventListener('mousemove', function (e) {
      tip.textContent = el.getAttribute('data-tip');
      tip.style.left = (e.clientX + 12) + 'px';
      tip.style.top = (e.clientY + 12) + 'px';
      tip.style.display = 'block';
    });
    el.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
  document.querySelectorAll('figure.chart').forEach(function (fig) {
    fig.querySelectorAll('input[data-series]').forEach(function (box) {
      box.addEventListener('change', function () {
        var sel = 'g.series[data-series="' + box.getAttribute('data-series') + '"]';
        fig.querySelectorAll(sel).forEach(function (g) {
          g.style.display = box.checked ? '' : 'none';
        });
      });
    });
  });
})();
)";

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string study_report_html(const StudySpec& s, const StudyTable& t,
                              const std::vector<std::string>& checks, const std::string& command) {
  const GoalKind by = s.goal.kind;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<title>" + html_escape(s.name) + " - pathfinder study</title><style>" +
                  kStyle + "</style></head><body>\n";
  h += "<h1>" + html_escape(s.name) + "</h1>\n<p class=\"question\">" + html_escape(s.question) +
       "</p>\n";
  // The answer: the best feasible row by the study's objective.
  std::vector<std::size_t> feasible;
  std::map<std::string, std::size_t> reasons;
  const auto fc = t.column("feasible"), rc = t.column("reason");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (fc && t.cell(r, *fc) == "1" && row_measure(t, r, by)) feasible.push_back(r);
    else if (rc) ++reasons[t.cell(r, *rc)];
  }
  std::stable_sort(feasible.begin(), feasible.end(), [&](std::size_t a, std::size_t b) {
    return *row_measure(t, a, by) < *row_measure(t, b, by);
  });
  h += "<p class=\"answer\">";
  if (feasible.empty()) {
    h += "No point is feasible.";
  } else {
    const std::size_t b = feasible.front();
    h += "<strong>Best by " + html_escape(std::string(to_string(by))) + ": " +
         html_escape(row_name(s, t, b)) + "</strong>";
    if (const auto c = t.column("chosen_strategy"); c && !t.cell(b, *c).empty()) {
      h += " with <code>" + html_escape(t.cell(b, *c)) + "</code>";
    }
    if (const auto it = t.number(b, "iteration_s")) h += ": " + number(*it) + " s per iteration";
    if (const auto m = t.number(b, "mfu")) h += ", MFU " + number(100.0 * *m) + "%";
    if (feasible.size() > 1) {
      const double gap = *row_measure(t, feasible[1], by) / *row_measure(t, b, by) - 1.0;
      h += "; the runner-up (" + html_escape(row_name(s, t, feasible[1])) + ") is " +
           number(100.0 * gap) + "% worse";
    }
    h += ".";
  }
  h += printf_string(" %zu of %zu points feasible.</p>\n", feasible.size(), t.rows.size());
  if (!checks.empty()) {
    h += "<div class=\"checks\"><ul>";
    for (const std::string& c : checks) h += "<li>" + html_escape(c) + "</li>";
    h += "</ul></div>\n";
  }
  for (const PlotSpec& p : s.outputs) h += chart(s, p, t);

  // Ranked rows.
  h += "<h2>Ranked by " + html_escape(std::string(to_string(by))) + "</h2>\n<table><thead><tr>"
       "<th>#</th>";
  for (const StudyAxis& a : s.axes) h += "<th>" + html_escape(axis_label(a.name())) + "</th>";
  std::vector<std::pair<std::size_t, std::string>> shown_columns;
  for (const auto& [name, heading] : ranked_columns()) {
    if (const auto c = t.column(name)) {
      shown_columns.emplace_back(*c, name);
      h += "<th>" + html_escape(heading) + "</th>";
    }
  }
  h += "</tr></thead><tbody>\n";
  const std::size_t ranked = std::min<std::size_t>(feasible.size(), 50);
  for (std::size_t k = 0; k < ranked; ++k) {
    const std::size_t r = feasible[k];
    h += printf_string("<tr><td class=\"n\">%zu</td>", k + 1);
    for (std::size_t a = 0; a < s.axes.size(); ++a) {
      h += "<td>" + html_escape(shown(s.axes[a].name(), t.cell(r, a))) + "</td>";
    }
    for (const auto& [c, name] : shown_columns) {
      const auto v = t.number(r, name);
      if (name == "chosen_strategy" || !v) {
        h += "<td>" + html_escape(t.cell(r, c)) + "</td>";
      } else {
        h += "<td class=\"n\">" + number(name == "mfu" ? 100.0 * *v : *v) + "</td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</tbody></table>\n";
  if (feasible.size() > ranked) {
    h += printf_string("<p>%zu more feasible points in results.csv.</p>\n", feasible.size() - ranked);
  }
  if (!reasons.empty()) {
    h += "<p>Dropped:</p><ul>";
    for (const auto& [why, n] : reasons) {
      h += printf_string("<li>%zu: ", n) + html_escape(why) + "</li>";
    }
    h += "</ul>\n";
  }

  // Where the time goes in the leading rows.
  const std::size_t shown_rows = std::min<std::size_t>(feasible.size(), 10);
  if (shown_rows > 0 && t.column(kParts[0])) {
    double longest = 0.0;
    for (std::size_t k = 0; k < shown_rows; ++k) {
      longest = std::max(longest, t.number(feasible[k], "iteration_s").value_or(0.0));
    }
    const double row_h = 24, label_w = 220, bar_w = kWidth - label_w - 20;
    h += "<h2>Where the time goes</h2>\n<figure class=\"breakdown\">";
    h += printf_string("<svg viewBox=\"0 0 %g %g\" role=\"img\">", kWidth,
                       row_h * static_cast<double>(shown_rows) + 8);
    for (std::size_t k = 0; k < shown_rows && longest > 0.0; ++k) {
      const std::size_t r = feasible[k];
      const double y = 4 + row_h * static_cast<double>(k);
      h += printf_string("<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                         label_w - 8, y + 15, html_escape(row_name(s, t, r)).c_str());
      double x = label_w;
      for (std::size_t i = 0; i < sizeof kParts / sizeof *kParts; ++i) {
        const double v = t.number(r, kParts[i]).value_or(0.0);
        if (!(v > 0.0)) continue;
        const double w = bar_w * v / longest;
        const std::string tip = axis_label(kParts[i]) + ": " + number(v);
        h += printf_string("<rect class=\"part\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%g\" "
                           "fill=\"%s\" data-tip=\"%s\"><title>%s</title></rect>",
                           x, y, w, row_h - 6, colour(i), html_escape(tip).c_str(),
                           html_escape(tip).c_str());
        x += w;
      }
    }
    h += "</svg><div class=\"legend\">";
    for (std::size_t i = 0; i < sizeof kParts / sizeof *kParts; ++i) {
      h += printf_string("<span class=\"swatch\" style=\"background:%s\"></span>%s ", colour(i),
                         html_escape(axis_label(kParts[i])).c_str());
    }
    h += "</div></figure>\n";
  }
  h += "<p><small>Made by <code>" + html_escape(command) +
       "</code>; every figure from results.csv beside this page.</small></p>\n";
  h += "<div id=\"tip\"></div><script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return h;
}

}  // namespace pathfinder
