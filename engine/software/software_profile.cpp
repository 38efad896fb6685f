#include "engine/software/software_profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <utility>

#include "engine/config/node.hpp"
#include "engine/core/error.hpp"

namespace pathfinder {
namespace {

// A key with two values: true when it holds `on`, false when it holds `off` or is absent; any
// other value is a located error naming both as `expected` says.
bool two_way(const ConfigNode& n, const char* key, const char* off, const char* on,
             const char* expected) {
  const std::string v = n.get_or<std::string>(key, off);
  if (v != off && v != on) {
    throw n.error_at(key, std::string("expected ") + expected + ", got " + n.quoted(key));
  }
  return v == on;
}

// A key holding one of `values` (absent: `fallback`, one of them); any other value is a located
// error naming them in order. The enumerator at the value's position.
template <class Enum>
Enum one_of(const ConfigNode& n, const char* key, const char* fallback,
            std::initializer_list<std::pair<const char*, Enum>> values) {
  const std::string v = n.get_or<std::string>(key, fallback);
  std::string expected;
  std::size_t i = 0;
  for (const auto& [name, value] : values) {
    if (v == name) return value;
    expected += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  throw n.error_at(key, "expected " + expected + ", got " + n.quoted(key));
}

// A list of names from `allowed`, each once, as a bit per name's value; `empty_ok`: [] is none.
std::uint8_t name_bits(const ConfigNode& n, const char* key,
                       const std::vector<std::pair<std::string, unsigned>>& allowed,
                       bool empty_ok) {
  std::uint8_t bits = 0;
  std::string names;
  for (const auto& [name, bit] : allowed) names += (names.empty() ? "" : ", ") + name;
  const std::vector<ConfigNode> items = n.items(key);
  if (items.empty() && !empty_ok) throw n.error_at(key, "expected at least one of " + names);
  for (const ConfigNode& item : items) {
    const std::string v = item.as<std::string>();
    const auto it = std::find_if(allowed.begin(), allowed.end(),
                                 [&](const auto& a) { return a.first == v; });
    if (it == allowed.end()) throw item.error("expected one of " + names + ", got \"" + v + "\"");
    if ((bits >> it->second & 1U) != 0) throw item.error("\"" + v + "\" is listed twice");
    bits = static_cast<std::uint8_t>(bits | 1U << it->second);
  }
  return bits;
}

ParallelismSupport read_parallelism(const ConfigNode& p) {
  ParallelismSupport s;
  if (p.has("schedules")) {
    s.schedules = name_bits(p, "schedules",
                            {{"gpipe", static_cast<unsigned>(PipelineSchedule::kGpipe)},
                             {"1f1b", static_cast<unsigned>(PipelineSchedule::kOneFOneB)},
                             {"interleaved", static_cast<unsigned>(PipelineSchedule::kInterleaved)},
                             {"dualpipe", static_cast<unsigned>(PipelineSchedule::kDualPipe)}},
                            true);  // []: no pipelining
  }
  if (p.has("zero")) s.zero_stages = name_bits(p, "zero", {{"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}}, false);
  if (p.has("context")) {
    const std::uint8_t cp = name_bits(p, "context", {{"ring", 0}, {"all-to-all", 1}}, true);
    s.ring_context = (cp & 1U) != 0;
    s.ulysses = (cp & 2U) != 0;
  }
  s.expert = p.get_or<bool>("expert", true);
  s.sequence_parallel = p.get_or<bool>("sequence_parallel", true);
  p.finish();
  return s;
}

}  // namespace

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
  s.collectives = two_way(root, "collectives", "any", "nccl", "nccl or any")
                      ? CollectiveLibrary::kNccl
                      : CollectiveLibrary::kAny;
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
    s.overlap_tp_backward = o->get_or<bool>("tensor_parallel_backward", false);
    s.overlap_expert_comm = o->get_or<bool>("expert_parallel", false);
    s.collective_sms = o->get_or<int>("collective_sms", 0);
    if (s.collective_sms < 0 || s.collective_sms > 1024) {
      o->report(o->error_at("collective_sms", "expected a count of SMs in [0, 1024], got " +
                                                  o->quoted("collective_sms")));
      s.collective_sms = 0;
    }
    o->finish();
  }
  s.overlap_zero_gradients = s.overlap_data_parallel;
  if (auto z = root.optional_child("zero")) {
    s.overlap_zero_gradients = z->get_or<bool>("overlap", s.overlap_data_parallel);
    s.zero_all_reduce = two_way(*z, "gradient_collective", "reduce-scatter", "all-reduce",
                                "reduce-scatter or all-reduce");
    z->finish();
  }
  if (auto p = root.optional_child("precision")) {
    const std::string linear = p->get_or<std::string>("linear_layers", "workload");
    if (linear != "workload" && linear != "fp8" && linear != "fp4") {
      p->report(p->error_at("linear_layers", "expected fp8, fp4 or workload (the workload's "
                                             "precision), got " + p->quoted("linear_layers")));
    }
    s.quantized_linear = linear == "fp8" || linear == "fp4";
    s.quant_recipe = one_of<QuantRecipe>(*p, "fp8_scaling", "delayed",
                                         {{"delayed", QuantRecipe::kDelayed},
                                          {"current", QuantRecipe::kCurrent},
                                          {"rowwise", QuantRecipe::kRowwise},
                                          {"mxfp8", QuantRecipe::kMxfp8},
                                          {"blockwise", QuantRecipe::kBlockwise}});
    if (p->has("fp8_scaling") && linear != "fp8") {
      p->report(p->error_at("fp8_scaling", "applies to linear_layers: fp8"));
    }
    if (linear == "fp4") s.quant_recipe = QuantRecipe::kNvfp4;
    // Megatron-Core's --fp8-param-gather (Transformer Engine's fp8_model_init): the linear
    // layers' weights held and all-gathered quantized, no 16-bit copy.
    s.memory.quantized_parameters =
        two_way(*p, "parameters", "workload", "quantized", "workload or quantized");
    if (s.memory.quantized_parameters && !s.quantized_linear) {
      p->report(p->error_at("parameters", "expected workload unless linear_layers is fp8 or fp4, got " +
                                              p->quoted("parameters")));
    }
    s.fp8_fast_backward_accumulation =
        two_way(*p, "fp8_backward_accumulation", "promoted", "fast", "promoted or fast");
    s.fp8_tp_gather =
        two_way(*p, "tensor_parallel_gather", "bf16", "fp8", "bf16 or fp8");
    if (s.fp8_tp_gather && (linear == "fp4" || s.quant_recipe == QuantRecipe::kRowwise)) {
      p->report(p->error_at("tensor_parallel_gather",
                            "expected bf16 with FP4 layers or row-wise FP8 scales (gathered rows "
                            "are quantized with one scale per tensor or block), got " +
                                p->quoted("tensor_parallel_gather")));
    }
    s.gradient_reduction = one_of<GradientReduction>(
        *p, "gradient_reduction", "workload",
        {{"workload", GradientReduction::kWorkload},
         {"fp32", GradientReduction::kFp32},
         {"fp32_if_bf16", GradientReduction::kFp32IfBf16}});
    p->finish();
  }
  if (auto k = root.optional_child("kernels")) {
    s.attention_kernel = one_of<FlashKernel>(*k, "attention", "fused",
                                             {{"flash2", FlashKernel::kFlash2},
                                              {"flash1", FlashKernel::kFlash1},
                                              {"fused", FlashKernel::kNative},
                                              {"cudnn", FlashKernel::kCudnn}});
    s.metric_losses = k->get_or<int>("metric_losses", 0);
    if (s.metric_losses < 0 || s.metric_losses > 16) {
      throw k->error_at("metric_losses",
                        "expected a count from 0 to 16, got " + k->quoted("metric_losses"));
    }
    s.fp32_cross_entropy = two_way(*k, "cross_entropy", "fused", "fp32", "fp32 or fused");
    s.selective_op = two_way(*k, "selective_recompute", "attention", "ops", "attention or ops");
    s.separate_bias = two_way(*k, "bias", "epilogue", "separate", "epilogue or separate");
    s.sp_layout_copy =
        two_way(*k, "sequence_parallel_layout", "direct", "copy", "direct or copy");
    s.eager.rmsnorm = two_way(*k, "rmsnorm", "fused", "eager", "fused or eager");
    s.eager.rotary = two_way(*k, "rotary", "fused", "eager", "fused or eager");
    s.eager.swiglu = two_way(*k, "swiglu", "fused", "eager", "fused or eager");
    s.eager.repeat_kv = two_way(*k, "repeat_kv", "none", "copy", "none or copy");
    s.eager.qkv_layout = two_way(*k, "qkv_layout", "none", "copy", "none or copy");
    s.wgrad_accumulation = one_of<WgradAccumulation>(
        *k, "wgrad_accumulation", "none",
        {{"fused", WgradAccumulation::kFused},
         {"separate", WgradAccumulation::kSeparate},
         {"none", WgradAccumulation::kNone}});
    k->finish();
  }
  if (auto pl = root.optional_child("pipeline")) {
    s.memory.layer_split = two_way(*pl, "layer_split", "even", "by-cost", "even or by-cost")
                               ? LayerSplit::kByCost
                               : LayerSplit::kEven;
    pl->finish();
  }
  if (auto p = root.optional_child("parallelism")) s.parallelism = read_parallelism(*p);
  if (auto m = root.optional_child("moe")) {
    s.forwarded_dispatch = two_way(*m, "dispatcher", "alltoall", "deepep", "alltoall or deepep");
    s.fp8_dispatch = two_way(*m, "dispatch_precision", "bf16", "fp8", "bf16 or fp8");
    if (s.fp8_dispatch && !(s.quantized_linear && s.quant_recipe != QuantRecipe::kNvfp4)) {
      throw m->error_at("dispatch_precision",
                        "expected bf16 unless precision.linear_layers is fp8 (the experts' "
                        "GEMMs take the FP8 rows the dispatch sends), got " +
                            m->quoted("dispatch_precision"));
    }
    m->finish();
  }
  if (auto m = root.optional_child("memory_model")) {
    s.memory.fp32_gradient_buffer = m->get_or<bool>("fp32_gradient_buffer", false);
    s.memory.zero_unsharded_bytes = m->get_or<double>("zero_unsharded_bytes", 0.0);
    s.memory.zero_sharded_bytes = m->get_or<double>("zero_sharded_bytes", 0.0);
    s.memory.activation_factor = m->get_or<double>("activation_factor", 1.0);
    s.memory.pipeline_buffers = m->get_or<double>("pipeline_buffers", 0.0);
    s.memory.activation_bytes =
        two_way(*m, "activation_precision", "workload", "fp8", "workload or fp8") ? 1.0 : 0.0;
    s.memory.moment_bytes =
        two_way(*m, "optimizer_moments", "fp32", "bf16", "fp32 or bf16") ? 4.0 : 0.0;
    // The quantized linear layers' saved inputs and kept weight copies, at the recipe's bytes.
    const bool inputs = two_way(*m, "linear_inputs", "workload", "quantized", "workload or quantized");
    const double copies = m->get_or<double>("weight_copies", 0.0);
    const double element = quantized_element_bytes(s.quant_recipe);
    for (const char* key : {"linear_inputs", "weight_copies"}) {
      if (m->has(key) && !s.quantized_linear) {
        throw m->error_at(key, std::string("applies to precision.linear_layers: fp8 or fp4, got ") +
                                   key + " with the workload's precision");
      }
    }
    if (m->has("weight_copies") && !(copies >= 0.0 && copies <= 4.0 && copies == std::floor(copies))) {
      throw m->error_at("weight_copies",
                        "expected a whole number of copies from 0 to 4, got " + m->quoted("weight_copies"));
    }
    if (inputs && s.memory.activation_bytes > 0.0) {
      throw m->error_at("linear_inputs", "expected workload beside activation_precision: fp8 "
                                         "(every stored activation already at 1 byte), got " +
                                             m->quoted("linear_inputs"));
    }
    s.memory.linear_input_bytes = inputs ? element : 0.0;
    s.memory.linear_weight_copy_bytes = copies * element;
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
  if (s.memory.quantized_parameters && s.memory.linear_weight_copy_bytes <= 0.0) {
    throw root.child("precision").error_at(
        "parameters", "expected workload unless memory_model.weight_copies is at least 1 (the "
                      "quantized weights are the parameters' only copy), got " +
                          root.child("precision").quoted("parameters"));
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
  t.collectives = s.collectives;
  return t;
}

}  // namespace pathfinder
