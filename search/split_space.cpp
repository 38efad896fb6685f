#include "search/split_space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "engine/core/format.hpp"

namespace pathfinder {
namespace {

Diagnostic space_problem(std::string key, std::string message) {
  return Diagnostic{SourceLoc{"split space", 0, 0, std::move(key)}, std::move(message)};
}

// Σ_i clamp(x_i − τ, lo_i, hi_i).
double shifted_sum(const double* x, const double* lo, const double* hi, int n, double tau) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += std::clamp(x[i] - tau, lo[i], hi[i]);
  return s;
}

// Projection of one block in place (see project() in the header).
void project_block(double* x, const double* lo, const double* hi, int n) {
  if (shifted_sum(x, lo, hi, n, 0.0) <= 1.0) {
    for (int i = 0; i < n; ++i) x[i] = std::clamp(x[i], lo[i], hi[i]);
    return;
  }
  // g(τ) falls from Σ hi (> 1, since g(0) > 1) to Σ lo (≤ 1). Among the kinks, ta is the
  // largest with g ≥ 1 and tb the smallest with g < 1; no kink lies between them, so g is
  // linear on [ta, tb] and the root is interpolated exactly. No tb: Σ lo = 1, τ = ta gives lo.
  double ta = -std::numeric_limits<double>::infinity(), ga = 0.0;
  double tb = std::numeric_limits<double>::infinity(), gb = 0.0;
  for (int k = 0; k < 2 * n; ++k) {
    const int i = k / 2;
    const double t = (k % 2 == 0) ? x[i] - hi[i] : x[i] - lo[i];
    const double g = shifted_sum(x, lo, hi, n, t);
    if (g >= 1.0) {
      if (t > ta) ta = t, ga = g;
    } else if (t < tb) {
      tb = t, gb = g;
    }
  }
  PF_ASSERT(std::isfinite(ta));
  const double tau = std::isfinite(tb) ? ta + (ga - 1.0) * (tb - ta) / (ga - gb) : ta;
  for (int i = 0; i < n; ++i) x[i] = std::clamp(x[i] - tau, lo[i], hi[i]);
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

SplitSpace::SplitSpace(int components, Eigen::VectorXd lower, Eigen::VectorXd upper,
                       std::vector<std::string> names)
    : h_(components), lo_(std::move(lower)), hi_(std::move(upper)), names_(std::move(names)) {
  std::vector<Diagnostic> problems;
  if (h_ < 1) {
    throw ConfigError(
        space_problem("components", "expected at least 1 component, got " + std::to_string(h_)));
  }
  const auto n = static_cast<Eigen::Index>(kBudgets * h_);
  if (lo_.size() != n || hi_.size() != n) {
    throw ConfigError(
        space_problem("bounds",
                      printf_string("expected %d lower and %d upper bounds (3 budgets x %d "
                                    "components), got %d and %d",
                                    dim(), dim(), h_, static_cast<int>(lo_.size()),
                                    static_cast<int>(hi_.size()))));
  }
  if (names_.empty()) {
    for (int i = 0; i < h_; ++i) names_.push_back("c" + std::to_string(i));
  } else if (static_cast<int>(names_.size()) != h_) {
    throw ConfigError(
        space_problem("names", printf_string("expected %d component names, got %d", h_,
                                             static_cast<int>(names_.size()))));
  }
  for (int k = 0; k < dim(); ++k) {
    const double lo = lo_[k], hi = hi_[k];
    const std::string key = coordinate_name(k);
    const auto check = [&](const char* which, double v) {
      if (!std::isfinite(v)) {
        problems.push_back(
            space_problem(key, printf_string("%s bound %g is not a finite number", which, v)));
      } else if (v < 0.0 || v > 1.0) {
        problems.push_back(space_problem(
            key,
            printf_string("%s bound %g is outside [0, 1] (a fraction of the budget)", which, v)));
      }
    };
    check("lower", lo);
    check("upper", hi);
    if (lo > hi) {
      problems.push_back(
          space_problem(key, printf_string("lower bound %g exceeds upper bound %g", lo, hi)));
    }
    if (lo < hi) free_.push_back(k);
  }
  for (int b = 0; b < kBudgets; ++b) {
    const double s = lo_.segment(b * h_, h_).sum();
    if (s > 1.0) {
      problems.push_back(
          space_problem(std::string(kBudgetNames[b]),
                  printf_string("lower bounds sum to %g, more than the whole budget (1)", s)));
    }
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
}

SplitSpace SplitSpace::simplex(int components, std::vector<std::string> names) {
  const auto n = static_cast<Eigen::Index>(kBudgets * std::max(components, 0));
  return SplitSpace(components, Eigen::VectorXd::Zero(n), Eigen::VectorXd::Ones(n),
                    std::move(names));
}

std::string SplitSpace::coordinate_name(int k) const {
  return std::string(kBudgetNames[static_cast<std::size_t>(k / h_)]) + "." +
         names_[static_cast<std::size_t>(k % h_)];
}

bool SplitSpace::sum_can_bind(int b) const { return hi_.segment(b * h_, h_).sum() > 1.0; }

Eigen::VectorXd SplitSpace::project(const Eigen::VectorXd& x) const {
  Eigen::VectorXd y = x;
  project_in_place(y);
  return y;
}

void SplitSpace::project_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
  PF_ASSERT(x.size() == dim());
  PF_ASSERT(x.allFinite());
  for (int b = 0; b < kBudgets; ++b) {
    project_block(x.data() + b * h_, lo_.data() + b * h_, hi_.data() + b * h_, h_);
  }
}

bool SplitSpace::contains(const Eigen::VectorXd& x, double tol) const {
  if (x.size() != dim() || !x.allFinite()) return false;
  for (int k = 0; k < dim(); ++k) {
    if (x[k] < lo_[k] - tol || x[k] > hi_[k] + tol) return false;
  }
  for (int b = 0; b < kBudgets; ++b) {
    if (x.segment(b * h_, h_).sum() > 1.0 + tol) return false;
  }
  return true;
}

Eigen::VectorXd SplitSpace::sample(std::mt19937_64& rng) const {
  constexpr int kMaxDraws = 256;
  Eigen::VectorXd x = lo_;
  std::vector<int> f;
  for (int b = 0; b < kBudgets; ++b) {
    f.clear();
    for (int i = b * h_; i < (b + 1) * h_; ++i) {
      if (lo_[i] < hi_[i]) f.push_back(i);
    }
    const double r = 1.0 - lo_.segment(b * h_, h_).sum();
    if (f.empty() || r <= 0.0) continue;
    // log volumes: box Π (hi − lo); simplex r^n / n!.
    double log_box = 0.0, log_simplex = static_cast<double>(f.size()) * std::log(r);
    for (std::size_t j = 0; j < f.size(); ++j) {
      log_box += std::log(hi_[f[j]] - lo_[f[j]]);
      log_simplex -= std::log(static_cast<double>(j + 1));
    }
    const bool from_box = log_box <= log_simplex;
    for (int draw = 0; draw < kMaxDraws; ++draw) {
      bool ok = true;
      if (from_box) {
        double s = 0.0;
        for (int i : f) s += (x[i] = lo_[i] + (hi_[i] - lo_[i]) * uniform01(rng)) - lo_[i];
        ok = s <= r;
      } else {
        double s = -std::log(1.0 - uniform01(rng));  // the slack's exponential
        for (int i : f) s += (x[i] = -std::log(1.0 - uniform01(rng)));
        for (int i : f) {
          x[i] = lo_[i] + r * x[i] / s;
          ok = ok && x[i] <= hi_[i];
        }
      }
      if (ok) break;
      if (draw + 1 == kMaxDraws) {
        project_block(x.data() + b * h_, lo_.data() + b * h_, hi_.data() + b * h_, h_);
      }
    }
  }
  return x;
}

std::mt19937_64 restart_rng(std::uint64_t seed, int index) {
  const auto i = static_cast<std::uint64_t>(index) + 1;
  return std::mt19937_64(splitmix64(seed + i * 0x9E3779B97F4A7C15ULL));
}

}  // namespace pathfinder
