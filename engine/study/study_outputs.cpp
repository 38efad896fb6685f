#include "engine/study/study_outputs.hpp"

#include "engine/explore/pareto.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <numeric>

#include "engine/core/file_io.hpp"
#include "engine/core/format.hpp"
#include "engine/study/plot_data.hpp"
#include "engine/study/study_checks.hpp"
#include "engine/study/study_report.hpp"

namespace pathfinder {
namespace {

constexpr const char* kIteration = "iteration_s";

// Control characters as spaces: every output here is line-based (a newline ends a gnuplot
// command or a Markdown table row). The loaders reject them in names, titles and labels
// (check_single_line); this covers text from elsewhere (the command line, gnuplot's output).
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

// A string for a gnuplot command, in single quotes: gnuplot runs `command` substitution and
// expands @macros inside double quotes, but takes single-quoted text literally, a doubled ''
// being one quote (gnuplot 5 manual, "Quote marks", "Substitution").
std::string gp_quote(std::string_view s) {
  std::string out = "'";
  for (const char c : one_line(s)) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A label in the inline data block: a datafile string in double quotes, which has no escape
// for a double quote, so one becomes a single quote. Data lines undergo no substitution.
std::string gp_data_label(std::string_view s) {
  std::string out = one_line(s);
  std::replace(out.begin(), out.end(), '"', '\'');
  return "\"" + out + "\"";
}

// Text for Markdown (CommonMark): each character that could start markup (emphasis, code, a
// link or image, raw HTML, an entity, a table cell's end) backslash-escaped.
std::string md_text(std::string_view s) {
  std::string out;
  for (const char c : one_line(s)) {
    if (std::string_view("\\`*[]<>|&!").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// A Markdown code span: fenced by more backticks than the longest run inside, padded with a
// space where the text starts or ends with a backtick (CommonMark 0.30, "Code spans"). Inside
// a table a | still ends the cell, so it is escaped there (GFM, "Tables").
std::string md_code(std::string_view s, bool in_table = false) {
  std::string text = one_line(s);
  std::size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  if (in_table) {
    std::string escaped;
    for (const char c : text) {
      if (c == '|') escaped += '\\';
      escaped += c;
    }
    text = escaped;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

// The cells of one row for format_rows.
std::vector<std::string> display_cells(const StudySpec& s, const StudyTable& t, std::size_t r) {
  std::vector<std::string> cells;
  for (std::size_t a = 0; a < s.axes.size(); ++a) cells.push_back(t.cell(r, a));
  const auto iteration = t.number(r, kIteration);
  if (t.cell(r, *t.column("feasible")) != "1" || !iteration) {
    std::string reason = t.cell(r, *t.column("reason"));
    if (reason.size() > 50) reason = reason.substr(0, 47) + "...";
    cells.push_back("infeasible: " + reason);
    cells.insert(cells.end(), 5, "");
    return cells;
  }
  cells.push_back(t.cell(r, *t.column("chosen_strategy")));
  cells.push_back(format_seconds(*iteration));
  cells.push_back(printf_string("%.1f%%", 100.0 * t.number(r, "mfu").value_or(0.0)));
  cells.push_back(printf_string("%.4g", t.number(r, "tokens_per_s").value_or(0.0)));
  // Energy and cost per token (a GEMM has no tokens; a template without prices no cost).
  const auto per_token = [&](const char* column, double scale) {
    const auto v = t.number(r, column);
    return v ? printf_string("%.4g", scale * *v) : std::string("-");
  };
  cells.push_back(per_token("j_per_token", 1.0));
  cells.push_back(per_token("usd_per_mtoken", 1.0));
  return cells;
}

// Rows to show: all, or the max_rows fastest in point order.
std::vector<std::size_t> shown_rows(const StudyTable& t, std::size_t max_rows) {
  std::vector<std::size_t> rows(t.rows.size());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  if (rows.size() <= max_rows) return rows;
  const auto time = [&](std::size_t r) {
    return t.cell(r, *t.column("feasible")) == "1" ? t.number(r, kIteration).value_or(1e300) : 1e300;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) { return time(a) < time(b); });
  rows.resize(max_rows);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string format_duration(double s) {
  const long v = std::lround(s);
  if (v >= 3600) return printf_string("%ldh%02ldm", v / 3600, (v % 3600) / 60);
  if (v >= 60) return printf_string("%ldm%02lds", v / 60, v % 60);
  return printf_string("%lds", v);
}

// A private folder for one gnuplot run, removed with everything in it when it goes.
struct PrivateDir {
  std::string path;
  explicit PrivateDir(const std::string& parent) {
    std::string pattern = (std::filesystem::path(parent) / ".gnuplot-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;  // mode 0700
  }
  ~PrivateDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
};

// Runs `program script` in `dir` without a shell (posix_spawnp with an argument vector, so no
// character of a path or name is ever interpreted), stdin from /dev/null, stdout and stderr
// into `output`. Returns the exit status (-1: killed by a signal), or nullopt with errno set
// when the program could not be started.
std::optional<int> run_in(const std::string& dir, const std::string& program,
                          const std::string& script, std::string& output) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::vector<std::string> args{program, script};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    errno = rc;
    return std::nullopt;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (output.size() < (std::size_t{1} << 20)) output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs one plot's script in a private temporary folder (mkdtemp) inside the output folder, then
// moves the images it drew beside it; gnuplot's complaints become warnings.
void run_gnuplot(const OutputOptions& o, const PlotSpec& p, const std::string& script_text,
                 StudyOutputs& out) {
  const PrivateDir dir(o.out_dir);
  if (dir.path.empty()) {
    out.warnings.push_back(p.name + ": cannot make a temporary folder in " + o.out_dir);
    return;
  }
  const std::string script = p.name + ".gp";
  write_file_atomically((std::filesystem::path(dir.path) / script).string(), script_text);
  std::string text;
  const std::optional<int> status = run_in(dir.path, o.gnuplot, script, text);
  if (!status && errno != ENOENT && errno != EACCES) {
    out.warnings.push_back(p.name + ": cannot run gnuplot");
    return;
  }
  const int code = status.value_or(127);
  if (code == 127) {
    out.warnings.push_back(p.name + ": gnuplot (\"" + o.gnuplot + "\") not found; run " + p.name +
                           ".gp with gnuplot to draw the plot");
    return;
  }
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t^") != std::string::npos) out.warnings.push_back(p.name + ": gnuplot: " + line);
    start = end + 1;
  }
  if (code != 0) out.warnings.push_back(p.name + ": gnuplot failed (exit " + std::to_string(code) + ")");
  for (const char* ext : {".svg", ".png"}) {
    const std::string drawn = (std::filesystem::path(dir.path) / (p.name + ext)).string();
    const std::string file = (std::filesystem::path(o.out_dir) / (p.name + ext)).string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(drawn, ec)) {
      std::filesystem::rename(drawn, file, ec);
      if (!ec) {
        out.files.push_back(file);
        continue;
      }
    }
    if (code == 0) out.warnings.push_back(p.name + ": gnuplot wrote no " + file);
  }
}

// The value of goal measure `by` in row r, from its columns.

std::string pareto_section(const StudySpec& s, const StudyTable& t,
                           const std::array<GoalKind, 2>& m) {
  const std::string a(to_string(m[0])), b(to_string(m[1]));
  const std::vector<std::size_t> front = pareto_rows(t, m);
  std::string md = "## Pareto front (" + a + ", " + b + ")\n\n" +
                   printf_string("%zu of %zu points: no other point is better on both.\n\n",
                                 front.size(), t.rows.size());
  md += "| point | strategy | " + a + " (" + std::string(goal_unit(m[0])) + ") | " + b + " (" +
        std::string(goal_unit(m[1])) + ") |\n| --- | --- | ---: | ---: |\n";
  for (const std::size_t r : front) {
    std::string where;
    for (std::size_t x = 0; x < s.axes.size(); ++x) {
      if (t.cell(r, x).empty()) continue;
      where += (where.empty() ? "" : ", ") + s.axes[x].name() + " " + t.cell(r, x);
    }
    md += "| " + md_text(where) + " | " + md_code(t.cell(r, *t.column("chosen_strategy"))) +
          printf_string(" | %.6g | %.6g |\n", *row_measure(t, r, m[0]), *row_measure(t, r, m[1]));
  }
  return md + "\n";
}

std::string summary_text(const StudySpec& s, const StudyTable& t, const OutputOptions& o,
                         const StudyOutputs& out) {
  std::string md = "# " + md_text(s.name) + "\n\n**Question:** " + md_text(s.question) + "\n\n";
  md += "Command: " + md_code(o.command) + "\n\n";
  const std::size_t feasible = static_cast<std::size_t>(std::count_if(
      t.rows.begin(), t.rows.end(), [&](const auto& r) { return r[*t.column("feasible")] == "1"; }));
  // A setting: the key's value, or what the axis (swept or set by points) makes it.
  const auto files = [&](AxisKind kind, const std::vector<StudyFile>& list, const std::string& key) {
    if (s.find_axis(kind) == nullptr) return md_code(key);
    std::string text;
    for (const StudyFile& f : list) text += (text.empty() ? "" : ", ") + md_code(f.text);
    return text;
  };
  const bool devices = s.devices && s.find_axis(AxisKind::kDevices) == nullptr;
  const bool search = s.search && s.find_axis(AxisKind::kSearch) == nullptr;
  md += printf_string("Template %s, workload %s, %s, search: %s. %zu points, %zu feasible.\n\n",
                      files(AxisKind::kTemplate, s.templates, s.template_path).c_str(),
                      files(AxisKind::kWorkload, s.workloads, s.workload_path).c_str(),
                      devices ? (std::to_string(*s.devices) + " devices").c_str() : "devices per point",
                      search ? std::string(to_string(*s.search)).c_str() : "per point",
                      t.rows.size(), feasible);
  if (const auto best = best_row(t, s.goal.kind)) {
    md += s.goal.kind == GoalKind::kTime
              ? "## Best point\n\n"
              : "## Best point (lowest " + std::string(to_string(s.goal.kind)) + ")\n\n";
    std::string where;
    for (std::size_t a = 0; a < s.axes.size(); ++a) {  // an empty cell: nothing set
      if (t.cell(*best, a).empty()) continue;
      where += (where.empty() ? "" : ", ") + s.axes[a].name() + " " + md_text(t.cell(*best, a));
    }
    md += where;
    md += (where.empty() ? "" : ": ") + md_code(t.cell(*best, *t.column("chosen_strategy"))) + ", " +
          format_seconds(*t.number(*best, kIteration)) +
          printf_string(" per iteration, MFU %.1f%%, %.4g tokens/s.",
                        100.0 * t.number(*best, "mfu").value_or(0.0),
                        t.number(*best, "tokens_per_s").value_or(0.0));
    double worst = 0.0;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      if (t.cell(r, *t.column("feasible")) == "1") worst = std::max(worst, t.number(r, kIteration).value_or(0.0));
    }
    md += printf_string(" The slowest feasible point takes %.2fx as long.\n\n",
                        worst / *t.number(*best, kIteration));
  }
  const std::vector<std::string> checks = study_checks(s, t);
  if (!checks.empty()) {
    md += "## Checks\n\n";
    for (const std::string& c : checks) md += "- " + md_text(c) + "\n";
    md += "\n";
  }
  if (s.pareto) md += pareto_section(s, t, *s.pareto);
  md += "## Results\n\n" + format_rows(s, t, 20, true) + "\nEvery input and output: `results.csv`.\n";
  if (!s.outputs.empty()) {
    md += "\n## Plots\n\n";
    for (const PlotSpec& p : s.outputs) md += "![" + md_text(p.title) + "](" + p.name + ".svg)\n";
  }
  if (!out.warnings.empty()) {
    md += "\n## Warnings\n\n";
    for (const std::string& w : out.warnings) md += "- " + md_text(w) + "\n";
  }
  return md;
}

}  // namespace

std::optional<double> row_measure(const StudyTable& t, std::size_t r, GoalKind by) {
  switch (by) {
    case GoalKind::kTime: return t.number(r, kIteration);
    case GoalKind::kEnergy: return t.number(r, "energy_j");
    case GoalKind::kEnergyDelay: {
      const auto e = t.number(r, "energy_j"), i = t.number(r, kIteration);
      return e && i ? std::optional(*e * *i) : std::nullopt;
    }
    case GoalKind::kCost: return t.number(r, "usd");
  }
  return std::nullopt;
}

std::vector<std::size_t> pareto_rows(const StudyTable& t, const std::array<GoalKind, 2>& m) {
  std::vector<std::array<double, 2>> points;
  const auto f = t.column("feasible");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto a = row_measure(t, r, m[0]), b = row_measure(t, r, m[1]);
    const bool ok = f && t.cell(r, *f) == "1" && a && b;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    points.push_back(ok ? std::array{*a, *b} : std::array{kInf, kInf});
  }
  return non_dominated(points);
}

std::optional<std::size_t> best_row(const StudyTable& t, GoalKind by) {
  const auto value = [&](std::size_t r) { return row_measure(t, r, by); };
  std::optional<std::size_t> best;
  std::optional<double> best_value;
  const auto f = t.column("feasible");
  for (std::size_t r = 0; f && r < t.rows.size(); ++r) {
    const auto v = value(r);
    if (t.cell(r, *f) == "1" && v && (!best || *v < *best_value)) {
      best = r;
      best_value = v;
    }
  }
  return best;
}

std::string format_rows(const StudySpec& s, const StudyTable& t, std::size_t max_rows, bool markdown) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header;
  for (const StudyAxis& a : s.axes) header.push_back(a.name());
  // The strategy evaluated; "chosen strategy" when a strategy axis already heads a column.
  header.emplace_back(s.find_axis("strategy") ? "chosen strategy" : "strategy");
  for (const char* h : {"iteration", "MFU", "tokens/s", "J/token", "USD/M tokens"}) {
    header.emplace_back(h);
  }
  cells.push_back(header);
  const std::vector<std::size_t> rows = shown_rows(t, max_rows);
  for (std::size_t r : rows) cells.push_back(display_cells(s, t, r));
  std::vector<std::size_t> width(header.size(), 3);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    std::string line = markdown ? "|" : "";
    for (std::size_t i = 0; i < cells[k].size(); ++i) {
      const std::string c = markdown ? md_text(cells[k][i]) : cells[k][i];
      line += markdown ? " " + c + " |" : printf_string("%-*s", static_cast<int>(width[i]) + 2, c.c_str());
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (markdown && k == 0) {
      out += "|";
      for (std::size_t i = 0; i < header.size(); ++i) out += i <= s.axes.size() ? " --- |" : " ---: |";
      out += "\n";
    }
  }
  if (rows.size() < t.rows.size()) {
    out += printf_string("(the %zu fastest of %zu points)\n", rows.size(), t.rows.size());
  }
  return out;
}

std::string plot_script(const StudySpec& s, const PlotSpec& p, const StudyTable& t) {
  const PlotData d = plot_data(s, p, t);
  const bool numeric_x = is_numeric_axis(s.find_axis(p.x)->kind) && p.kind == PlotKind::kLine;
  std::string gp = "# " + one_line(p.title) + " (pathfinder study " + one_line(s.name) +
                   "; data from results.csv)\n";
  gp += "$data << EOD\n";
  // The best point of the plot (first in x then series order on ties), and the y range.
  std::optional<std::pair<std::size_t, std::size_t>> best;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < d.x_labels.size(); ++i) {
    gp += printf_string("%.9g ", numeric_x ? d.x_numbers[i] : static_cast<double>(i)) +
          gp_data_label(shown(p.x, d.x_labels[i]));
    for (std::size_t j = 0; j < d.y[i].size(); ++j) {
      const auto& y = d.y[i][j];
      gp += y ? printf_string(" %.9g", plotted(p.y, *y)) : std::string(" ?");
      if (!y) continue;
      lo = std::min(lo, *y);
      hi = std::max(hi, *y);
      const double b = best ? *d.y[best->first][best->second] : 0.0;
      // Ties (within rounding) keep the first: the cheaper technology on an ordered axis.
      if (!best || (larger_is_better(p.y) ? *y > b * (1.0 + 1e-9) : *y < b * (1.0 - 1e-9))) {
        best = {{i, j}};
      }
    }
    gp += "\n";
  }
  gp += "EOD\nset datafile missing '?'\n";
  gp += "set title " + gp_quote(p.title) + " noenhanced\n";
  if (best) {  // a line of its own under the title, so a long title is never cut
    const auto [bi, bj] = *best;
    const std::string x = shown(p.x, d.x_labels[bi]);
    const std::string where = d.series[bj].empty() ? x : x + ", " + shown(p.series, d.series[bj]);
    const std::string unit = p.y == "mfu" ? "%" : p.y.ends_with("_s") ? " s" : "";
    gp += "set tmargin 4\nset label 1 " +
          gp_quote(printf_string("best: %s, %.4g%s", where.c_str(), plotted(p.y, *d.y[bi][bj]),
                                 unit.c_str())) +
          " at graph 0.5, graph 1.04 center front noenhanced\n";
  }
  gp += "set xlabel " + gp_quote(axis_label(p.x)) + " noenhanced\nset ylabel " +
        gp_quote(axis_label(p.y)) + " noenhanced\n";
  gp += "set grid ytics\n";
  // Short series names (the value), the axis named once as the key's title, below the plot.
  gp += p.series.empty() ? "unset key\n"
                         : "set key below horizontal noenhanced title " +
                               gp_quote(p.series == "label" ? std::string() : axis_label(p.series)) + "\n";
  if (p.log_x && numeric_x) gp += "set logscale x 2\n";
  // A log axis only over a decade or more (gnuplot labels no tick on a shorter log range);
  // either way the range is tight: 10% beyond the data, not whole decades or zero.
  const bool log_y = p.log_y && lo > 0.0 && hi >= 10.0 * lo;
  if (log_y) {
    gp += "set logscale y\n";
    gp += printf_string("set yrange [%.6g:%.6g]\n", plotted(p.y, lo) / 1.1, plotted(p.y, hi) * 1.1);
  } else if (p.log_y && lo > 0.0 && p.kind == PlotKind::kLine) {
    const double pad = 0.1 * (plotted(p.y, hi) - plotted(p.y, lo)) + 1e-9 * plotted(p.y, hi);
    gp += printf_string("set yrange [%.6g:%.6g]\n", plotted(p.y, lo) - pad, plotted(p.y, hi) + pad);
  }
  if (p.kind == PlotKind::kBars) {
    gp += "set style data histograms\nset style histogram clustered gap 1\n"
          "set style fill solid 0.8 border -1\n";
    if (!log_y) gp += "set yrange [0:*]\n";
  } else if (!numeric_x) {
    gp += printf_string("set xrange [-0.5:%zu.5]\n", d.x_labels.size() - 1);
  }
  std::string plot = "plot ";
  for (std::size_t j = 0; j < d.series.size(); ++j) {
    if (!has_points(d, j)) continue;  // a series without a feasible point
    const std::string name = d.series[j].empty() ? axis_label(p.y) : shown(p.series, d.series[j]);
    const std::string col = std::to_string(j + 3);
    if (plot.size() > 5) plot += ", \\\n     ";
    if (p.kind == PlotKind::kBars) {
      plot += "$data using " + col + (j == 0 ? ":xtic(2)" : "") + " title " + gp_quote(name);
    } else {
      plot += "$data using 1:" + col + (numeric_x ? "" : ":xtic(2)") + " with linespoints title " + gp_quote(name);
    }
  }
  if (best && p.kind == PlotKind::kLine) {  // the best point circled
    const auto [bi, bj] = *best;
    plot += printf_string(", \\\n     '+' using (%.9g):(%.9g) every ::0::0 with points pt 6 ps 3 "
                          "lw 2 lc rgb 'red' title 'best'",
                          numeric_x ? d.x_numbers[bi] : static_cast<double>(bi),
                          plotted(p.y, *d.y[bi][bj]));
  }
  gp += "set terminal svg size 800,500 dynamic background rgb 'white'\nset termoption noenhanced\n";
  gp += "set output " + gp_quote(p.name + ".svg") + "\n" + plot + "\n";
  gp += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n  set terminal pngcairo size 800,500\n"
        "} else {\n  set terminal png size 800,500\n}\nset termoption noenhanced\n";
  gp += "set output " + gp_quote(p.name + ".png") + "\nreplot\nunset output\n";
  return gp;
}

StudyOutputs write_study_outputs(const StudySpec& s, const StudyTable& t, const OutputOptions& o) {
  StudyOutputs out;
  // A killed run's gnuplot folders (PrivateDir): with the folder's lock held, none is live.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(o.out_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code rm;
    if (name.size() == 15 && name.rfind(".gnuplot-", 0) == 0 && it->is_directory(rm)) {
      std::filesystem::remove_all(it->path(), rm);
    }
  }
  for (const PlotSpec& p : s.outputs) {
    const PlotData d = plot_data(s, p, t);
    bool any = false;
    for (std::size_t j = 0; j < d.series.size(); ++j) any = any || has_points(d, j);
    if (!any) {
      out.warnings.push_back(p.name + ": no feasible point to plot");
      continue;
    }
    const std::string script = (std::filesystem::path(o.out_dir) / (p.name + ".gp")).string();
    const std::string text = plot_script(s, p, t);
    write_file_atomically(script, text);
    out.files.push_back(script);
    run_gnuplot(o, p, text, out);
  }
  out.summary = (std::filesystem::path(o.out_dir) / "summary.md").string();
  write_file_atomically(out.summary, summary_text(s, t, o, out));
  const std::string report = (std::filesystem::path(o.out_dir) / "report.html").string();
  write_file_atomically(report, study_report_html(s, t, study_checks(s, t), o.command));
  out.files.insert(out.files.begin(), {out.summary, report});
  write_file_atomically((std::filesystem::path(o.out_dir) / ".study").string(),
                        std::filesystem::absolute(s.file).lexically_normal().string() + "\n");
  return out;
}

nlohmann::ordered_json study_run_json(const StudySpec& s, const StudyRun& run,
                                      const StudyOutputs& outputs) {
  nlohmann::ordered_json j;
  j["study"] = s.name;
  j["question"] = s.question;
  j["points"] = run.points;
  j["done"] = run.table.rows.size();
  j["evaluated"] = run.evaluated;
  j["reused"] = run.reused;
  j["dropped"] = run.dropped;
  j["invalid"] = run.invalid;
  j["complete"] = run.complete();
  j["checks"] = study_checks(s, run.table);
  j["results_csv"] = run.csv_path;
  if (const auto best = best_row(run.table, s.goal.kind)) {  // every column, as in the CSV
    nlohmann::ordered_json row;
    for (std::size_t c = 0; c < run.table.columns.size(); ++c) {
      const std::string& name = run.table.columns[c];
      const std::string& cell = run.table.cell(*best, c);
      if (c < s.axes.size() || name == "reason" || name == "chosen_strategy" ||
          name == "convergence" || name == "settings") {
        row[name] = cell;
      } else if (name == "feasible" || name == "converged") {
        row[name] = cell.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(cell == "1");
      } else {  // a number, or null where the CSV cell is empty
        const auto v = run.table.number(*best, name);
        row[name] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
      }
    }
    j["best"] = row;
  } else {
    j["best"] = nullptr;
  }
  std::vector<std::string> files{run.csv_path};
  files.insert(files.end(), outputs.files.begin(), outputs.files.end());
  j["files"] = files;
  j["warnings"] = outputs.warnings;
  return j;
}

std::string format_progress(const StudyProgress& p, int width) {
  const double f = p.total == 0 ? 1.0 : static_cast<double>(p.done) / static_cast<double>(p.total);
  const int filled = static_cast<int>(f * width);
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '.') + "]";
  bar += printf_string("  %zu/%zu points", p.done, p.total);
  if (p.run_done > 0 && p.run_done < p.run_todo) {
    const double left = p.elapsed_s / static_cast<double>(p.run_done) *
                        static_cast<double>(p.run_todo - p.run_done);
    bar += "  ETA " + format_duration(left);
  } else if (p.run_done == 0) {
    bar += "  ETA --";
  } else {
    bar += "  " + format_duration(p.elapsed_s);
  }
  return bar;
}

}  // namespace pathfinder
