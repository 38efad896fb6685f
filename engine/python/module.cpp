// The pathfinder Python module's native part, `pathfinder._pathfinder` (pybind11): the
// commands as functions (engine/cli/api.hpp) returning their JSON text, which the package's
// __init__.py turns into dicts. The GIL is released while they run, so Python threads
// evaluate in parallel; a ConfigError becomes pathfinder.ConfigError (a ValueError) whose
// message is the command's located lines.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "engine/cli/api.hpp"
#include "engine/core/error.hpp"

namespace py = pybind11;
using namespace pathfinder;

namespace {

api::Machine machine(std::string tmpl, std::string tech, std::string memory, std::string network,
                     std::string techlib, std::string software, std::vector<std::string> sets,
                     std::string nic) {
  return api::Machine{std::move(tmpl),    std::move(tech),    std::move(memory),
                      std::move(network), std::move(techlib), std::move(software),
                      std::move(sets),    std::move(nic)};
}

}  // namespace

PYBIND11_MODULE(_pathfinder, m) {
  m.doc() = "Pathfinder's native functions; use the pathfinder package";
  static py::exception<ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      std::string text;
      for (const Diagnostic& d : e.diagnostics()) text += (text.empty() ? "" : "\n") + d.str();
      config_error(text.c_str());
    }
  });
  const auto release = py::call_guard<py::gil_scoped_release>();
  m.def("version", [] { return std::string(PATHFINDER_VERSION); });
  m.def(
      "validate",
      [](const std::vector<std::string>& paths, const std::string& techlib) {
        return api::validate(paths, techlib).dump();
      },
      py::arg("paths"), py::arg("techlib") = "", release);
  m.def(
      "arch",
      [](std::string tmpl, std::string tech, std::string memory, std::string network,
         std::string techlib, std::string software, std::vector<std::string> sets, std::string nic) {
        return api::arch(machine(std::move(tmpl), std::move(tech), std::move(memory),
                                 std::move(network), std::move(techlib), std::move(software),
                                 std::move(sets), std::move(nic)))
            .dump();
      },
      py::arg("template"), py::arg("tech"), py::arg("memory"), py::arg("network"),
      py::arg("techlib"), py::arg("software"), py::arg("sets"), py::arg("nic"), release);
  m.def(
      "evaluate",
      [](std::string tmpl, std::string workload, std::string strategy, int devices,
         std::string tech, std::string memory, std::string network, std::string techlib,
         std::string software, std::vector<std::string> sets, std::string nic) {
        api::Evaluation e{machine(std::move(tmpl), std::move(tech), std::move(memory),
                                  std::move(network), std::move(techlib), std::move(software),
                                  std::move(sets), std::move(nic)),
                          std::move(workload), std::move(strategy), devices};
        return api::evaluate(e).dump();
      },
      py::arg("template"), py::arg("workload"), py::arg("strategy"), py::arg("devices"),
      py::arg("tech"), py::arg("memory"), py::arg("network"), py::arg("techlib"),
      py::arg("software"), py::arg("sets"), py::arg("nic"), release);
  m.def(
      "rank",
      [](std::string tmpl, std::string workload, int devices, std::string objective, int top,
         std::string tech, std::string memory, std::string network, std::string techlib,
         std::string software, std::vector<std::string> sets, std::string nic) {
        api::Evaluation e{machine(std::move(tmpl), std::move(tech), std::move(memory),
                                  std::move(network), std::move(techlib), std::move(software),
                                  std::move(sets), std::move(nic)),
                          std::move(workload), "", devices};
        return api::rank(e, objective, top).dump();
      },
      py::arg("template"), py::arg("workload"), py::arg("devices"), py::arg("objective"),
      py::arg("top"), py::arg("tech"), py::arg("memory"), py::arg("network"),
      py::arg("techlib"), py::arg("software"), py::arg("sets"), py::arg("nic"), release);
  m.def(
      "search",
      [](const std::string& file, int restarts, int steps, int threads,
         const std::string& objective) {
        return api::search(file, restarts, steps, threads, objective).dump();
      },
      py::arg("search"), py::arg("restarts"), py::arg("steps"), py::arg("threads"),
      py::arg("objective"), release);
  m.def(
      "study",
      [](const std::string& file, const std::string& out, int threads) {
        return api::study(file, out, threads).dump();
      },
      py::arg("study"), py::arg("out"), py::arg("threads"), release);
}
