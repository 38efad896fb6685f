#include "engine/train/gpt_training.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "engine/core/error.hpp"
#include "engine/core/format.hpp"
#include "engine/parallel/layer_split.hpp"
#include "engine/train/comm_collective.hpp"
#include "engine/train/iteration.hpp"
#include "engine/train/sharded_pass.hpp"

namespace pathfinder {
namespace {

// The tensor group's collectives on its placement.
// A part's pass time with the one launch latency it starts with removed, so parts chain.
Time chained(const PassTimes& p, Time launch) { return std::max(Time{}, p.span - launch); }

// A strategy's recomputation (mode and modules) and its experts (ep and etp) as one number
// each, for the memo keys.
int recompute_key(const Strategy& s) {
  return static_cast<int>(s.recompute) + 4 * static_cast<int>(s.recompute_modules);
}
int expert_key(const Strategy& s) { return s.ep * 2 + s.etp; }

}  // namespace

GptTraining::GptTraining(GptSpec spec, PerfMachine machine, SystemGraph system,
                         Throughput peak_flops, TrainingOptions options)
    : spec_(std::move(spec)),
      timer_(std::move(machine)),
      system_(std::move(system)),
      peak_(peak_flops),
      options_(std::move(options)) {
  if (!options_.graphs) options_.graphs = std::make_shared<GraphCache>();
  // Weight gradients accumulated by their GEMMs into the main gradient: what the stage holds
  // in place of the 16-bit gradients (MemoryModel::gradient_bytes).
  if (options_.wgrad_accumulation == WgradAccumulation::kFused) {
    options_.memory.gradient_bytes = options_.main_gradient_bytes(
        bytes_per_element(spec_.precision).si(), spec_.precision == DataType::kBf16);
  }
  pace_ = timer_.machine().job_pace(system_.devices);
}

const GptTraining::Placements& GptTraining::placements(const Strategy& s, int id) {
  // The micro-batch size is part of the key: ZeRO-3's traffic per iteration grows with the
  // micro-batch count, and the other weights are equal across sizes only up to rounding.
  const auto key = std::make_tuple(s.tp, s.dp, s.cp, expert_key(s), s.pp, s.micro_batch, id);
  auto it = placements_.find(key);
  if (it != placements_.end()) return it->second;
  // Bytes each member moves per iteration in each dimension weigh the orders (paper §5.2):
  // tensor-parallel all-reduces of the activations, 4 per layer and micro-batch on the
  // stage's layers; the stage's gradients once (ZeRO-3: its parameters gathered twice and its
  // gradients reduce-scattered once per micro-batch); activations to the next stage per
  // micro-batch.
  const Bytes p = bytes_per_element(spec_.precision);
  const double micro = static_cast<double>(spec_.global_batch) / (s.dp * s.micro_batch);
  const Bytes act =
      static_cast<double>(s.micro_batch * spec_.sequence * spec_.hidden) * p / s.cp;
  const double stage_layers = static_cast<double>(spec_.layers) / s.pp;
  const double params = 12.0 * static_cast<double>(spec_.hidden * spec_.hidden) * stage_layers /
                        s.tp;
  // Without ZeRO-3 the gradients are reduced during the last micro-batch's backward at most:
  // the tensor and pipeline groups are placed as if the data groups were silent (they have
  // the links to themselves outside that window), and the data group's shared placement for
  // the same order times the buckets reduced inside the window (assemble_iteration). ZeRO-3's
  // gathers and reduce-scatters run on every micro-batch, alongside the tensor and pipeline
  // traffic: all groups share the ports all iteration, in the order least costly for the
  // traffic (id 1) or in the order of id 0 (id 2).
  const int data = s.dp * s.cp;
  // A mixture of experts adds, per MoE layer and micro-batch, four all-to-alls of each rank's
  // T/t·k routed rows inside the data group (its first ep members) and, with experts split
  // over tp > 1 ranks, four gathers or reduce-scatters of all T·k rows in the tensor group;
  // both weigh the orders.
  const double k = spec_.moe() ? static_cast<double>(spec_.top_k) : 0.0;
  const Bytes all_to_all = s.ep > 1 ? 4.0 * act / s.tp * k * stage_layers * micro : Bytes{};
  const Bytes expert_rows = s.expert_tp() > 1 ? 4.0 * act * k * stage_layers * micro : Bytes{};
  // The tensor group's collectives run inside a stage's passes, the pipeline's sends and
  // receives between them (Megatron's schedules: p2p_communication's send_forward /
  // recv_backward around each forward_step and backward_step): the two never share a port.
  std::array<ParallelDim, 3> dims{
      ParallelDim{"tp", s.tp, 4.0 * act * stage_layers * micro + expert_rows,
                  Collective::kAllReduce, true, 1u << 2},
      ParallelDim{"dp", data, params * p + all_to_all, Collective::kAllReduce, false},
      ParallelDim{"pp", s.pp, 2.0 * act / s.tp * micro, Collective::kSendRecv, true, 1u << 0}};
  Placements pl;
  if (id == 0) {
    pl.mapping = best_mapping(system_, dims);
    pl.data_shared = pl.mapping.groups[1];
    if (options_.overlap_data_parallel || options_.overlap_zero_gradients) {
      dims[1].concurrent = true;
      pl.data_shared = map_dims(system_, dims, pl.mapping.order).groups[1];
    }
  } else if (id == 1) {
    dims[1] = ParallelDim{"dp", data, 3.0 * micro * params * p, Collective::kAllGather, true};
    pl.mapping = best_mapping(system_, dims);
    pl.data_shared = pl.mapping.groups[1];
  } else {
    const std::vector<int> order = placements(s, 0).mapping.order;
    dims[1].concurrent = true;
    pl.mapping = map_dims(system_, dims, order);
    pl.data_shared = pl.mapping.groups[1];
  }
  // The ring's members are the data-context group's innermost cp (Megatron orders tp-cp-dp-pp).
  pl.context = place_group(system_, s.cp, pl.mapping.groups[1].stride);
  const int tensor_stride = pl.mapping.groups[0].stride, data_stride = pl.mapping.groups[1].stride;
  if (s.etp == 1) {
    // Whole experts (Megatron-Core's expert order etp-ep-edp over the stage's tp-cp-dp ranks):
    // the expert group is ep consecutive ranks of the tensor, context and data groups, the
    // expert-data group the tp·cp·dp/ep ranks ep apart. Consecutive on the devices when the
    // data group follows the tensor group in the mapping's order; otherwise [approximation]
    // as many members spread evenly over the same extent.
    const int unit = data_stride == s.tp * tensor_stride || s.ep <= s.tp
                         ? tensor_stride
                         : std::max(1, data_stride / s.tp);
    const int edp = s.tp * s.cp * s.dp / s.ep;
    const auto fits = [&](int size, int stride) {
      return static_cast<long long>(size - 1) * stride < system_.devices ? stride : 1;
    };
    pl.expert = place_group(system_, s.ep, fits(s.ep, unit));
    pl.expert_data = place_group(system_, edp, fits(edp, unit * s.ep));
  } else if (s.dp % s.ep == 0) {
    // Experts next (Megatron's tp-cp-ep-dp order): ep members cp data-group positions apart.
    pl.expert = place_group(system_, s.ep, data_stride * s.cp);
    pl.expert_data = place_group(system_, s.dp / s.ep, data_stride * s.cp * s.ep);
  } else {
    // An expert group wider than dp takes the context ranks too (etp·ep·edp = tp·cp·dp,
    // Megatron-Core's folding): ep consecutive positions of the data-context group.
    pl.expert = place_group(system_, s.ep, data_stride);
    pl.expert_data = place_group(system_, s.cp * s.dp / s.ep, data_stride * s.ep);
  }
  return placements_.emplace(key, std::move(pl)).first->second;
}

GptPartition software_partition(const TrainingOptions& o, DataType precision) {
  GptPartition p;
  p.overlap_sp_regather = o.overlap_sp_regather;
  p.overlap_tp_backward = o.overlap_tp_backward;
  p.overlap_expert_comm = o.overlap_expert_comm;
  p.quantized_linear = o.quantized_linear;
  p.fp8_dispatch = o.quantized_linear && o.fp8_dispatch;
  p.fp8_tp_gather = o.quantized_linear && o.fp8_tp_gather &&
                    o.quant_recipe != QuantRecipe::kRowwise && o.quant_recipe != QuantRecipe::kNvfp4;
  p.quant_recipe = o.quant_recipe;
  p.fp8_fast_backward_accumulation = o.fp8_fast_backward_accumulation;
  p.attention_kernel = o.attention_kernel;
  p.metric_losses = o.metric_losses;
  p.fp32_cross_entropy = o.fp32_cross_entropy;
  p.separate_bias = o.separate_bias;
  p.sp_layout_copy = o.sp_layout_copy && !o.tensor_comm_chunked;
  p.selective_op = o.selective_op;
  p.eager = o.eager;
  const std::int32_t main = o.main_gradient_bytes(bytes_per_element(precision).si(),
                                                 precision == DataType::kBf16);
  p.wgrad_accumulation = o.wgrad_accumulation == WgradAccumulation::kFused ? main : 0;
  p.gradient_add = main;
  return p;
}

std::shared_ptr<const ComputeGraph> GptTraining::part_graph(const Strategy& s, PartKind kind,
                                                           int layers, int first_layer,
                                                           bool embedding, bool head) {
  const GraphKey graph_key{s.tp, s.sequence_parallel ? 1 : 0, recompute_key(s),
                           s.micro_batch, s.cp, expert_key(s), static_cast<int>(kind),
                           s.ulysses ? 1 : 0};
  return options_.graphs->get(graph_key, [&] {
    GptSpec w = spec_;
    w.micro_batch = s.micro_batch;
    GptPartition p = software_partition(options_, spec_.precision);
    if (kind == PartKind::kLayerUnpaired) p.overlap_expert_comm = false;
    p.first_layer = first_layer;
    p.tensor = s.tp;
    p.sequence_parallel = s.sequence_parallel;
    p.recompute = s.recompute;
    p.recompute_modules = s.recompute_modules;
    p.context = s.cp;
    p.context_all_to_all = s.ulysses;
    p.expert = s.ep;
    p.expert_tensor = s.etp;
    p.layers = layers;
    p.embedding = embedding;
    p.head = head;
    return build_gpt_graph(w, p);
  });
}

PlacedComm GptTraining::placed_comm(const Placements& pl) const {
  const Mapping& m = pl.mapping;
  return PlacedComm({&m.groups[0], nullptr, &m.groups[2], &m.groups[1], &pl.context, &pl.expert},
                    dispatch_cross_share(pl.expert));
}

// Expected distinct domains a token's experts fall in (DeepSeek-V3 report §2.1.2, node-limited
// routing; DeepEP's dispatch sends a token to each of them once). The group spans N scale-up
// domains, E experts evenly. Without group-limited routing: k experts drawn from E without
// replacement, N(1 - Π_j (E - E/N - j)/(E - j)). With routing to M of G groups: when the
// domains are no finer than the groups (N <= G), the M groups drawn from G, each assumed to
// receive one of the token's k >= M experts: N(1 - Π_j (G - G/N - j)/(G - j)) over j < M;
// with finer domains, the k experts drawn among the chosen groups' M·E/G experts on M·N/G
// domains. Over k copies, capped at 1.
double GptTraining::dispatch_cross_share(const GroupPlacement& expert) const {
  if (!options_.forwarded_dispatch || expert.size <= 1 || expert.levels < 2 ||
      expert.outermost().tier != Tier::kScaleOut || spec_.top_k <= 0) {
    return 1.0;
  }
  const double n = static_cast<double>(expert.size) / static_cast<double>(expert.outermost().below);
  const double k = static_cast<double>(spec_.top_k);
  const auto distinct = [](double domains, double items, double draws) {
    const double per = items / domains;
    double miss = 1.0;
    for (int j = 0; j < static_cast<int>(draws) && miss > 0.0; ++j) {
      miss *= std::max(0.0, (items - per - j) / (items - j));
    }
    return domains * (1.0 - miss);
  };
  double d = 0.0;
  const auto g = static_cast<double>(spec_.expert_groups);
  const auto m = static_cast<double>(spec_.routed_groups);
  if (spec_.expert_groups > 0 && spec_.routed_groups < spec_.expert_groups) {
    d = n <= g ? std::min(k, distinct(n, g, m))
               : distinct(n * m / g, static_cast<double>(spec_.experts) * m / g, k);
  } else {
    d = distinct(n, static_cast<double>(spec_.experts), k);
  }
  return std::clamp(d / k, 0.0, 1.0);
}

double GptTraining::contention(const GroupPlacement& group) const {
  const double sms = collective_contention(options_.collective_sms, timer_.machine().bundles);
  if (group.size <= 1) return sms;
  const PerfMachine& m = timer_.machine();
  if (group.outermost_tier != Tier::kScaleOut || !(m.scale_up_rate > Bandwidth{})) {
    return std::max(sms, m.scale_up_contention);
  }
  // Across nodes the ring moves its bytes through main memory as in the node, at its own rate:
  // a NIC per GPU (a DGX's eight rails) carries as many rings at once as the node has members,
  // near NVLink's rate; one NIC for the node, a tenth of it, where the SMs dominate.
  const double share = std::min(1.0, ring_byte_rate(group) / m.scale_up_rate);
  return std::max(sms, m.scale_up_contention * share);
}

double GptTraining::tensor_comm_contention(const GroupPlacement& group) const {
  // Chunked tensor parallelism moves its chunks by the copy engines (Transformer Engine's
  // userbuffers: initialize_ub's ring_exchange defaults to use_ce with 1 SM, its pipelined
  // reduce-scatters hold 16; PyTorch's symmetric-memory async TP). A copy engine reads each
  // byte once where it leaves and writes it once where it lands; NCCL's ring kernels also copy
  // it through their FIFO buffers, main-memory traffic at "2-3x" the link rate (NVIDIA/nccl
  // issue 1428), about twice the copy engine's: half the scale-up tier's measured contention
  // [R], and at least the profile's collective_sms share.
  constexpr double kCopyEngineShare = 0.5;
  if (options_.tensor_comm_chunked) {
    return std::max(collective_contention(options_.collective_sms, timer_.machine().bundles),
                    kCopyEngineShare * contention(group));
  }
  return contention(group);
}

double GptTraining::expert_paired_share(const Strategy& s, int stage,
                                        std::int64_t micro_batches) const {
  if (!options_.overlap_expert_comm || !spec_.moe() || s.ep <= 1) return 1.0;
  // Megatron-Core's batch-level overlap (--overlap-moe-expert-parallel-comm, combined 1F1B)
  // runs one micro-batch's forward together with another's backward: only the steady state's
  // pairs overlap. A stage's unpaired passes are its warm-up forwards and as many cool-down
  // backwards: p - 1 - d under 1F1B (at least 1: the last stage's first forward has no
  // backward to pair with), (p - d - 1)·2 + (v - 1)·p interleaved (Megatron's
  // get_pp_rank_microbatches), at most all of them; GPipe pairs none.
  if (s.schedule == PipelineSchedule::kGpipe) return 0.0;
  if (s.schedule == PipelineSchedule::kDualPipe) {
    // deepseek-ai/DualPipe's step() on rank `stage` (h its distance from the nearer end, H =
    // P/2): its main step overlaps a forward with a backward twice per round for M/2 - P + h + 1
    // rounds (the middle ranks' first forward alone), step 5 once per round for H - h - 1; of
    // the M forwards (and as many backwards) a rank runs, those are paired.
    const int P = s.pp, h = std::min(stage, P - 1 - stage), H = P / 2;
    const double m = static_cast<double>(micro_batches);
    const double paired = 2.0 * (0.5 * m - P + h + 1) - (h == H - 1 ? 1.0 : 0.0) + (H - h - 1);
    return m > 0.0 ? std::clamp(paired / m, 0.0, 1.0) : 0.0;
  }
  const int v = s.schedule == PipelineSchedule::kInterleaved ? s.virtual_stages : 1;
  const double passes = static_cast<double>(micro_batches) * v;
  const double warmup =
      v > 1 ? static_cast<double>((s.pp - stage - 1) * 2 + (v - 1) * s.pp)
            : static_cast<double>(std::max(1, s.pp - 1 - stage));
  return passes > 0.0 ? std::clamp(1.0 - warmup / passes, 0.0, 1.0) : 0.0;
}

double GptTraining::tensor_overlap(const Strategy& s) const {
  return options_.tensor_comm_chunked ? 1.0 - 1.0 / s.tp : options_.tensor_comm_overlap;
}

const GptTraining::Parts& GptTraining::parts(const Strategy& s, int id) {
  const auto key = std::make_tuple(s.tp, s.sequence_parallel ? 1 : 0,
                                   recompute_key(s), s.micro_batch, s.dp, s.cp,
                                   s.ulysses ? 1 : 0, expert_key(s), s.pp, id);
  auto it = parts_.find(key);
  if (it != parts_.end()) return it->second;
  const Placements& pl = placements(s, id);
  const PlacedComm comm = placed_comm(pl);
  const double tp_overlap = tensor_overlap(s);
  const double tensor_contention = tensor_comm_contention(pl.mapping.groups[0]);
  const auto part = [&](PartKind kind, int layers, int first_layer, bool embedding, bool head,
                        double& params, double& trained) {
    const std::shared_ptr<const ComputeGraph> g =
        part_graph(s, kind, layers, first_layer, embedding, head);
    params = static_cast<double>(g->parameter_count());
    trained = static_cast<double>(g->trainable_parameter_count());
    return stage_times(*g, timer_, comm, tp_overlap, tensor_contention, pace_);
  };
  Parts parts;
  // A mixture of experts' layer is one after its leading dense layers.
  const auto dense = static_cast<int>(spec_.dense_layers_in(0, spec_.layers));
  parts.layer = part(PartKind::kLayer, 1, spec_.moe() ? dense : 0, false, false,
                     parts.layer_parameters, parts.layer_trained);
  parts.layer_unpaired = parts.layer;
  if (options_.overlap_expert_comm && spec_.moe() && s.ep > 1) {
    double params = 0.0, trained = 0.0;
    parts.layer_unpaired =
        part(PartKind::kLayerUnpaired, 1, dense, false, false, params, trained);
  }
  if (spec_.moe() && dense > 0) {
    parts.dense_layer = part(PartKind::kDenseLayer, 1, 0, false, false,
                             parts.dense_layer_parameters, parts.dense_layer_trained);
  } else {
    parts.dense_layer = parts.layer;
    parts.dense_layer_parameters = parts.layer_parameters;
    parts.dense_layer_trained = parts.layer_trained;
  }
  parts.embedding = part(PartKind::kEmbedding, 0, 0, true, false, parts.embedding_parameters,
                         parts.embedding_trained);
  parts.head = part(PartKind::kHead, 0, 0, false, true, parts.head_parameters, parts.head_trained);
  return parts_.emplace(key, std::move(parts)).first->second;
}

GptTraining::LayerKernels GptTraining::layer_kernels(const Strategy& s) {
  const auto dense = static_cast<int>(spec_.dense_layers_in(0, spec_.layers));
  LayerKernels out;
  out.graph = part_graph(s, PartKind::kLayer, 1, spec_.moe() ? dense : 0, false, false);
  const Placements& pl = placements(s, 0);
  out.spans = kernel_spans(*out.graph, timer_, placed_comm(pl), tensor_overlap(s),
                           tensor_comm_contention(pl.mapping.groups[0]), pace_);
  return out;
}

GptTraining::QuantizedWeights GptTraining::quantized_weights(const Strategy& s) const {
  // LoRA gathers and updates only its adapters (16-bit): nothing quantized moves.
  if (!options_.memory.quantized_parameters || !options_.quantized_linear || spec_.lora()) return {};
  QuantizedWeights q;
  q.layer = static_cast<double>(gpt_layer_linear_weights(spec_, s.tp, s.ep, s.etp));
  q.dense_layer = spec_.moe() ? static_cast<double>(gpt_layer_linear_weights(
                                    spec_.dense_layer_spec(), s.tp, 1))
                              : q.layer;
  q.bytes = bytes(quantized_element_bytes(options_.quant_recipe));
  return q;
}

GptTraining::ShardedUnits GptTraining::sharded_units(const Parts& pt,
                                                     const GroupPlacement& data,
                                                     const GroupPlacement& experts,
                                                     double layer_experts,
                                                     const QuantizedWeights& quantized,
                                                     bool timing_only) const {
  // Each part (embedding, layer, head) is one FSDP unit: its parameters gathered and its
  // gradients reduce-scattered as one collective over the data group (sharded_pass.hpp).
  const Bytes p = bytes_per_element(spec_.precision);
  const Bytes g = bytes(gradient_reduction_bytes(options_.gradient_reduction, p.si(),
                                                 spec_.precision == DataType::kBf16));
  // Every parameter is gathered, the trained ones' gradients reduce-scattered.
  // Quantized weights (`linear`, the routed experts' among them) gathered at their own size.
  const auto unit = [&](double params, double expert_params, double trained, double linear) {
    ShardedUnit u;
    const Bytes qp = linear > 0.0 ? quantized.bytes : p;
    const Bytes gathered = params * p + std::max(0.0, linear - expert_params) * (qp - p);
    u.gather = collective_time(data, Collective::kAllGather, gathered);
    u.scatter = collective_time(data, Collective::kReduceScatter, trained * g);
    if (expert_params > 0.0) {
      u.gather += collective_time(experts, Collective::kAllGather, expert_params * qp);
      u.scatter += collective_time(experts, Collective::kReduceScatter, expert_params * g);
    }
    if (timing_only) return u;
    u.gather_bytes = link_bytes(data, Collective::kAllGather, gathered);
    u.scatter_bytes = link_bytes(data, Collective::kReduceScatter, trained * g);
    const auto add = [](std::array<Bytes, kMaxTiers>& to, const std::array<Bytes, kMaxTiers>& x) {
      for (std::size_t i = 0; i < to.size(); ++i) to[i] += x[i];
    };
    add(u.gather_bytes, link_bytes(experts, Collective::kAllGather, expert_params * qp));
    add(u.scatter_bytes, link_bytes(experts, Collective::kReduceScatter, expert_params * g));
    return u;
  };
  ShardedUnits out;
  out.contention = contention(data);
  out.layer = unit(pt.layer_parameters - layer_experts, layer_experts,
                   pt.layer_trained - layer_experts, quantized.layer);
  out.dense_layer =
      unit(pt.dense_layer_parameters, 0.0, pt.dense_layer_trained, quantized.dense_layer);
  out.embedding = unit(pt.embedding_parameters, 0.0, pt.embedding_trained, 0.0);
  out.head = unit(pt.head_parameters, 0.0, pt.head_trained, 0.0);
  return out;
}

void GptTraining::add_sharded_passes(const Parts& pt, const ShardedUnits& u, int layers,
                                     int dense, bool embedding, bool head, bool timing_only,
                                     ChunkCosts& c) const {
  // Every unit, the head included, is gathered again for its backward (FSDP keeps only the
  // root unit's parameters from its forward to its backward; not modelled).
  const Time launch = timer_.machine().host.launch_latency;
  if (!timing_only) {
    // Bytes sent per micro-batch: each unit gathered for its forward and again for its
    // backward, its gradients reduce-scattered once.
    const auto send = [&](const ShardedUnit& x, double units) {
      c.activity.add_link_bytes(x.gather_bytes, 2.0 * units);
      c.activity.add_link_bytes(x.scatter_bytes, units);
    };
    send(u.layer, layers - dense);
    send(u.dense_layer, dense);
    if (embedding) send(u.embedding, 1.0);
    if (head) send(u.head, 1.0);
    if (head && spec_.mtp_depth > 0) {  // multi-token prediction's blocks, gathered as layers
      send(u.layer, static_cast<double>(spec_.mtp_depth));
    }
  }
  ShardedPass f(u.contention), b(u.contention);
  if (embedding) f.layer(u.embedding.gather, chained(pt.embedding.forward, launch));
  for (int i = 0; i < dense; ++i) f.layer(u.dense_layer.gather, chained(pt.dense_layer.forward, launch));
  for (int i = dense; i < layers; ++i) f.layer(u.layer.gather, chained(pt.layer.forward, launch));
  // Multi-token prediction after the head (its blocks as the model's layers, pt.layer the sparse
  // one in a mixture of experts; the head's weight already gathered): forward after the main
  // head, backward before it.
  if (head) {
    f.layer(u.head.gather, chained(pt.head.forward, launch));
    for (std::int64_t k = 0; k < spec_.mtp_depth; ++k) {
      f.layer(u.layer.gather, chained(pt.layer.forward, launch));
      f.layer(Time{}, chained(pt.head.forward, launch));
    }
    for (std::int64_t k = 0; k < spec_.mtp_depth; ++k) {
      b.layer(Time{}, chained(pt.head.backward, launch));
      b.layer(u.layer.gather, chained(pt.layer.backward, launch), u.layer.scatter);
    }
    b.layer(u.head.gather, chained(pt.head.backward, launch), u.head.scatter);
  }
  for (int i = dense; i < layers; ++i) {
    b.layer(u.layer.gather, chained(pt.layer.backward, launch), u.layer.scatter);
  }
  for (int i = 0; i < dense; ++i) {
    b.layer(u.dense_layer.gather, chained(pt.dense_layer.backward, launch), u.dense_layer.scatter);
  }
  if (embedding) {
    b.layer(u.embedding.gather, chained(pt.embedding.backward, launch), u.embedding.scatter);
  }
  // The passes' compute is what add() summed; the schedules add the exposed communication.
  c.forward = f.span();
  c.backward = b.span();
  c.data_comm = f.exposed() + b.exposed();
}

bool GptTraining::reject_if_unsupported(TrainingResult& r) const {
  if (!options_.quantized_linear) return false;
  const PerfMachine& m = timer_.machine();
  const QuantRecipe q = options_.quant_recipe;
  const char* missing = nullptr;
  if (q == QuantRecipe::kNvfp4 && m.fp4_matrix_flops <= Throughput{}) {
    missing = "FP4 matrix units (core.fp4_throughput_ratio)";
  } else if ((q == QuantRecipe::kNvfp4 || q == QuantRecipe::kMxfp8) && !m.block_scaled_mma) {
    missing = "matrix units that apply block scales (core.block_scaled_mma)";
  }
  if (missing == nullptr) return false;
  r.feasible = false;
  r.reason = printf_string("%s quantization needs %s, which %s lacks",
                           std::string(to_string(q)).c_str(), missing, m.name.c_str());
  return true;
}

TrainingResult GptTraining::evaluate(const Strategy& s) {
  TrainingResult r;
  evaluate(s, r);
  return r;
}

// The memos grow with the distinct shapes a search visits (millions of strategies for a
// mixture of experts); past a bound they start again between evaluations. Their entries are
// pure functions of their keys, so results do not change.
void GptTraining::trim_memos() {
  constexpr std::size_t kMaxParts = 8192, kMaxPlacements = 8192;
  if (parts_.size() > kMaxParts) parts_.clear();
  if (placements_.size() > kMaxPlacements) placements_.clear();
}

void GptTraining::evaluate(const Strategy& s, TrainingResult& r) {
  PF_ASSERT(s.devices() == system_.devices && s.micro_batch > 0);
  trim_memos();
  reset_keeping_storage(r);
  r.strategy = s;
  r.memory = gpt_memory_footprint(spec_, s, options_.memory);
  r.memory_capacity = memory_capacity();
  r.model_flops = flops(gpt_model_flops(spec_));  // Narayanan et al. 2021 eq. 3, generalised
  r.micro_batches = spec_.global_batch / (static_cast<std::int64_t>(s.dp) * s.micro_batch);
  if (reject_if_out_of_memory(r, options_.check_memory)) return;
  if (reject_if_unsupported(r)) return;
  if (s.zero < 3 || s.dp == 1) {
    timed_ = 0;
    time_iteration(s, 0, r);
  } else {
    timed_ = 1;
    // ZeRO-3's gathers hide behind the layers' compute where the tensor-parallel all-reduces
    // block it, which the orders' score (time to move the bytes) does not see: the iteration
    // decides between the order least costly for the traffic and the order of stages 0-2
    // (usually tensor groups inside a node, Narayanan et al. 2021 §3.3).
    time_iteration(s, 1, r);
    if (placements(s, 2).mapping.order != placements(s, 1).mapping.order) {
      other_ = r;  // copy-assigned into other_'s storage
      time_iteration(s, 2, other_);
      if (other_.iteration_time < r.iteration_time) {
        std::swap(r, other_);
        timed_ = 2;
      }
    }
  }
  r.mfu = r.model_flops / (r.iteration_time * system_.devices * peak_);
  r.job_pace = pace_;
  r.tokens_per_second =
      static_cast<double>(spec_.global_batch * spec_.sequence) / r.iteration_time.si();
}

Timeline GptTraining::timeline(const Strategy& s, TrainingResult& r) {
  evaluate(s, r);
  if (!r.feasible) return {};
  other_ = r;  // time_iteration reads its micro-batch count
  time_iteration(s, timed_, other_);  // input_ as the kept result was timed
  return iteration_timeline(input_, r);
}

Time GptTraining::lower_bound(const Strategy& s) {
  PF_ASSERT(s.devices() == system_.devices && s.micro_batch > 0);
  trim_memos();
  const std::int64_t micro = spec_.global_batch / (static_cast<std::int64_t>(s.dp) * s.micro_batch);
  if (s.zero < 3 || s.dp == 1) {
    build_input(s, 0, micro, true);
    return iteration_lower_bound(input_);
  }
  build_input(s, 1, micro, true);
  Time bound = iteration_lower_bound(input_);
  if (placements(s, 2).mapping.order != placements(s, 1).mapping.order) {
    build_input(s, 2, micro, true);
    bound = std::min(bound, iteration_lower_bound(input_));
  }
  return bound;
}

void GptTraining::time_iteration(const Strategy& s, int id, TrainingResult& r) {
  build_input(s, id, r.micro_batches);
  // One scratch per thread, shared by every model the thread evaluates (a search's next design
  // is a new model): its buffers stay sized, and the pipeline results it keeps are pure
  // functions of their inputs.
  thread_local IterationScratch scratch;
  assemble_iteration(input_, r, &scratch);
}

void GptTraining::build_input(const Strategy& s, int id, std::int64_t micro_batches,
                              bool timing_only) {
  const Placements& pl = placements(s, id);
  const Mapping& m = pl.mapping;
  const Parts& pt = parts(s, id);
  const bool sharded = id != 0;
  const HostSpec& host = timer_.machine().host;
  const Time launch = host.launch_latency;

  // Chunks: pp·v, their layers as the profile's layer split places them (layer_split.hpp; even:
  // equal with interleaving, check_strategy); the embedding on the first, the head on the last.
  // DualPipe: 2·pp, chunk pp + d the stage pp - 1 - d on device d (a second copy of it).
  const bool dual = s.schedule == PipelineSchedule::kDualPipe;
  const int v = s.schedule == PipelineSchedule::kInterleaved ? s.virtual_stages : dual ? 2 : 1;
  const int chunks = s.pp * v;
  const int model_chunks = dual ? s.pp : chunks;
  spans_.resize(static_cast<std::size_t>(model_chunks));
  gpt_stage_spans(spec_, options_.memory.layer_split, spans_);
  const Bytes p = bytes_per_element(spec_.precision);
  // The evaluator's input and buffers, reused: a warm evaluation allocates nothing in them.
  std::vector<ChunkCosts> kept = std::move(input_.chunks);
  kept.clear();
  input_ = IterationInput{};
  input_.chunks = std::move(kept);
  IterationInput& in = input_;
  in.schedule = s.schedule;
  in.stages = s.pp;
  in.chunks_per_stage = v;
  in.micro_batches = static_cast<int>(micro_batches);
  // Activations between stages, split over the tensor group (Megatron's scatter-gather).
  const Bytes send_bytes =
      static_cast<double>(s.micro_batch * spec_.sequence * spec_.hidden) * p / (s.tp * s.cp);
  in.send = s.pp > 1 ? collective_time(m.groups[2], Collective::kSendRecv, send_bytes) : Time{};
  in.send_bytes = send_bytes;
  in.pipeline_group = &m.groups[2];
  // A sparse layer's routed experts (sharded over ep): their gradients reduce over the
  // expert-data-parallel group instead of the data group (Megatron-Core's expert data parallelism).
  const double layer_experts = static_cast<double>(gpt_layer_expert_parameters(spec_, s.expert_tp(), s.ep));
  // `owned`: the share of the part's parameters this chunk reduces and updates (a tied head on
  // the embedding's own chunk shares its weight: counted once).
  const auto add = [&](ChunkCosts& c, const StageTimes& t, double n, double params,
                       double owned = 1.0) {
    c.forward += n * chained(t.forward, launch);
    c.backward += n * chained(t.backward, launch);
    c.weight_gradients += n * t.backward.weight_gradients;
    c.tensor_comm += n * (t.forward.exposed_comm + t.backward.exposed_comm);
    if (!timing_only) {
      c.activity.add(t.forward.activity, n);
      c.activity.add(t.backward.activity, n);
      c.step.add(t.update.activity, n * owned);
    }
    c.update += n * owned * chained(t.update, launch);
    c.parameters += n * owned * params;
  };
  // The word embedding is tied to the LM head: with pipeline stages, the first and the last
  // stage each hold a copy and all-reduce its gradients after the backward pass (Megatron's
  // embedding group; Narayanan et al. 2021 §2.2 footnote, Shoeybi et al. 2019 §3). A ring
  // all-reduce of two members moves the whole buffer once each way: one send of V/t·h
  // gradients over the pipeline group's link. Untied embeddings need none.
  const bool tied = s.pp > 1 && spec_.tied_embeddings && !spec_.lora();
  const Bytes tied_bytes =
      static_cast<double>(spec_.vocabulary / s.tp) * static_cast<double>(spec_.hidden) * p;
  const Time tied_sync =
      tied && !timing_only
          ? collective_time(pl.mapping.groups[2], Collective::kSendRecv, tied_bytes)
          : Time{};
  const auto tied_link =
      tied && !timing_only ? link_bytes(pl.mapping.groups[2], Collective::kSendRecv, tied_bytes)
                           : std::array<Bytes, kMaxTiers>{};
  const QuantizedWeights quantized = quantized_weights(s);
  const ShardedUnits units =
      sharded ? sharded_units(pt, m.groups[1], pl.expert_data, layer_experts, quantized, timing_only)
              : ShardedUnits{};
  const double head_owned =
      spec_.tied_embeddings && chunks == 1 && pt.head_trained > 0.0
          ? std::max(0.0, pt.head_trained - tied_bytes / p) / pt.head_trained
          : 1.0;
  const auto outside = [&](ChunkCosts& c, const StageTimes& t) {
    c.outside_layers += chained(t.forward, launch) + chained(t.backward, launch) -
                        t.forward.exposed_comm - t.backward.exposed_comm;
  };
  const Bytes gradient_bytes = bytes(gradient_reduction_bytes(
      options_.gradient_reduction, p.si(), spec_.precision == DataType::kBf16));
  for (int c = 0; c < chunks; ++c) {
    ChunkCosts cc;
    const int index = dual && c >= s.pp ? chunks - 1 - c : c;  // the model chunk it runs
    const bool first = index == 0, last = index == model_chunks - 1;
    const StageSpan& span = spans_[static_cast<std::size_t>(index)];
    const auto layers = static_cast<int>(span.count);
    const auto dense = static_cast<int>(spec_.dense_layers_in(span.first, layers));
    // The sparse layers' passes the schedule pairs with another micro-batch's (their
    // all-to-alls overlapped) and the rest (expert_paired_share), weighted by their counts.
    const double paired = expert_paired_share(s, c % s.pp, micro_batches);
    add(cc, pt.layer, (layers - dense) * paired, pt.layer_trained);
    if (paired < 1.0) {
      add(cc, pt.layer_unpaired, (layers - dense) * (1.0 - paired), pt.layer_trained);
    }
    cc.expert_parameters = static_cast<double>(layers - dense) * layer_experts;
    cc.quantized_parameters = (layers - dense) * quantized.layer + dense * quantized.dense_layer;
    if (dense > 0) add(cc, pt.dense_layer, dense, pt.dense_layer_trained);
    if (first) {
      add(cc, pt.embedding, 1.0, pt.embedding_trained);
      outside(cc, pt.embedding);
      cc.sync += tied_sync;
      cc.step.add_link_bytes(tied_link);
    }
    if (last) {
      add(cc, pt.head, 1.0, pt.head_trained, head_owned);
      outside(cc, pt.head);
      cc.sync += tied_sync;
      cc.step.add_link_bytes(tied_link);
      // Multi-token prediction (GptSpec::mtp_depth): each module one more block of the model's
      // own (sparse) kind, trained and reduced, and one more pass of the shared output head
      // and its loss (its weight's gradients added, not a second copy to update). The 2h -> h
      // projection and the two RMSNorms are not timed (about a tenth of the head's work).
      const auto mtp = static_cast<double>(spec_.mtp_depth);
      if (mtp > 0.0) {
        add(cc, pt.layer, mtp, pt.layer_trained);  // the sparse layer in a mixture of experts
        cc.expert_parameters += mtp * layer_experts;
        cc.quantized_parameters += mtp * quantized.layer;
        add(cc, pt.head, mtp, pt.head_trained, 0.0);
        for (std::int64_t k = 0; k < spec_.mtp_depth; ++k) outside(cc, pt.head);
      }
    }
    if (sharded) {
      add_sharded_passes(pt, units, layers, dense, first, last, timing_only, cc);
    }
    if (dual && !timing_only) {
      // DualPipe keeps two copies of every stage: after the backward each device exchanges a
      // stage's gradients with the mirror device holding the other copy (an all-reduce of two).
      const Bytes g = cc.parameters * gradient_bytes;
      cc.sync += collective_time(m.groups[2], Collective::kSendRecv, g);
      cc.step.add_link_bytes(link_bytes(m.groups[2], Collective::kSendRecv, g));
    }
    cc.forward += launch;
    cc.backward += launch;
    cc.buckets = std::max(1, layers);
    in.chunks.push_back(cc);
  }
  in.data_group = &m.groups[1];
  in.data_group_shared = &pl.data_shared;
  in.expert_data_group = &pl.expert_data;
  in.dp = s.dp * s.cp;  // gradients and optimizer shards over the data-context group
  in.zero = s.zero;
  in.sharded = sharded;
  in.overlap_data_parallel = options_.overlaps_gradient_reduction(s.zero);
  in.contention = contention(m.groups[1]);
  in.zero_all_reduce = options_.zero_all_reduce;
  in.gradient_bytes = gradient_bytes;
  in.parameter_bytes = p;
  in.quantized_parameter_bytes = quantized.bytes;
  // Token ids and labels.
  in.input_bytes = bytes(8.0 * static_cast<double>(s.micro_batch * spec_.sequence / s.cp));
  // Gradient clipping all-reduces the squared norm (one fp32) over the model-parallel group,
  // and fp16 loss scaling the overflow flag likewise (Megatron clip_grad_norm_fp32,
  // _unscale_main_grads_and_check_for_nan); timed as one scalar all-reduce over the tensor and
  // one over the pipeline group (latency-bound).
  const Time scalar_reduce =
      timing_only ? Time{}
                  : collective_time(pl.mapping.groups[0], Collective::kAllReduce, bytes(4.0)) +
                        collective_time(pl.mapping.groups[2], Collective::kAllReduce, bytes(4.0));
  in.gradient_norm = (spec_.precision == DataType::kFp16 ? 2.0 : 1.0) * scalar_reduce;
  in.host = host;
}

}  // namespace pathfinder
