#include "engine/train/training_model.hpp"

#include <cmath>

#include "engine/core/format.hpp"
#include "engine/parallel/strategy_check.hpp"
#include "engine/train/cost.hpp"
#include "engine/train/energy.hpp"
#include "engine/perf/perf_machine.hpp"
#include "engine/system/system_graph.hpp"

namespace pathfinder {
namespace {

using Model = std::variant<GptTraining, LstmTraining, GemmTraining>;

Model make_model(const ArchSpec& spec, const MicroArch& arch, const WorkloadSpec& w,
                 int devices, const TrainingOptions& o) {
  PerfMachine machine = make_perf_machine(spec, arch);
  SystemGraph system = make_system_graph(spec, arch, devices);
  const Throughput peak = arch.core.peak;
  if (const auto* g = std::get_if<GptSpec>(&w)) {
    return Model(std::in_place_type<GptTraining>, *g, std::move(machine), std::move(system), peak,
                 o);
  }
  if (const auto* l = std::get_if<LstmSpec>(&w)) {
    return Model(std::in_place_type<LstmTraining>, *l, std::move(machine), std::move(system),
                 peak, o);
  }
  return Model(std::in_place_type<GemmTraining>, std::get<GemmSpec>(w), std::move(machine),
               std::move(system), peak);
}

}  // namespace

void reject_unsupported_operands(const WorkloadSpec& w, MicroArch& a) {
  const auto* g = std::get_if<GemmSpec>(&w);
  if (!a.feasible || g == nullptr || g->precision != DataType::kFp4 ||
      a.core.fp4_peak > Throughput{}) {
    return;
  }
  a.feasible = false;
  a.infeasible_reason = "an FP4 GEMM needs FP4 matrix units (core.fp4_throughput_ratio), which " +
                        a.name + " lacks";
}

Strategy trivial_strategy(const WorkloadSpec& w) {
  // One device: dp is 1 and never out of range, so completing cannot throw.
  return complete_strategy(PartialStrategy{}, w, 1, strategy_source());
}

TrainingModel::TrainingModel(const ArchSpec& spec, const MicroArch& arch, const WorkloadSpec& w,
                             int devices, TrainingOptions options)
    : model_(make_model(spec, arch, w, devices, options)),
      power_(device_power(spec, arch)),
      cost_(device_cost(spec, arch)),
      devices_(devices),
      support_(options.parallelism),
      software_(options.software.empty() ? "this software stack" : options.software) {}

TrainingResult TrainingModel::evaluate(const Strategy& s) {
  TrainingResult r;
  evaluate(s, r);
  return r;
}

void TrainingModel::evaluate(const Strategy& s, TrainingResult& r) {
  // A run the stack cannot make has no time. (The paper's LSTM and GEMM models stand outside
  // the LLM stacks the profiles describe.)
  if (auto* gpt = std::get_if<GptTraining>(&model_)) {
    if (!support_.runs(s)) {
      r = TrainingResult{};
      r.strategy = s;
      r.memory = gpt_memory_footprint(gpt->spec(), s, gpt->options().memory);  // it would hold
      r.memory_capacity = gpt->memory_capacity();
      r.feasible = false;
      r.reason = support_.refuses(s, software_);
      return;
    }
    gpt->evaluate(s, r);
  } else if (auto* lstm = std::get_if<LstmTraining>(&model_)) {
    lstm->evaluate(s, r);
  } else {
    r = std::visit([&s](auto& m) { return m.evaluate(s); }, model_);
  }
  // Absurd but well-formed inputs (a utilization of 1e-308, a bandwidth of 1e-300 B/s) can
  // drive a time to inf or nan: that is a design the model cannot answer for, never a number.
  const auto finite = [](double v) { return std::isfinite(v); };
  if (r.feasible && !(finite(r.iteration_time.si()) && r.iteration_time > Time{} &&
                      finite(r.breakdown.total().si()) && finite(r.mfu) &&
                      finite(r.tokens_per_second))) {
    r.feasible = false;
    r.reason = "the model's iteration time is not a finite positive number: an input is "
               "outside its physical range (utilizations, bandwidths, capacities, budgets)";
  }
  // A board limited below what the chip draws idle cannot run at any clock (the power
  // limiter's cap, engine/perf/power_limiter.hpp): a design with a reason, not a time.
  if (r.feasible && power_.limit > 0.0 && power_.limit <= power_.chip_idle()) {
    r.feasible = false;
    r.reason = printf_string("the board's power limit (%.4g W) is not above what the chip draws "
                             "idle (%.4g W: leakage, clock tree, links)",
                             power_.limit, power_.chip_idle());
  }
  if (r.feasible) {
    const double tokens = r.tokens_per_second * r.iteration_time.si();
    r.energy = iteration_energy(power_, r, devices_, tokens);
    r.cost = iteration_cost(cost_, r, devices_, tokens);
    if (!(finite(r.energy.joules.si()) && finite(r.energy.peak_device_power.si()) &&
          finite(r.cost.usd))) {
      r.feasible = false;
      r.reason = "the model's energy or cost is not a finite number: an input is outside its "
                 "physical range (powers, energies, bandwidths, prices)";
    }
  }
}

bool TrainingModel::fits(const Strategy& s) const {
  const auto* gpt = std::get_if<GptTraining>(&model_);
  if (gpt == nullptr) return true;
  if (!support_.runs(s)) return false;  // evaluate(s) refuses it
  const TrainingOptions& o = gpt->options();
  return !o.check_memory ||
         gpt_memory_footprint(gpt->spec(), s, o.memory).total() <= gpt->memory_capacity();
}

std::string TrainingModel::refusal(const Strategy& s) const {
  if (!std::holds_alternative<GptTraining>(model_) || support_.runs(s)) return {};
  return support_.refuses(s, software_);
}

std::optional<Time> TrainingModel::lower_bound(const Strategy& s) {
  auto* gpt = std::get_if<GptTraining>(&model_);
  if (gpt == nullptr) return Time{};
  if (!fits(s)) return std::nullopt;
  return gpt->lower_bound(s);
}

std::optional<Timeline> TrainingModel::timeline(const Strategy& s, TrainingResult& r) {
  evaluate(s, r);
  auto* gpt = std::get_if<GptTraining>(&model_);
  if (gpt == nullptr) return std::nullopt;
  if (!r.feasible) return Timeline{};
  TrainingResult timed;
  return gpt->timeline(s, timed);
}

std::optional<GptTraining::LayerKernels> TrainingModel::layer_kernels(const Strategy& s) {
  auto* gpt = std::get_if<GptTraining>(&model_);
  if (gpt == nullptr) return std::nullopt;
  return gpt->layer_kernels(s);
}

TrainingResult evaluate_training(const ArchSpec& spec, const MicroArch& arch,
                                 const WorkloadSpec& w, const std::optional<Strategy>& s,
                                 const TrainingOptions& options) {
  const Strategy strategy = s ? *s : trivial_strategy(w);
  TrainingModel model(spec, arch, w, strategy.devices(), options);
  return model.evaluate(strategy);
}

}  // namespace pathfinder
