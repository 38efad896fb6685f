// A template bound to its technologies, and the resource split the generator and the search
// work on.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/arch_template.hpp"
#include "engine/techlib/tech_library.hpp"

namespace pathfinder {

// Immutable: everything generate_micro_arch needs, copied out of the library once.
struct ArchSpec {
  ArchTemplate tmpl;
  LogicNode logic;
  std::vector<SramTech> level_tech;  // per template level, bank override applied
  MemoryTech memory;
  int memory_layers = 1;
  std::optional<NetworkTech> intra;
  std::optional<NetworkTech> inter;
};

// Throws ConfigError listing every problem check_template finds.
[[nodiscard]] ArchSpec bind_template(const TechLibrary& lib, const ArchTemplate& t);

// Fractions of the area, power and perimeter budgets per component, in component order
// (core, each on-chip level, main_memory, intra_package, inter_package). Laid out as one
// vector [area(H) | power(H) | perimeter(H)] so searches can treat it as a point.
class ResourceSplit {
 public:
  ResourceSplit() = default;
  explicit ResourceSplit(int components) : h_(components), x_(Eigen::VectorXd::Zero(3 * components)) {}
  [[nodiscard]] static ResourceSplit from_template(const ArchTemplate& t);

  [[nodiscard]] int components() const { return h_; }
  [[nodiscard]] double area(int i) const { return x_[i]; }
  [[nodiscard]] double power(int i) const { return x_[h_ + i]; }
  [[nodiscard]] double perimeter(int i) const { return x_[2 * h_ + i]; }
  void set(int i, double area, double power, double perimeter) {
    x_[i] = area;
    x_[h_ + i] = power;
    x_[2 * h_ + i] = perimeter;
  }
  [[nodiscard]] const Eigen::VectorXd& values() const { return x_; }
  [[nodiscard]] Eigen::VectorXd& values() { return x_; }

 private:
  int h_ = 0;
  Eigen::VectorXd x_;
};

// Component indices for a template with L on-chip levels.
struct ComponentIndex {
  int levels = 0;
  [[nodiscard]] static constexpr int core() { return 0; }
  [[nodiscard]] int level(int i) const { return 1 + i; }
  [[nodiscard]] int main_memory() const { return 1 + levels; }
  [[nodiscard]] int intra() const { return 2 + levels; }
  [[nodiscard]] int inter() const { return 3 + levels; }
  [[nodiscard]] int count() const { return 4 + levels; }
};

}  // namespace pathfinder
