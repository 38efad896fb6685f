#include "engine/techlib/tech_library.hpp"

#include <algorithm>
#include <cctype>

namespace pathfinder {
namespace {
bool same_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}
// The exact name, else the first whose name differs only in case ("n7", "hbm3" as people
// type them).
template <class T>
const T* find_by_name(const std::vector<T>& v, const std::string& name) {
  for (const auto& e : v) {
    if (e.name == name) return &e;
  }
  for (const auto& e : v) {
    if (same_ignoring_case(e.name, name)) return &e;
  }
  return nullptr;
}
template <class T>
std::vector<std::string> names_of(const std::vector<T>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) out.push_back(e.name);
  return out;
}
}  // namespace

const SramTech* LogicNode::find_sram(const std::string& n) const { return find_by_name(sram, n); }
const LogicNode* TechLibrary::find_logic(const std::string& n) const { return find_by_name(logic, n); }
const MemoryTech* TechLibrary::find_memory(const std::string& n) const {
  return find_by_name(memory, n);
}
const NetworkTech* TechLibrary::find_network(const std::string& n) const {
  return find_by_name(network, n);
}
const NicTech* TechLibrary::find_nic(const std::string& n) const { return find_by_name(nic, n); }
std::vector<std::string> TechLibrary::logic_names() const { return names_of(logic); }
std::vector<std::string> TechLibrary::memory_names() const { return names_of(memory); }
std::vector<std::string> TechLibrary::network_names() const { return names_of(network); }
std::vector<std::string> TechLibrary::nic_names() const { return names_of(nic); }

}  // namespace pathfinder
