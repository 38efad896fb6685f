#include "engine/software/software_profile.hpp"

#include <cstdlib>
#include <filesystem>

#include "engine/config/node.hpp"
#include "engine/core/error.hpp"

namespace pathfinder {

SoftwareProfile read_software_profile(const ConfigNode& root) {
  SoftwareProfile s;
  s.file = root.file();
  s.name = root.require<std::string>("name");
  (void)root.optional<std::string>("description");
  const ConfigNode host = root.child("host");
  s.dispatch = host.get_non_negative_or<Time>("dispatch", Time{});
  s.training_dispatch = host.get_non_negative_or<Time>("training_dispatch", s.dispatch);
  s.iteration = host.get_non_negative_or<Time>("iteration", Time{});
  host.finish();
  if (auto o = root.optional_child("overlap")) {
    s.overlap_data_parallel = o->get_or<bool>("data_parallel", false);
    // A fraction in [0, 1] or the word chunked: read as text, so one message names both forms.
    const std::string tp = o->get_or<std::string>("tensor_parallel", "0");
    s.tensor_comm_chunked = tp == "chunked";
    if (!s.tensor_comm_chunked) {
      char* end = nullptr;
      const double v = std::strtod(tp.c_str(), &end);
      s.tensor_comm_overlap = !tp.empty() && end == tp.c_str() + tp.size() ? v : -1.0;
      if (!(s.tensor_comm_overlap >= 0.0 && s.tensor_comm_overlap <= 1.0)) {
        o->report(o->error_at("tensor_parallel", "expected a fraction in [0, 1] or chunked, got " +
                                                     o->quoted("tensor_parallel")));
        s.tensor_comm_overlap = 0.0;
      }
    }
    s.overlap_sp_regather = o->get_or<bool>("sequence_parallel_regather", false);
    o->finish();
  }
  if (auto p = root.optional_child("precision")) {
    const std::string linear = p->get_or<std::string>("linear_layers", "workload");
    if (linear != "fp8" && linear != "workload") {
      throw p->error_at("linear_layers", "expected fp8 or workload (the workload's precision), got " +
                                             p->quoted("linear_layers"));
    }
    s.fp8_linear = linear == "fp8";
    const std::string accumulation = p->get_or<std::string>("fp8_backward_accumulation", "promoted");
    if (accumulation != "promoted" && accumulation != "fast") {
      throw p->error_at("fp8_backward_accumulation",
                        "expected promoted or fast, got " + p->quoted("fp8_backward_accumulation"));
    }
    s.fp8_fast_backward_accumulation = accumulation == "fast";
    const std::string reduction = p->get_or<std::string>("gradient_reduction", "workload");
    if (reduction == "fp32") {
      s.gradient_reduction = GradientReduction::kFp32;
    } else if (reduction == "fp32_if_bf16") {
      s.gradient_reduction = GradientReduction::kFp32IfBf16;
    } else if (reduction != "workload") {
      throw p->error_at("gradient_reduction",
                        "expected workload, fp32 or fp32_if_bf16, got " +
                            p->quoted("gradient_reduction"));
    }
    p->finish();
  }
  if (auto k = root.optional_child("kernels")) {
    const std::string attention = k->get_or<std::string>("attention", "fused");
    if (attention != "flash2" && attention != "fused") {
      throw k->error_at("attention", "expected flash2 or fused, got " + k->quoted("attention"));
    }
    s.flash2 = attention == "flash2";
    const std::string ce = k->get_or<std::string>("cross_entropy", "fused");
    if (ce != "fp32" && ce != "fused") {
      throw k->error_at("cross_entropy", "expected fp32 or fused, got " + k->quoted("cross_entropy"));
    }
    s.fp32_cross_entropy = ce == "fp32";
    const std::string sel = k->get_or<std::string>("selective_recompute", "attention");
    if (sel != "attention" && sel != "ops") {
      throw k->error_at("selective_recompute",
                        "expected attention or ops, got " + k->quoted("selective_recompute"));
    }
    s.selective_op = sel == "ops";
    const std::string bias = k->get_or<std::string>("bias", "epilogue");
    if (bias != "epilogue" && bias != "separate") {
      throw k->error_at("bias", "expected epilogue or separate, got " + k->quoted("bias"));
    }
    s.separate_bias = bias == "separate";
    for (const auto& [key, flag] : {std::pair<const char*, bool*>{"rmsnorm", &s.eager.rmsnorm},
                                    {"rotary", &s.eager.rotary},
                                    {"swiglu", &s.eager.swiglu}}) {
      const std::string v = k->get_or<std::string>(key, "fused");
      if (v != "fused" && v != "eager") {
        throw k->error_at(key, "expected fused or eager, got " + k->quoted(key));
      }
      *flag = v == "eager";
    }
    const std::string repeat = k->get_or<std::string>("repeat_kv", "none");
    if (repeat != "none" && repeat != "copy") {
      throw k->error_at("repeat_kv", "expected none or copy, got " + k->quoted("repeat_kv"));
    }
    s.eager.repeat_kv = repeat == "copy";
    const std::string layout = k->get_or<std::string>("qkv_layout", "none");
    if (layout != "none" && layout != "copy") {
      throw k->error_at("qkv_layout", "expected none or copy, got " + k->quoted("qkv_layout"));
    }
    s.eager.qkv_layout = layout == "copy";
    const std::string wgrad = k->get_or<std::string>("wgrad_accumulation", "separate");
    if (wgrad != "separate" && wgrad != "fused") {
      throw k->error_at("wgrad_accumulation",
                        "expected fused or separate, got " + k->quoted("wgrad_accumulation"));
    }
    s.wgrad_accumulation_fused = wgrad == "fused";
    k->finish();
  }
  if (auto m = root.optional_child("memory_model")) {
    s.memory.fp32_gradient_buffer = m->get_or<bool>("fp32_gradient_buffer", false);
    s.memory.zero_unsharded_bytes = m->get_or<double>("zero_unsharded_bytes", 0.0);
    s.memory.zero_sharded_bytes = m->get_or<double>("zero_sharded_bytes", 0.0);
    s.memory.activation_factor = m->get_or<double>("activation_factor", 1.0);
    s.memory.pipeline_buffers = m->get_or<double>("pipeline_buffers", 0.0);
    for (const char* key : {"zero_unsharded_bytes", "zero_sharded_bytes", "pipeline_buffers"}) {
      if (m->has(key) && !(m->get_or<double>(key, 0.0) >= 0.0)) {
        throw m->error_at(key, "expected a number >= 0, got " + m->quoted(key));
      }
    }
    if (!(s.memory.activation_factor > 0.0)) {
      throw m->error_at("activation_factor",
                        "expected a factor > 0, got " + m->quoted("activation_factor"));
    }
    m->finish();
  }
  root.finish();
  return s;
}

SoftwareProfile load_software_profile(const std::string& path) {
  return read_software_profile(ConfigNode::load_file(path));
}

std::string resolve_software_profile(const std::string& name_or_path,
                                     const std::vector<std::string>& dirs, const SourceLoc& where) {
  const std::string name = name_or_path.empty() ? kDefaultSoftwareProfile : name_or_path;
  const bool is_path = name.find('/') != std::string::npos ||
                       (name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0);
  if (is_path) return name;
  std::string tried;
  for (const std::string& d : dirs) {
    const std::filesystem::path p = std::filesystem::path(d) / (name + ".yaml");
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + p.lexically_normal().string();
  }
  const SourceLoc at = where.file.empty() ? SourceLoc{"software profile", 0, 0, "software"} : where;
  throw ConfigError(Diagnostic{at,
                               "expected a software profile file or the name of one in " +
                                   (tried.empty() ? std::string("(no directory)") : tried) +
                                   ", got \"" + name + "\""});
}

SoftwareProfile software_for(const std::string& choice, const std::string& template_file,
                             const SourceLoc& where) {
  const std::string beside =
      (std::filesystem::path(template_file).parent_path() / "software").lexically_normal().string();
  return load_software_profile(
      resolve_software_profile(choice, {beside, PATHFINDER_SHIPPED_SOFTWARE}, where));
}

ArchTemplate with_software(ArchTemplate t, const SoftwareProfile& s) {
  t.host.dispatch = s.dispatch;
  t.host.training_dispatch = s.training_dispatch;
  t.host.iteration = s.iteration;
  return t;
}

}  // namespace pathfinder
