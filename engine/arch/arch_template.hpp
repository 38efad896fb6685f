// Architecture template: a blueprint without committed sizes (paper §4.2), plus budgets and
// their split across components (§4.3). Loaded by template_loader; bound to technologies by
// bind_template (arch_spec.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/units.hpp"

namespace pathfinder {

enum class Dataflow { kWeightStationary, kActivationStationary, kOutputStationary, kBest };
enum class Scope { kMcu, kBundle, kGlobal };
// kFullMesh: every position wired directly to every other (AMD Infinity Fabric's 8-GPU hive:
// seven point-to-point links per GPU, no switch).
enum class Topology { kRing, kMesh2D, kTorus2D, kSwitch, kFatTree, kMesh3D, kTorus3D, kFullMesh };
// Grids lay positions out x-fastest with rings along each axis; a torus wraps every axis.
[[nodiscard]] constexpr bool is_grid(Topology t) {
  return t == Topology::kMesh2D || t == Topology::kTorus2D || t == Topology::kMesh3D ||
         t == Topology::kTorus3D;
}
[[nodiscard]] constexpr bool is_3d(Topology t) {
  return t == Topology::kMesh3D || t == Topology::kTorus3D;
}
[[nodiscard]] constexpr bool wraps(Topology t) {
  return t == Topology::kTorus2D || t == Topology::kTorus3D;
}
enum class NetworkTier { kIntraPackage, kInterPackage };

[[nodiscard]] std::string_view to_string(Dataflow d);
[[nodiscard]] std::string_view to_string(Scope s);
[[nodiscard]] std::string_view to_string(Topology t);
[[nodiscard]] std::string_view to_string(NetworkTier t);
// Parsers: nullopt for an unknown spelling; valid_*() lists the spellings for messages.
[[nodiscard]] std::optional<Dataflow> parse_dataflow(std::string_view s);
[[nodiscard]] std::optional<Scope> parse_scope(std::string_view s);
[[nodiscard]] std::optional<Topology> parse_topology(std::string_view s);
[[nodiscard]] std::vector<std::string> valid_dataflows();
[[nodiscard]] std::vector<std::string> valid_scopes();
[[nodiscard]] std::vector<std::string> valid_topologies();

struct CoreSpec {
  int array_rows = 0;  // MCU systolic array: rows x cols FMA per cycle
  int array_cols = 0;
  Dataflow dataflow = Dataflow::kBest;
  double max_utilization = 1.0;  // derates peak throughput (paper §4.2.1)
  int mcus_per_bundle = 1;
  double enabled_bundle_fraction = 1.0;  // bundles left on after yield harvesting
  // Power of this design's MCU against the technology library's reference MCU of the same FMA
  // count at the same clock and voltage: an architecture's own efficiency beyond its node
  // (1: the library's). Area is unchanged.
  double mcu_power_ratio = 1.0;
  // Throughput of the vector (non-matrix) units that run element-wise kernels, as a fraction of
  // the matrix peak: A100 19.5 TFLOP/s FP32 CUDA cores vs 312 tensor = 0.0625.
  double vector_throughput_ratio = 1.0;
  // Dense FP8 (E4M3/E5M2) matrix throughput relative to FP16/BF16: 2 on H100/H200 (H100 SXM
  // datasheet: 1,979 vs 989 TFLOPS dense). 1 where the arrays have no faster FP8 path (A100,
  // V100: FP8 GEMMs then run at the 16-bit rate, only their operands are smaller).
  double fp8_throughput_ratio = 1.0;
  // Dense FP4 (NVFP4: E2M1 with per-block scales) matrix throughput relative to FP16/BF16:
  // 4 on B200 (HGX B200 datasheet: 9 PFLOPS dense FP4 against 2.25 dense BF16). 0: no FP4
  // matrix units (Hopper and older), so FP4 linear layers are infeasible there.
  double fp4_throughput_ratio = 0.0;
  // Whether the matrix units apply per-block scale factors themselves (Blackwell's
  // tcgen05.mma block_scale kinds: OCP MXFP8 and NVFP4; NVIDIA PTX ISA 8.7): what MXFP8 and
  // NVFP4 scaling need. Hopper's do not (its block-scaled FP8 applies the scales on the CUDA
  // cores, QuantRecipe::kBlockwise).
  bool block_scaled_mma = false;
  // Throughput a long training run sustains, as a fraction of what one timed kernel reaches:
  // applies to training, not to one call or a benchmark loop. A residual fit for mechanisms not
  // modelled (the power-limited clock is modelled apart: flop_energy_factor).
  double sustained_fraction = 1.0;
  // Device-to-device variation (engine/perf/device_variation.hpp): the relative standard
  // deviation of one device's pace about the median of its SKU (0: all devices alike), and the
  // job size sustained_fraction was fitted on, its slowest device included.
  double device_variation = 0.0;
  int sustained_devices = 1;
  // The core's dynamic energy per FLOP on real operands against what the generator provisions
  // its power budget with (the budget's share over the full rate, paper §4.4). A GPU's clocks
  // are rated for its budget, and dense matrix work on random operands draws more: the board's
  // power limiter then lowers the clock (engine/perf/power_limiter.hpp). 1: the work draws what
  // was provisioned and the limiter never binds.
  double flop_energy_factor = 1.0;
  // The same for FP8 operands (default: flop_energy_factor), over the provisioned energy per
  // FP8 FLOP (the core's full-rate power over its FP8 rate).
  double fp8_flop_energy_factor = 1.0;
  // The same for FP8 GEMMs (default: sustained_fraction). The shipped templates give FP8 the
  // same residual: its lower share of the datasheet rate in benchmark loops (H100 SXM 70.9%
  // against BF16's 80.3%, S. Bekman's maximum achievable matmul FLOPS table) is its power,
  // fp8_flop_energy_factor.
  double fp8_sustained_fraction = 1.0;
  // The same two for FP4 operands (defaults: the FP8 ones; no FP4 training measurement here).
  double fp4_flop_energy_factor = 1.0;
  double fp4_sustained_fraction = 1.0;
  // Share of the matrix rate the previous generation's warp-level MMA instructions can reach:
  // mma.sync on Hopper reaches "about 2/3 the peak throughput of the Hopper GPU Tensor Cores"
  // (Shah et al. 2024, FlashAttention-3 §1, after Luo et al. 2024, "Benchmarking and
  // Dissecting the Nvidia Hopper GPU Architecture"). 1 where those instructions are the
  // native ones (A100, V100).
  double warp_mma_peak_fraction = 1.0;
  // Share of the matrix rate FlashAttention-2's main loop reaches on those instructions: at
  // most warp_mma_peak_fraction, less where the kernel meets other limits on the device (a
  // kernel-benchmark fit where measured, templates/h100.yaml); 1 elsewhere.
  double warp_mma_fraction = 1.0;
  // Share of the matrix rate a fused attention kernel's backward main loop reaches against its
  // forward's: five dependent products per key/query block pair with the dK and dV
  // accumulators held in registers and dQ added to memory atomically (Dao 2023,
  // FlashAttention-2 §3.1.2; Shah et al. 2024, FlashAttention-3 §3). A kernel-benchmark fit
  // where measured (templates/h100.yaml); 1 elsewhere.
  double attention_backward_fraction = 1.0;
  // Share of the matrix rate a native fused attention kernel's main loop reaches (FlashAttention-3
  // on Hopper, FlashAttention-4 and cuDNN on Blackwell: per-block synchronization, pipeline
  // fill, the softmax's share of the register file). A kernel-benchmark fit where measured
  // (templates/h100.yaml, b200.yaml); 1 elsewhere.
  double attention_fraction = 1.0;
  // cuDNN's fused attention (Transformer Engine's FusedAttention) runs full masks at the native
  // kernel's rate and causal masks at these shares of it, forward and backward: a
  // kernel-benchmark fit where measured (templates/h100.yaml); 1 elsewhere.
  double cudnn_causal_fraction = 1.0;
  double cudnn_causal_backward_fraction = 1.0;
  // The backward's share against the forward for kernels on warp-level MMA (FlashAttention-2
  // and -1, whose softmax runs in turn with the products): a kernel-benchmark fit where
  // measured (templates/h100.yaml); 1 elsewhere.
  double warp_mma_backward_fraction = 1.0;
  // Whether a native fused attention kernel runs one tile's softmax while the matrix units
  // compute another's products: asynchronous matrix instructions (Hopper's wgmma, Blackwell's
  // tcgen05.mma) let FlashAttention-3 ping-pong two warp groups (Shah et al. 2024, §3.1) and
  // FlashAttention-4 overlap them likewise, so the longer of the two binds, not their sum.
  // False: in turn, as FlashAttention-2's synchronous mma.sync (Dao 2023, §3.1).
  bool attention_overlap = false;
  // Share of the FP8 rate an FP8 GEMM reaches when its FP32 accumulators are promoted
  // periodically out of the tensor cores' limited-precision accumulation (cuBLASLt without
  // CUBLASLT_MATMUL_DESC_FAST_ACCUM; Transformer Engine's and torchao's choice for the backward
  // GEMMs). A measured slowdown where known (templates/h100.yaml); 1 elsewhere.
  double fp8_promoted_accumulation_fraction = 1.0;
  [[nodiscard]] double flop_per_cycle() const { return 2.0 * array_rows * array_cols; }
};

// On-chip memory levels a template may declare (register file, L1, L2, ... ): what a GEMM plan
// tiles (perf/gemm_model.hpp) and a device's power breakdown hold.
inline constexpr int kMaxOnChipLevels = 6;

struct MemoryLevelSpec {
  std::string name;        // also the split component name
  std::string technology;  // an SRAM macro of the logic node
  Scope scope = Scope::kGlobal;
  std::optional<Bytes> bank_capacity;  // overrides the macro's default bank
  SourceLoc technology_loc;
};

struct MainMemorySpec {
  std::string technology;
  std::optional<int> layers;  // stack height; default from the technology
  double max_utilization = 1.0;  // achievable fraction of the pin bandwidth (STREAM-like)
  // Achievable fraction for element-wise framework kernels (default max_utilization).
  double stream_utilization = 1.0;
  SourceLoc technology_loc;
};

// How a network tier performs beyond its line rate (issue 4); the same optional keys on every
// network section (templates/README.md). Read by engine/system, not by the generator.
struct LinkBehavior {
  // Achievable fraction of the per-direction bandwidth for large messages: NCCL reaches ~80%
  // of NVLink line rate ("~20% protocol overhead", nccl-tests issue 212).
  double max_utilization = 1.0;
  // Chunk size that reaches half the bandwidth: achieved = peak·n/(n + n_half). Zero: every
  // size reaches the peak (only the latency term penalizes small messages).
  Bytes half_bandwidth_message;
  // GPCNeT congestion impact factors (Chunduri et al., SC'19, eqs. 1-2), each >= 1:
  // bandwidth is divided by bandwidth_congestion, latency multiplied by latency_congestion.
  double bandwidth_congestion = 1.0;
  double latency_congestion = 1.0;
  int leaf_size = 32;  // fat-tree: devices under one leaf switch [R]
  // How much longer the compute beside a collective on this tier runs, per second of the
  // collective, per unit of the device's main-memory bandwidth that the tier's achieved rate
  // is: a collective's copies stream through main memory at a multiple of the link rate ("it
  // needs to be multiplied by at least 2x ... it can be 3x", the NCCL maintainer, NVIDIA/nccl
  // issue 1428), taking that share from the kernels beside it. The contention is this times
  // (per-direction bandwidth x max_utilization) / effective main-memory bandwidth
  // (PerfMachine::scale_up_contention); templates/a100.yaml's is measured. 0: only the SMs the
  // software profile says the collective holds (overlap.collective_sms).
  double memory_contention = 0.0;
};

struct NetworkSpec {
  NetworkTier tier = NetworkTier::kInterPackage;
  std::string technology;
  Topology topology = Topology::kSwitch;
  double oversubscription = 1.0;  // fat-tree up/down ratio
  LinkBehavior behavior;
  SourceLoc technology_loc;
};

// The scale-out network between scale-up domains (a NIC per device, e.g. DGX A100: 8 x HDR
// InfiniBand, one per GPU). Off-die, so given directly rather than generated from a budget.
struct ScaleOutSpec {
  Bandwidth bandwidth;  // per device, per direction
  Time latency;         // per message
  // The technology library's NIC (its nic section) whose bandwidth, latency, max_utilization
  // and power fill what the map leaves out (bind_template); empty: bandwidth and latency are
  // given here.
  std::string nic;
  SourceLoc nic_loc;
  struct Given {
    bool bandwidth = true, latency = true, max_utilization = true, power = true;
  } given;
  Topology topology = Topology::kFatTree;
  double oversubscription = 1.0;  // fat-tree up/down ratio above the leaf switches
  LinkBehavior behavior;
  // Per device, drawn whether or not it sends: its NIC, optics and share of the switch ports
  // (energy accounting only; switch power hardly depends on load).
  Power power;
  SourceLoc loc;  // the scale_out map
};

// Host-device interaction (issue 3; perfnetv2's pre/post-processing phases). A kernel issued
// on its own and waited for costs dispatch + launch_latency + device time + synchronize; in a
// stream the host issues one kernel per dispatch interval while the device runs earlier ones.
struct HostSpec {
  Time dispatch;        // host CPU time to issue one kernel (framework and driver)
  // Host time per modelled kernel inside a training step, where one fused kernel of the graph
  // stands for several framework operators plus module and autograd code; default dispatch.
  Time training_dispatch;
  Time launch_latency;  // from issue until the kernel starts on an idle device
  Time synchronize;     // host waits for the device (once per iteration, or per timed call)
  Time iteration;       // fixed host work per training iteration (data loader, logging)
  Bandwidth host_to_device;  // link for the input batch (PCIe); zero: inputs already resident
};

// The collective library the software stack calls (a software profile's `collectives:` key,
// set by with_software; engine/system/collectives.hpp): kAny lets every modelled algorithm
// compete; kNccl keeps to the algorithms NCCL implements.
enum class CollectiveLibrary { kAny, kNccl };

struct Budget {
  Area node_area;   // package area available to the die and its memory devices
  Area chip_area;   // compute die
  Power power;      // node power (TDP), memory devices included
  // The board's power limit at run time (nvidia-smi -pl), when below the power the device was
  // generated under: the power limiter's cap (engine/perf/power_limiter.hpp). 0: `power`.
  Power power_limit;
  Length perimeter; // die edge; 4·sqrt(chip_area) unless given
};

// Fractions of one component's share of each budget.
struct ComponentShare {
  std::string name;
  double area = 0.0;
  double power = 0.0;
  double perimeter = 0.0;
  SourceLoc loc;
};

// What a device and its share of the system cost (issue 16; engine/arch/device_cost.hpp),
// public estimates. The dies' cost comes from the logic node's wafer price and yield, the
// memory's from its price per GB.
struct CostSpec {
  int dies = 1;                // compute dies per device; the chip area is split evenly
  double packaging_usd = 0.0;  // interposer, substrate, assembly and test, per device
  double markup = 1.0;         // price paid over the manufacturing cost (1: cost view)
  double system_usd = 0.0;     // per device: its share of servers, switches, NICs, racks
  double usd_per_kwh = 0.0;    // electricity
  double pue = 1.0;            // facility power usage effectiveness (>= 1)
  Time amortization;           // the capital's service life
  SourceLoc loc;
};

struct ArchTemplate {
  std::string name;
  std::string file;
  // The `techlib:` key: the technology library directory this template is bound against,
  // resolved against the template file's folder (absolute paths as given). Where the CLI looks
  // when it is absent: engine/cli/load.hpp.
  std::optional<std::string> techlib;
  SourceLoc techlib_loc;
  std::string logic;  // technology.logic
  SourceLoc logic_loc;
  CoreSpec core;
  std::vector<MemoryLevelSpec> levels;  // registers first, last on-chip level last
  MainMemorySpec main_memory;
  std::vector<NetworkSpec> networks;
  // Absent: the system is one scale-up domain of nodes_per_package x packages devices.
  std::optional<ScaleOutSpec> scale_out;
  // A scale-up domain: packages joined by the inter-package network, each holding
  // nodes_per_package nodes joined by the intra-package network.
  int nodes_per_package = 1;
  int packages = 1;
  // Per device: the node's host CPUs, memory, fans, switches and power delivery beyond the
  // devices' own budget (energy accounting only).
  Power overhead_power;
  SourceLoc system_loc;
  std::optional<CostSpec> cost;  // absent: no cost model
  HostSpec host;  // all zero when the template has no host section
  CollectiveLibrary collectives = CollectiveLibrary::kAny;  // from the software profile
  Budget budget;
  SourceLoc budget_loc;
  // Split in component order: core, each level, main_memory, intra_package, inter_package.
  std::vector<ComponentShare> split;
  SourceLoc split_loc;

  [[nodiscard]] const NetworkSpec* find_network(NetworkTier tier) const;
};

// Component names in split order for a template.
[[nodiscard]] std::vector<std::string> component_names(const ArchTemplate& t);

}  // namespace pathfinder
