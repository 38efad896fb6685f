// Software profiles: the shipped ones load with their documented values, a template takes a
// profile's host costs, and every bad value is a located error.
#include <catch2/catch.hpp>

#include "engine/parallel/strategy_enumeration.hpp"

#include <string>

#include "engine/config/node.hpp"
#include "engine/software/software_profile.hpp"
#include "engine/train/gpt_training.hpp"
#include "tests/arch/arch_fixtures.hpp"

namespace pathfinder {
namespace {

std::string profile_error(const std::string& text) {
  return test::error_of([&] { (void)read_software_profile(ConfigNode::load_string(text, "p.yaml")); });
}

const char* const kMinimal = "name: x\nhost:\n  dispatch: 12 us\n";

}  // namespace

TEST_CASE("shipped software profiles load with their sourced values", "[software]") {
  const std::string dir = test::source_path("templates/software");
  for (const char* name : {"megatron-lm", "megatron-core", "megatron-core-fp8",
                           "megatron-core-nvfp4", "nemo-fp8", "nanotron", "fsdp", "llm-foundry",
                           "deepflow-reference"}) {
    const SoftwareProfile p = load_software_profile(resolve_software_profile(name, {dir}));
    CHECK(p.name == name);
  }
  const SoftwareProfile nvfp4 =
      load_software_profile(resolve_software_profile("megatron-core-nvfp4", {dir}));
  CHECK(nvfp4.quantized_linear);
  CHECK(nvfp4.quant_recipe == QuantRecipe::kNvfp4);
  const SoftwareProfile m = load_software_profile(resolve_software_profile("", {dir}));
  CHECK(m.name == "megatron-lm");  // the default
  // 12 us dispatch + the A100's 5 us launch + 11 us synchronize = the 28 us GEMM call floor.
  CHECK(m.dispatch.in(units::microseconds) == Approx(12.0));
  CHECK(m.training_dispatch.in(units::microseconds) == Approx(65.0));  // [fit] vTrain
  CHECK(m.separate_bias);  // Megatron-LM's `output + bias`, `grad_output.sum(dim=0)`
  CHECK(m.iteration.si() == 0.0);  // [fit] vTrain, refitted once the loss was modelled
  CHECK(m.fp32_cross_entropy);    // Megatron's vocab_parallel_cross_entropy(output.float())
  CHECK_FALSE(m.overlap_data_parallel);  // local DDP: reduction after the backward pass
  // Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication: SP's re-gather beside the
  // data-gradient GEMM, the input-gradient collective beside the weight-gradient GEMM.
  CHECK(m.overlap_sp_regather);
  CHECK(m.overlap_tp_backward);
  CHECK(m.tensor_comm_overlap == 0.0);
  CHECK(load_software_profile(dir + "/megatron-core.yaml").overlap_data_parallel);
  // The MoE stack in BF16 (Megatron-MoE-ModelZoo's PR=bf16): the FP8 stack's DeepEP dispatch
  // and overlapped all-to-alls, 16-bit linear layers, userbuffers' chunked TP overlap.
  const SoftwareProfile moe8 = load_software_profile(dir + "/megatron-core-moe.yaml");
  const SoftwareProfile moe16 = load_software_profile(dir + "/megatron-core-moe-bf16.yaml");
  CHECK(moe16.name == "megatron-core-moe-bf16");
  CHECK(moe8.quantized_linear);
  CHECK_FALSE(moe16.quantized_linear);
  CHECK(moe16.forwarded_dispatch == moe8.forwarded_dispatch);
  CHECK(moe16.overlap_expert_comm == moe8.overlap_expert_comm);
  CHECK(moe16.tensor_comm_chunked);
  CHECK_FALSE(moe8.tensor_comm_chunked);
  // The ModelZoo's FP8 recipe (sbatch_benchmarking.sh, PR=fp8): block scales, FP8 parameters,
  // BF16 moments; both fuse the cross-entropy (--cross-entropy-loss-fusion).
  CHECK(moe8.quant_recipe == QuantRecipe::kBlockwise);
  CHECK(moe8.memory.quantized_parameters);
  CHECK(moe8.memory.moment_bytes == 4.0);
  CHECK_FALSE(moe8.fp32_cross_entropy);
  CHECK_FALSE(moe16.fp32_cross_entropy);
  // No memory_model block: the ZeRO/Korthikanti counts unchanged.
  CHECK_FALSE(m.memory.fp32_gradient_buffer);
  CHECK(m.memory.activation_factor == 1.0);
  // nanotron: fp32 gradient accumulation buffer (sourced) and three [fit] values.
  const SoftwareProfile n = load_software_profile(dir + "/nanotron.yaml");
  CHECK(n.memory.fp32_gradient_buffer);
  CHECK(n.memory.zero_unsharded_bytes == 2.0);
  CHECK(n.memory.zero_sharded_bytes == 2.0);
  CHECK(n.memory.activation_factor == 1.48);
  CHECK(n.memory.pipeline_buffers == 2.0);
  const SoftwareProfile d = load_software_profile(dir + "/deepflow-reference.yaml");
  CHECK(d.dispatch.si() == 0.0);
  CHECK(d.iteration.si() == 0.0);
}

TEST_CASE("a template takes the profile's host costs and keeps its hardware ones", "[software]") {
  const ArchTemplate t = test::shipped_template("a100");  // with megatron-lm
  CHECK((t.host.dispatch + t.host.launch_latency + t.host.synchronize).in(units::microseconds) ==
        Approx(28.0));
  CHECK(t.host.training_dispatch.in(units::microseconds) == Approx(65.0));
  CHECK(t.host.host_to_device.si() == Approx(25e9));  // the template's PCIe Gen4 rate
}

TEST_CASE("training_dispatch defaults to dispatch", "[software]") {
  const SoftwareProfile p = read_software_profile(ConfigNode::load_string(kMinimal, "p.yaml"));
  CHECK(p.training_dispatch.in(units::microseconds) == Approx(12.0));
  CHECK_FALSE(p.overlap_data_parallel);
}

TEST_CASE("software profile errors are located", "[software][config-error]") {
  CHECK(profile_error("host:\n  dispatch: 1 us\n") ==
        "p.yaml:1:1: error: name: missing required key (expected a string)");
  CHECK(profile_error("name: x\nhost:\n  dispatch: -5 us\n") ==
        "p.yaml:3:13: error: host.dispatch: expected a non-negative time, got \"-5 us\"");
  CHECK(profile_error("name: x\nhost:\n  iteration: 5 GB\n") ==
        "p.yaml:3:14: error: host.iteration: expected a time such as \"1.5 us\", got \"5 GB\" "
        "(a size)");
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  tensor_parallel: 1.5\n") ==
        "p.yaml:5:20: error: overlap.tensor_parallel: expected a fraction in [0, 1] or chunked, got \"1.5\"");
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  data_paralel: true\n") ==
        "p.yaml:5:3: error: overlap.data_paralel: unknown key; did you mean \"data_parallel\"?");
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  data_parallel: maybe\n") ==
        "p.yaml:5:18: error: overlap.data_parallel: expected true or false, got \"maybe\"");
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  tensor_parallel_backward: 2\n") ==
        "p.yaml:5:29: error: overlap.tensor_parallel_backward: expected true or false, got \"2\"");
  CHECK(profile_error(std::string(kMinimal) + "memory_model:\n  activation_factor: 0\n") ==
        "p.yaml:5:22: error: memory_model.activation_factor: expected a factor > 0, got \"0\"");
  CHECK(profile_error(std::string(kMinimal) + "memory_model:\n  zero_sharded_bytes: -1\n") ==
        "p.yaml:5:23: error: memory_model.zero_sharded_bytes: expected a number >= 0, got \"-1\"");
  const std::string missing = test::error_of(
      [] { (void)resolve_software_profile("megatron-xl", {test::source_path("templates/software")}); });
  CHECK(missing.find("error: software: expected a software profile file or the name of one in ") !=
        std::string::npos);
  CHECK(missing.find("got \"megatron-xl\"") != std::string::npos);
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("precision: the linear layers in FP8 is the profile's choice", "[software]") {
  const std::string dir = test::source_path("templates/software");
  CHECK(load_software_profile(resolve_software_profile("megatron-core-fp8", {dir})).quantized_linear);
  CHECK_FALSE(load_software_profile(resolve_software_profile("megatron-core", {dir})).quantized_linear);
  CHECK(TrainingOptions::from(load_software_profile(resolve_software_profile("megatron-core-fp8", {dir})))
            .quantized_linear);
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  linear_layers: int8\n") ==
        "p.yaml:5:18: error: precision.linear_layers: expected fp8, fp4 or workload (the "
        "workload's precision), got \"int8\"");
  // FP8's scaling recipe, FP4's NVFP4; a recipe only with FP8.
  const auto recipe = [&](const std::string& text) {
    return TrainingOptions::from(
               read_software_profile(ConfigNode::load_string(std::string(kMinimal) + text, "p.yaml")))
        .quant_recipe;
  };
  CHECK(recipe("precision:\n  linear_layers: fp8\n") == QuantRecipe::kDelayed);
  CHECK(recipe("precision:\n  linear_layers: fp8\n  fp8_scaling: mxfp8\n") == QuantRecipe::kMxfp8);
  CHECK(recipe("precision:\n  linear_layers: fp4\n") == QuantRecipe::kNvfp4);
  CHECK(recipe("precision:\n  linear_layers: fp8\n  fp8_scaling: rowwise\n") ==
        QuantRecipe::kRowwise);
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  linear_layers: fp8\n  fp8_scaling: "
                                              "tensorwise\n") ==
        "p.yaml:6:16: error: precision.fp8_scaling: expected delayed, current, rowwise, mxfp8 "
        "or blockwise, got \"tensorwise\"");
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  fp8_scaling: current\n") ==
        "p.yaml:5:16: error: precision.fp8_scaling: applies to linear_layers: fp8");
  // The backward GEMMs' accumulation: promoted unless the profile says fast.
  CHECK_FALSE(load_software_profile(resolve_software_profile("nemo-fp8", {dir}))
                  .fp8_fast_backward_accumulation);
  CHECK(profile_error(std::string(kMinimal) +
                      "precision:\n  linear_layers: fp8\n  fp8_backward_accumulation: slow\n") ==
        "p.yaml:6:30: error: precision.fp8_backward_accumulation: expected promoted or fast, got "
        "\"slow\"");
}

TEST_CASE("tensor_parallel: chunked pipelines each collective with its GEMM", "[software]") {
  // NeMo's ub_tp_comm_overlap (templates/software/nemo-fp8.yaml): (tp - 1)/tp hidden, so the
  // profile carries the mode, not a fraction.
  const std::string dir = test::source_path("templates/software");
  const SoftwareProfile n = load_software_profile(resolve_software_profile("nemo-fp8", {dir}));
  CHECK(n.tensor_comm_chunked);
  CHECK(n.tensor_comm_overlap == 0.0);
  CHECK(n.quantized_linear);
  CHECK(TrainingOptions::from(n).tensor_comm_chunked);
  CHECK_FALSE(load_software_profile(resolve_software_profile("megatron-core", {dir})).tensor_comm_chunked);
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  tensor_parallel: half\n") ==
        "p.yaml:5:20: error: overlap.tensor_parallel: expected a fraction in [0, 1] or chunked, "
        "got \"half\"");
}

TEST_CASE("kernels: attention names the flash-attention implementation", "[software]") {
  // flash-attn 2 (nanotron) and PyTorch SDPA's default backend (torchtitan) run FlashAttention-2;
  // Transformer Engine runs cuDNN's fused attention (Megatron-Core and NeMo): 2024's releases
  // with their causal shortfall, 2025's MoE stack at the native rate, as DeepSeek's own stack.
  const std::string dir = test::source_path("templates/software");
  const auto kernel = [&](const char* name) {
    return load_software_profile(resolve_software_profile(name, {dir})).attention_kernel;
  };
  CHECK(kernel("nanotron") == FlashKernel::kFlash2);
  CHECK(kernel("fsdp") == FlashKernel::kFlash2);
  CHECK(kernel("nemo-fp8") == FlashKernel::kCudnn);
  CHECK(kernel("megatron-core") == FlashKernel::kCudnn);
  CHECK(kernel("megatron-core-moe") == FlashKernel::kNative);
  CHECK(kernel("deepseek-v3") == FlashKernel::kNative);
  // llm-foundry's benchmarks ran MPT's attn_impl: triton, FlashAttention-1's generation.
  CHECK(kernel("llm-foundry") == FlashKernel::kFlash1);
  CHECK(TrainingOptions::from(load_software_profile(resolve_software_profile("fsdp", {dir})))
            .attention_kernel == FlashKernel::kFlash2);
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  attention: flash4\n") ==
        "p.yaml:5:14: error: kernels.attention: expected flash2, flash1, fused or cudnn, got \"flash4\"");
  // Composer's two training metrics: two more cross-entropy passes each micro-batch.
  CHECK(load_software_profile(resolve_software_profile("llm-foundry", {dir})).metric_losses == 2);
  CHECK(load_software_profile(resolve_software_profile("fsdp", {dir})).metric_losses == 0);
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  metric_losses: -1\n") ==
        "p.yaml:5:18: error: kernels.metric_losses: expected a count from 0 to 16, got \"-1\"");
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  cross_entropy: fp16\n") ==
        "p.yaml:5:18: error: kernels.cross_entropy: expected fp32 or fused, got \"fp16\"");
  CHECK_FALSE(load_software_profile(resolve_software_profile("deepflow-reference", {dir}))
                  .fp32_cross_entropy);
  // What recompute=selective means: torchtitan's op-level policy (fsdp), Megatron's attention
  // core elsewhere.
  CHECK(TrainingOptions::from(load_software_profile(resolve_software_profile("fsdp", {dir})))
            .selective_op);
  CHECK_FALSE(load_software_profile(resolve_software_profile("megatron-core", {dir})).selective_op);
  // The gradient reduction's element type: Megatron's rule for its profiles, fp32 for nanotron.
  CHECK(load_software_profile(resolve_software_profile("megatron-core", {dir})).gradient_reduction ==
        GradientReduction::kFp32IfBf16);
  CHECK(load_software_profile(resolve_software_profile("nanotron", {dir})).gradient_reduction ==
        GradientReduction::kFp32);
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  gradient_reduction: fp16\n") ==
        "p.yaml:5:23: error: precision.gradient_reduction: expected workload, fp32 or "
        "fp32_if_bf16, got \"fp16\"");
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  selective_recompute: all\n") ==
        "p.yaml:5:24: error: kernels.selective_recompute: expected attention or ops, got \"all\"");
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  bias: fused\n") ==
        "p.yaml:5:9: error: kernels.bias: expected epilogue or separate, got \"fused\"");
  CHECK_FALSE(read_software_profile(ConfigNode::load_string(kMinimal, "p.yaml")).separate_bias);
  // Sequence parallelism on the second dimension: torchtitan's DTensor layouts (fsdp), copied
  // around each collective; Megatron's [s, b, h] needs none.
  CHECK(load_software_profile(resolve_software_profile("fsdp", {dir})).sp_layout_copy);
  CHECK_FALSE(load_software_profile(resolve_software_profile("megatron-core", {dir})).sp_layout_copy);
  CHECK_FALSE(load_software_profile(resolve_software_profile("nanotron", {dir})).sp_layout_copy);
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  sequence_parallel_layout: dim1\n") ==
        "p.yaml:5:29: error: kernels.sequence_parallel_layout: expected direct or copy, got "
        "\"dim1\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("kernels: which element-wise operators run as eager PyTorch decomposes them",
          "[software]") {
  // Default fused (Transformer Engine, hand-written or torch.compile kernels); each of the
  // four as its own key; a value outside its pair is a located error.
  const SoftwareProfile none = read_software_profile(ConfigNode::load_string(kMinimal, "p.yaml"));
  CHECK_FALSE(none.eager.any());
  const SoftwareProfile some = read_software_profile(ConfigNode::load_string(
      std::string(kMinimal) + "kernels:\n  rmsnorm: eager\n  swiglu: eager\n  repeat_kv: copy\n",
      "p.yaml"));
  CHECK(some.eager == EagerOps{true, false, true, true});
  CHECK(TrainingOptions::from(some).eager == some.eager);
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  rotary: compiled\n") ==
        "p.yaml:5:11: error: kernels.rotary: expected fused or eager, got \"compiled\"");
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  repeat_kv: eager\n") ==
        "p.yaml:5:14: error: kernels.repeat_kv: expected none or copy, got \"eager\"");
  // The shipped profiles run fused kernels (the torchtitan rows measured without torch.compile
  // set the four in tests/train/test_torchtitan_llama3.cpp), but for nanotron's GLUActivation:
  // F.silu, then the product.
  const std::string dir = test::source_path("templates/software");
  for (const char* name : {"fsdp", "megatron-core", "nemo-fp8", "megatron-lm"}) {
    INFO(name);
    CHECK_FALSE(load_software_profile(resolve_software_profile(name, {dir})).eager.any());
  }
  CHECK(load_software_profile(resolve_software_profile("nanotron", {dir})).eager ==
        EagerOps{false, false, true, false, true});  // and its q, k, v layout copies
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  qkv_layout: eager\n") ==
        "p.yaml:5:15: error: kernels.qkv_layout: expected none or copy, got \"eager\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("kernels: weight gradients accumulated into the main gradient", "[software]") {
  // Megatron-LM and Megatron-Core fuse it into the GEMMs (gradient_accumulation_fusion);
  // nanotron adds every gradient into its fp32 buffer (FP32GradientAccumulator); FSDP and the
  // paper's reference model none. The buffer is the gradient-reduction type: Megatron's fp32
  // for bf16, the workload's for fp16, nanotron's fp32; NeMo's performance scripts' bf16
  // (grad_sync_dtype, the type of Apex's contiguous gradient buffer).
  const std::string dir = test::source_path("templates/software");
  const auto options = [&](const char* name) {
    return TrainingOptions::from(load_software_profile(resolve_software_profile(name, {dir})));
  };
  for (const char* name : {"megatron-lm", "megatron-core", "megatron-core-fp8", "nemo-fp8"}) {
    INFO(name);
    CHECK(options(name).wgrad_accumulation == WgradAccumulation::kFused);
    CHECK(options(name).main_gradient_bytes(2.0, true) == (name == std::string("nemo-fp8") ? 2 : 4));  // bf16
    CHECK(options(name).main_gradient_bytes(2.0, false) == 2);  // fp16
  }
  CHECK(options("nanotron").wgrad_accumulation == WgradAccumulation::kSeparate);
  CHECK(options("nanotron").main_gradient_bytes(2.0, true) == 4);
  for (const char* name : {"fsdp", "llm-foundry", "deepflow-reference"}) {
    INFO(name);
    CHECK(options(name).wgrad_accumulation == WgradAccumulation::kNone);
    CHECK(options(name).main_gradient_bytes(2.0, true) == 0);
  }
  CHECK(profile_error(std::string(kMinimal) + "kernels:\n  wgrad_accumulation: fp32\n") ==
        "p.yaml:5:23: error: kernels.wgrad_accumulation: expected fused, separate or none, got "
        "\"fp32\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("collectives: NCCL's algorithms or any, from the profile to the system graph",
          "[software]") {
  // Absent: any (the paper's idealized system); every shipped framework profile says nccl.
  const SoftwareProfile none = read_software_profile(ConfigNode::load_string(kMinimal, "p.yaml"));
  CHECK(none.collectives == CollectiveLibrary::kAny);
  const std::string dir = test::source_path("templates/software");
  for (const char* name : {"megatron-lm", "megatron-core", "megatron-core-fp8", "nemo-fp8",
                           "nanotron", "fsdp", "llm-foundry"}) {
    INFO(name);
    const SoftwareProfile p = load_software_profile(resolve_software_profile(name, {dir}));
    CHECK(p.collectives == CollectiveLibrary::kNccl);
    CHECK(with_software(ArchTemplate{}, p).collectives == CollectiveLibrary::kNccl);
  }
  CHECK(load_software_profile(resolve_software_profile("deepflow-reference", {dir})).collectives ==
        CollectiveLibrary::kAny);
  CHECK(profile_error(std::string(kMinimal) + "collectives: mpi\n") ==
        "p.yaml:4:14: error: collectives: expected nccl or any, got \"mpi\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("zero: how ZeRO-1/2 reduce the gradients is the profile's choice", "[software]") {
  const std::string dir = test::source_path("templates/software");
  // nanotron with accumulate_grad_in_fp32 builds no DDP model under ZeRO-1 and all-reduces the
  // whole fp32 buffer after the backward pass (trainer.py, sync_gradients_across_dp).
  const SoftwareProfile n = load_software_profile(resolve_software_profile("nanotron", {dir}));
  CHECK(n.zero_all_reduce);
  CHECK_FALSE(n.overlap_zero_gradients);
  CHECK(n.overlap_data_parallel);  // ZeRO-0's DDP hook still overlaps
  const TrainingOptions o = TrainingOptions::from(n);
  CHECK(o.overlaps_gradient_reduction(0));
  CHECK_FALSE(o.overlaps_gradient_reduction(1));
  CHECK_FALSE(o.overlaps_gradient_reduction(2));
  CHECK(o.overlaps_gradient_reduction(3));  // ZeRO-3's per-layer collectives: as data_parallel
  // No zero block: reduce-scatter, overlapped exactly when the data-parallel reduction is.
  const SoftwareProfile c = load_software_profile(resolve_software_profile("megatron-core", {dir}));
  CHECK_FALSE(c.zero_all_reduce);
  CHECK(c.overlap_zero_gradients);
  const SoftwareProfile m = load_software_profile(resolve_software_profile("megatron-lm", {dir}));
  CHECK_FALSE(m.overlap_zero_gradients);
  CHECK(profile_error(std::string(kMinimal) + "zero:\n  gradient_collective: all-gather\n") ==
        "p.yaml:5:24: error: zero.gradient_collective: expected reduce-scatter or all-reduce, got "
        "\"all-gather\"");
  CHECK(profile_error(std::string(kMinimal) + "zero:\n  overlap: sometimes\n") ==
        "p.yaml:5:12: error: zero.overlap: expected true or false, got \"sometimes\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("pipeline: which layers each stage holds is the profile's choice", "[software]") {
  const std::string dir = test::source_path("templates/software");
  // nanotron's build_model balances the blocks by get_block_compute_costs.
  CHECK(load_software_profile(resolve_software_profile("nanotron", {dir})).memory.layer_split ==
        LayerSplit::kByCost);
  CHECK(load_software_profile(resolve_software_profile("megatron-lm", {dir})).memory.layer_split ==
        LayerSplit::kEven);
  CHECK(profile_error(std::string(kMinimal) + "pipeline:\n  layer_split: random\n") ==
        "p.yaml:5:16: error: pipeline.layer_split: expected even or by-cost, got \"random\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("overlap: collective_sms, the SMs an overlapped collective holds", "[software]") {
  // The NCCL profiles carry the NCCL maintainer's 16 (NVIDIA/nccl issue 689); absent, none.
  const std::string dir = test::source_path("templates/software");
  const SoftwareProfile n = load_software_profile(resolve_software_profile("nemo-fp8", {dir}));
  CHECK(n.collective_sms == 16);
  CHECK(TrainingOptions::from(n).collective_sms == 16);
  CHECK(load_software_profile(resolve_software_profile("deepflow-reference", {dir})).collective_sms == 0);
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  collective_sms: -4\n") ==
        "p.yaml:5:19: error: overlap.collective_sms: expected a count of SMs in [0, 1024], got "
        "\"-4\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("parallelism: what the stack's code runs is the profile's to say", "[software]") {
  const auto load = [](const char* name) {
    return load_software_profile(test::source_path(std::string("templates/software/") + name +
                                                   ".yaml"))
        .parallelism;
  };
  // nanotron: pp_engine 1f1b or afab, ZeRO-1 at most (parallelism_config.py, README).
  const ParallelismSupport nanotron = load("nanotron");
  CHECK(nanotron.offers(PipelineSchedule::kOneFOneB));
  CHECK(nanotron.offers(PipelineSchedule::kGpipe));
  CHECK_FALSE(nanotron.offers(PipelineSchedule::kInterleaved));
  CHECK(nanotron.zero_stages == 0b0011);
  // PyTorch FSDP: no ZeRO-1; torchtitan's context parallelism is ring attention only.
  const ParallelismSupport fsdp = load("fsdp");
  CHECK(fsdp.zero_stages == 0b1101);
  CHECK(fsdp.ring_context);
  CHECK_FALSE(fsdp.ulysses);
  // Megatron-LM 2021-2022: no context or expert parallelism, ZeRO-1 its distributed optimizer.
  const ParallelismSupport megatron = load("megatron-lm");
  CHECK_FALSE(megatron.ring_context);
  CHECK_FALSE(megatron.expert);
  CHECK(megatron.zero_stages == 0b0011);
  CHECK_FALSE(megatron.offers(PipelineSchedule::kGpipe));
  // Megatron-Core: every form but GPipe; llm-foundry's Composer FSDP: no pipeline at all.
  const ParallelismSupport core = load("megatron-core");
  CHECK(core == ParallelismSupport{.schedules = 0b110});
  CHECK(load("llm-foundry").schedules == 0);
  CHECK(load("deepflow-reference") == ParallelismSupport{});
  // The options carry it, with the profile's name for the reason.
  const TrainingOptions o = TrainingOptions::from(load_software_profile(
      test::source_path("templates/software/nanotron.yaml")));
  CHECK(o.parallelism == nanotron);
  CHECK(o.software == "nanotron");
}

TEST_CASE("memory_model: activations cached in FP8, optimizer moments in BF16", "[software]") {
  const auto profile = [](const std::string& extra) {
    return read_software_profile(ConfigNode::load_string(std::string(kMinimal) + extra, "p.yaml"));
  };
  CHECK(profile("").memory.activation_bytes == 0.0);  // the workload's precision
  CHECK(profile("").memory.moment_bytes == 0.0);      // fp32 moments
  const SoftwareProfile p =
      profile("memory_model:\n  activation_precision: fp8\n  optimizer_moments: bf16\n");
  CHECK(p.memory.activation_bytes == 1.0);
  CHECK(p.memory.moment_bytes == 4.0);
  CHECK(profile_error(std::string(kMinimal) + "memory_model:\n  activation_precision: fp4\n") ==
        "p.yaml:5:25: error: memory_model.activation_precision: expected workload or fp8, got "
        "\"fp4\"");
  CHECK(profile_error(std::string(kMinimal) + "memory_model:\n  optimizer_moments: fp16\n") ==
        "p.yaml:5:22: error: memory_model.optimizer_moments: expected fp32 or bf16, got \"fp16\"");
}

TEST_CASE("memory_model: quantized linear inputs and weight copies, FP8 parameters",
          "[software]") {
  const auto profile = [](const std::string& extra) {
    return read_software_profile(ConfigNode::load_string(std::string(kMinimal) + extra, "p.yaml"));
  };
  const std::string fp8 = "precision:\n  linear_layers: fp8\n";
  const SoftwareProfile none = profile(fp8);
  CHECK(none.memory.linear_input_bytes == 0.0);
  CHECK(none.memory.linear_weight_copy_bytes == 0.0);
  CHECK_FALSE(none.memory.quantized_parameters);
  // Per-tensor FP8: 1 byte an element; two copies (cast and transpose) 2 bytes a weight.
  const SoftwareProfile te = profile(
      fp8 + "  parameters: quantized\nmemory_model:\n  linear_inputs: quantized\n"
            "  weight_copies: 2\n");
  CHECK(te.memory.linear_input_bytes == 1.0);
  CHECK(te.memory.linear_weight_copy_bytes == 2.0);
  CHECK(te.memory.quantized_parameters);
  // The recipe's bytes: MXFP8 1 + 1/32 (an E8M0 scale per 32), NVFP4 1/2 + 1/16.
  CHECK(profile(fp8 + "  fp8_scaling: mxfp8\nmemory_model:\n  linear_inputs: quantized\n")
            .memory.linear_input_bytes == 1.03125);
  CHECK(profile("precision:\n  linear_layers: fp4\nmemory_model:\n  weight_copies: 2\n")
            .memory.linear_weight_copy_bytes == 1.125);
  // The shipped Transformer Engine stacks: NeMo's FP8 recipe holds FP8 parameters, Megatron-LM's
  // default does not.
  const std::string dir = test::source_path("templates/software");
  const SoftwareProfile nemo = load_software_profile(dir + "/nemo-fp8.yaml");
  CHECK(nemo.memory.quantized_parameters);
  CHECK(nemo.memory.linear_input_bytes == 1.0);
  CHECK_FALSE(load_software_profile(dir + "/megatron-core-fp8.yaml").memory.quantized_parameters);
  CHECK(load_software_profile(dir + "/fsdp.yaml").memory.linear_input_bytes == 0.0);
  // Refused: on 16-bit layers, a fraction of a copy, FP8 parameters with no copy to hold them,
  // FP8 inputs beside every activation cached in FP8.
  CHECK(profile_error(std::string(kMinimal) + "memory_model:\n  linear_inputs: quantized\n") ==
        "p.yaml:5:18: error: memory_model.linear_inputs: applies to precision.linear_layers: fp8 "
        "or fp4, got linear_inputs with the workload's precision");
  CHECK(profile_error(std::string(kMinimal) + fp8 + "memory_model:\n  weight_copies: 1.5\n") ==
        "p.yaml:7:18: error: memory_model.weight_copies: expected a whole number of copies from 0 "
        "to 4, got \"1.5\"");
  CHECK(profile_error(std::string(kMinimal) + fp8 + "  parameters: quantized\n") ==
        "p.yaml:6:15: error: precision.parameters: expected workload unless "
        "memory_model.weight_copies is at least 1 (the quantized weights are the parameters' "
        "only copy), got \"quantized\"");
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  parameters: quantized\n") ==
        "p.yaml:5:15: error: precision.parameters: expected workload unless linear_layers is fp8 "
        "or fp4, got \"quantized\"");
  CHECK(profile_error(std::string(kMinimal) + fp8 +
                      "memory_model:\n  activation_precision: fp8\n  linear_inputs: quantized\n") ==
        "p.yaml:8:18: error: memory_model.linear_inputs: expected workload beside "
        "activation_precision: fp8 (every stored activation already at 1 byte), got "
        "\"quantized\"");
}

TEST_CASE("parallelism: DualPipe only where a profile lists it", "[software]") {
  // DeepSeek's schedule: no stack runs it unless its profile says so (ParallelismSupport's
  // default offers gpipe, 1f1b and interleaved); deepseek-v3.yaml lists it.
  const Strategy dual = parse_strategy("tp1-pp4-dp2-mb1-dualpipe");
  CHECK_FALSE(ParallelismSupport{}.runs(dual));
  const SoftwareProfile megatron =
      load_software_profile(test::source_path("templates/software/megatron-core.yaml"));
  CHECK(megatron.parallelism.refuses(dual, "megatron-core") ==
        "megatron-core runs no dualpipe pipeline schedule (its software profile's "
        "parallelism.schedules)");
  const SoftwareProfile deepseek =
      load_software_profile(test::source_path("templates/software/deepseek-v3.yaml"));
  CHECK(deepseek.parallelism.runs(dual));
  CHECK_FALSE(deepseek.parallelism.runs(parse_strategy("tp1-pp4-dp2-mb1-interleaved-v2")));
  // The search tries it only there.
  CHECK(enumerate_options(megatron.parallelism).schedules.size() == 3);
  CHECK(enumerate_options(deepseek.parallelism).schedules.back() == PipelineSchedule::kDualPipe);
}

TEST_CASE("parallelism: errors are located", "[software][config-error]") {
  const std::string head = std::string(kMinimal) + "parallelism:\n";  // lines 1-4
  CHECK(profile_error(head + "  schedules: [1f1b, zero-bubble]\n") ==
        "p.yaml:5:21: error: parallelism.schedules[1]: expected one of gpipe, 1f1b, interleaved, "
        "dualpipe, got \"zero-bubble\"");
  CHECK(profile_error(head + "  zero: [1, 1]\n") ==
        "p.yaml:5:13: error: parallelism.zero[1]: \"1\" is listed twice");
  CHECK(profile_error(head + "  zero: []\n") ==
        "p.yaml:5:9: error: parallelism.zero: expected at least one of 0, 1, 2, 3");
  CHECK(profile_error(head + "  context: [ulysses]\n") ==
        "p.yaml:5:13: error: parallelism.context[0]: expected one of ring, all-to-all, got "
        "\"ulysses\"");
  CHECK(profile_error(head + "  experts: true\n") ==
        "p.yaml:5:3: error: parallelism.experts: unknown key; did you mean \"expert\"?");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("precision: sequence parallelism's gathers in FP8 or 16 bits", "[software]") {
  const auto profile = [](const std::string& extra) {
    return read_software_profile(ConfigNode::load_string(std::string(kMinimal) + extra, "p.yaml"));
  };
  CHECK_FALSE(profile("").fp8_tp_gather);
  CHECK(TrainingOptions::from(profile("precision:\n  linear_layers: fp8\n  "
                                      "tensor_parallel_gather: fp8\n"))
            .fp8_tp_gather);
  // Without FP8 layers in the profile it applies when a run turns them on (torchao's float8
  // converters are a per-run flag).
  CHECK(profile("precision:\n  tensor_parallel_gather: fp8\n").fp8_tp_gather);
  CHECK(profile_error(std::string(kMinimal) + "precision:\n  tensor_parallel_gather: e5m2\n") ==
        "p.yaml:5:27: error: precision.tensor_parallel_gather: expected bf16 or fp8, got "
        "\"e5m2\"");
  CHECK(profile_error(std::string(kMinimal) +
                      "precision:\n  linear_layers: fp8\n  fp8_scaling: rowwise\n"
                      "  tensor_parallel_gather: fp8\n") ==
        "p.yaml:7:27: error: precision.tensor_parallel_gather: expected bf16 with FP4 layers or "
        "row-wise FP8 scales (gathered rows are quantized with one scale per tensor or block), "
        "got \"fp8\"");
  CHECK(profile_error(std::string(kMinimal) +
                      "precision:\n  linear_layers: fp4\n  tensor_parallel_gather: fp8\n") ==
        "p.yaml:6:27: error: precision.tensor_parallel_gather: expected bf16 with FP4 layers or "
        "row-wise FP8 scales (gathered rows are quantized with one scale per tensor or block), "
        "got \"fp8\"");
}

TEST_CASE("moe: the expert all-to-all's dispatcher is the profile's choice", "[software]") {
  const auto profile = [](const std::string& extra) {
    return read_software_profile(ConfigNode::load_string(std::string(kMinimal) + extra, "p.yaml"));
  };
  CHECK_FALSE(profile("").forwarded_dispatch);  // Megatron-Core's flat all-to-all
  CHECK(profile("moe:\n  dispatcher: deepep\n").forwarded_dispatch);
  CHECK(TrainingOptions::from(profile("moe:\n  dispatcher: deepep\n")).forwarded_dispatch);
  CHECK(profile_error(std::string(kMinimal) + "moe:\n  dispatcher: flex\n") ==
        "p.yaml:5:15: error: moe.dispatcher: expected alltoall or deepep, got \"flex\"");
  // The rows' precision on the all-to-all: bf16 (default) or fp8, which needs FP8 linear layers.
  CHECK_FALSE(profile("").fp8_dispatch);
  const std::string fp8 = "precision:\n  linear_layers: fp8\n";
  CHECK(TrainingOptions::from(profile(fp8 + "moe:\n  dispatch_precision: fp8\n")).fp8_dispatch);
  CHECK(profile_error(std::string(kMinimal) + "moe:\n  dispatch_precision: fp8\n") ==
        "p.yaml:5:23: error: moe.dispatch_precision: expected bf16 unless "
        "precision.linear_layers is fp8 (the experts' GEMMs take the FP8 rows the dispatch "
        "sends), got \"fp8\"");
  CHECK(profile_error(std::string(kMinimal) +
                      "precision:\n  linear_layers: fp4\nmoe:\n  dispatch_precision: fp8\n") ==
        "p.yaml:7:23: error: moe.dispatch_precision: expected bf16 unless "
        "precision.linear_layers is fp8 (the experts' GEMMs take the FP8 rows the dispatch "
        "sends), got \"fp8\"");
  CHECK(profile_error(std::string(kMinimal) + "moe:\n  dispatch_precision: e4m3\n") ==
        "p.yaml:5:23: error: moe.dispatch_precision: expected bf16 or fp8, got \"e4m3\"");
}

}  // namespace pathfinder

namespace pathfinder {

TEST_CASE("overlap: expert_parallel, Megatron-Core's batch-level all-to-all overlap", "[software]") {
  const SoftwareProfile off =
      read_software_profile(ConfigNode::load_string(std::string(kMinimal), "p.yaml"));
  const SoftwareProfile on = read_software_profile(ConfigNode::load_string(
      std::string(kMinimal) + "overlap:\n  expert_parallel: true\n", "p.yaml"));
  CHECK_FALSE(off.overlap_expert_comm);
  CHECK(on.overlap_expert_comm);
  CHECK(TrainingOptions::from(on).overlap_expert_comm);
  CHECK(profile_error(std::string(kMinimal) + "overlap:\n  expert_parallel: often\n") ==
        "p.yaml:5:20: error: overlap.expert_parallel: expected true or false, got \"often\"");
}

}  // namespace pathfinder
