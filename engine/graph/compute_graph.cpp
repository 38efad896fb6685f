#include "engine/graph/compute_graph.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "engine/core/error.hpp"
#include "engine/core/enum_table.hpp"

namespace pathfinder {
namespace {

constexpr enum_table::Table<KernelKind, 14> kKinds{{
    {KernelKind::kGemm, "gemm"},
    {KernelKind::kBatchedGemm, "batched-gemm"},
    {KernelKind::kElementwise, "elementwise"},
    {KernelKind::kReduction, "reduction"},
    {KernelKind::kSoftmax, "softmax"},
    {KernelKind::kLayerNorm, "layernorm"},
    {KernelKind::kEmbedding, "embedding"},
    {KernelKind::kLstmCell, "lstm-cell"},
    {KernelKind::kAttentionScores, "attention-scores"},
    {KernelKind::kAttentionContext, "attention-context"},
    {KernelKind::kCrossEntropy, "cross-entropy"},
    {KernelKind::kOptimizerUpdate, "optimizer-update"},
    {KernelKind::kCommunication, "communication"},
    {KernelKind::kFlashAttention, "flash-attention"},
}};
constexpr enum_table::Table<CommKind, 5> kCommKinds{{
    {CommKind::kAllReduce, "all-reduce"},
    {CommKind::kReduceScatter, "reduce-scatter"},
    {CommKind::kAllGather, "all-gather"},
    {CommKind::kSendRecv, "send-recv"},
    {CommKind::kAllToAll, "all-to-all"},
}};
constexpr enum_table::Table<CommGroup, 6> kCommGroups{{
    {CommGroup::kTensor, "tensor"},
    {CommGroup::kTensorColumns, "tensor-columns"},
    {CommGroup::kPipeline, "pipeline"},
    {CommGroup::kData, "data"},
    {CommGroup::kContext, "context"},
    {CommGroup::kExpert, "expert"},
}};
constexpr enum_table::Table<Phase, 4> kPhases{{
    {Phase::kForward, "forward"},
    {Phase::kBackwardData, "backward-data"},
    {Phase::kBackwardWeight, "backward-weight"},
    {Phase::kUpdate, "update"},
}};
constexpr enum_table::Table<DataType, 5> kDataTypes{{
    {DataType::kFp32, "fp32"},
    {DataType::kFp16, "fp16"},
    {DataType::kBf16, "bf16"},
    {DataType::kFp8, "fp8"},
    {DataType::kFp4, "fp4"},
}};

constexpr enum_table::Table<QuantRecipe, 6> kQuantRecipes{{
    {QuantRecipe::kDelayed, "delayed"},
    {QuantRecipe::kCurrent, "current"},
    {QuantRecipe::kRowwise, "rowwise"},
    {QuantRecipe::kMxfp8, "mxfp8"},
    {QuantRecipe::kBlockwise, "blockwise"},
    {QuantRecipe::kNvfp4, "nvfp4"},
}};
double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

std::string_view to_string(KernelKind k) { return enum_table::name(kKinds, k); }
std::string_view to_string(CommKind k) { return enum_table::name(kCommKinds, k); }
std::string_view to_string(CommGroup g) { return enum_table::name(kCommGroups, g); }
std::string_view to_string(Phase p) { return enum_table::name(kPhases, p); }
std::string_view to_string(DataType t) { return enum_table::name(kDataTypes, t); }
std::string_view to_string(QuantRecipe r) { return enum_table::name(kQuantRecipes, r); }
std::optional<KernelKind> parse_kernel_kind(std::string_view s) {
  return enum_table::parse(kKinds, s);
}

double quantized_element_bytes(QuantRecipe r) {
  switch (r) {
    case QuantRecipe::kMxfp8: return 1.0 + 1.0 / 32.0;
    case QuantRecipe::kBlockwise: return 1.0 + 4.0 / 128.0;
    case QuantRecipe::kNvfp4: return 0.5 + 1.0 / 16.0;
    case QuantRecipe::kDelayed:
    case QuantRecipe::kCurrent:
    case QuantRecipe::kRowwise: break;
  }
  return 1.0;
}
std::optional<Phase> parse_phase(std::string_view s) { return enum_table::parse(kPhases, s); }
std::optional<DataType> parse_data_type(std::string_view s) {
  return enum_table::parse(kDataTypes, s);
}
std::vector<std::string> valid_kernel_kinds() { return enum_table::names(kKinds); }
std::vector<std::string> valid_phases() { return enum_table::names(kPhases); }
std::vector<std::string> valid_data_types() { return enum_table::names(kDataTypes); }

Bytes bytes_per_element(DataType t) {
  switch (t) {
    case DataType::kFp32: return bytes(4);
    case DataType::kFp16:
    case DataType::kBf16: return bytes(2);
    case DataType::kFp8: return bytes(1);
    case DataType::kFp4: return bytes(0.5);
  }
  return bytes(0);
}

bool is_gemm(KernelKind k) {
  return k == KernelKind::kGemm || k == KernelKind::kBatchedGemm ||
         k == KernelKind::kAttentionScores || k == KernelKind::kAttentionContext;
}

Flops AttentionShape::forward_flops() const {
  // Q·Kᵀ over the key width and P·V over the value width: 2·q·s·(d + d_v) per problem.
  return pathfinder::flops(2.0 * d(batch) * d(query_count()) * d(sequence) *
                           d(head_dim + value_width()) * (causal ? 0.5 : 1.0));
}

Flops GemmShape::flops() const { return pathfinder::flops(2.0 * d(batch) * d(m) * d(n) * d(k)); }
Bytes GemmShape::bytes_read(DataType t) const {
  return d(batch) * (d(m) * d(k) + d(k) * d(n)) * bytes_per_element(t) +
         d(batch) * d(m) * d(n) * bytes(accumulate);
}
Bytes GemmShape::bytes_written(DataType t) const {
  return d(batch) * d(m) * d(n) * (accumulate > 0 ? bytes(accumulate) : bytes_per_element(t));
}

const Kernel& ComputeGraph::kernel(KernelId id) const {
  PF_ASSERT(id < kernels_.size());
  return kernels_[id];
}

ParamId ComputeGraphBuilder::add_parameter(ParameterTensor p) {
  PF_ASSERT(p.elements > 0);
  g_.params_.push_back(std::move(p));
  return static_cast<ParamId>(g_.params_.size() - 1);
}

KernelId ComputeGraphBuilder::add(Kernel k) {
  const KernelId id = next_id();
  for (const KernelId dep : k.deps) PF_ASSERT(dep < id);
  PF_ASSERT(is_gemm(k.kind) == k.gemm.has_value());
  PF_ASSERT((k.kind == KernelKind::kCommunication) == k.comm.has_value());
  PF_ASSERT((k.kind == KernelKind::kFlashAttention) == k.attention.has_value());
  if (k.attention) {
    PF_ASSERT(k.attention->batch > 0 && k.attention->sequence > 0 && k.attention->head_dim > 0);
  }
  if (k.gemm) {
    PF_ASSERT(k.gemm->batch > 0 && k.gemm->m > 0 && k.gemm->n > 0 && k.gemm->k > 0);
    PF_ASSERT(k.kind != KernelKind::kGemm || k.gemm->batch == 1);
    PF_ASSERT(k.flops >= k.gemm->flops());
  }
  PF_ASSERT(!k.weight || *k.weight < g_.params_.size());
  PF_ASSERT(k.flops.si() >= 0.0 && k.bytes_read.si() >= 0.0 && k.bytes_written.si() >= 0.0);
  g_.kernels_.push_back(std::move(k));
  return id;
}

KernelId ComputeGraphBuilder::next_id() const { return static_cast<KernelId>(g_.kernels_.size()); }

const ParameterTensor& ComputeGraphBuilder::parameter(ParamId id) const {
  PF_ASSERT(id < g_.params_.size());
  return g_.params_[id];
}

ComputeGraph ComputeGraphBuilder::build() && {
  for (const auto& p : g_.params_) {
    g_.parameter_count_ += p.elements;
    if (p.trainable) g_.trainable_count_ += p.elements;
  }
  for (const auto& k : g_.kernels_) {
    g_.total_flops_ += k.flops;
    g_.phase_flops_[static_cast<std::size_t>(k.phase)] += k.flops;
    if (k.gemm) g_.gemm_flops_ += k.gemm->flops();
    g_.total_bytes_ += k.bytes();
  }
  // Timing classes: every field the kernel and communication timers read, as one ordered key.
  using ClassKey = std::tuple<int, int, std::array<std::int64_t, 5>, std::array<std::int64_t, 7>,
                              std::tuple<int, int, double, bool, int>, double, double, double>;
  std::map<ClassKey, std::uint32_t> classes;
  g_.timing_class_.reserve(g_.kernels_.size());
  for (const auto& k : g_.kernels_) {
    std::array<std::int64_t, 5> gemm{-1, 0, 0, 0, 0};
    if (k.gemm) gemm = {k.gemm->batch, k.gemm->m, k.gemm->n, k.gemm->k, k.gemm->accumulate};
    std::array<std::int64_t, 7> attention{-1, 0, 0, 0, 0, 0, 0};
    if (k.attention) {
      const AttentionShape& a = *k.attention;
      attention = {a.batch, a.sequence, a.head_dim, a.queries, a.value_dim,
                   (a.causal ? 1 : 0) | (a.backward ? 2 : 0), static_cast<std::int64_t>(a.kernel)};
    }
    std::tuple<int, int, double, bool, int> comm{-1, 0, 0.0, false, 0};
    if (k.comm) {
      comm = {static_cast<int>(k.comm->kind), static_cast<int>(k.comm->group), k.comm->bytes.si(),
              k.comm->overlapped, k.comm->ring_steps};
    }
    const ClassKey key{static_cast<int>(k.kind) | (k.promoted_accumulation ? 1 << 16 : 0),
                       static_cast<int>(k.dtype), gemm, attention, comm,
                       k.flops.si(), k.bytes_read.si(), k.bytes_written.si()};
    const auto next = static_cast<std::uint32_t>(classes.size());
    const auto [it, added] = classes.emplace(key, next);
    const auto id = static_cast<KernelId>(g_.timing_class_.size());
    if (added) g_.class_first_.push_back(id);
    g_.timing_class_.push_back(it->second);
    const int p = ComputeGraph::pass_of(k.phase);
    g_.pass_.push_back(static_cast<std::uint8_t>(p));
    using Kind = ComputeGraph::StepKind;
    ComputeGraph::PassStep step;
    step.id = id;
    step.cls = it->second;
    step.kind = !k.comm                   ? Kind::kCompute
                : k.comm->ring_steps > 0  ? Kind::kRingComm
                : k.comm->overlapped      ? Kind::kOverlappedComm
                                          : Kind::kComm;
    step.host_sync = k.host_sync;
    step.deps_begin = static_cast<std::uint32_t>(g_.step_deps_.size());
    // A kernel on the compute stream (a device kernel or a blocking collective) cannot be held
    // up by inputs that ran on that stream before it: they ended by the time the stream is
    // free. Only inputs from elsewhere (the communication stream, a ring's pass-through) can.
    const auto on_stream = [&](KernelId d) {
      const Kernel& dk = g_.kernels_[d];
      return !dk.comm || (!dk.comm->overlapped && dk.comm->ring_steps == 0);
    };
    const bool serial = step.kind == Kind::kCompute || step.kind == Kind::kComm;
    const bool all_on_stream =
        std::all_of(k.deps.begin(), k.deps.end(),
                    [&](KernelId d) { return g_.pass_[d] != p || on_stream(d); });
    for (const KernelId d : k.deps) {
      if (g_.pass_[d] == p && !(serial && all_on_stream)) g_.step_deps_.push_back({d, 0.0});
    }
    step.deps_end = static_cast<std::uint32_t>(g_.step_deps_.size());
    for (const KernelId d : k.deps) {
      const Kernel& dk = g_.kernels_[d];
      if (dk.comm && dk.comm->ring_steps > 0) {
        g_.step_deps_.push_back({d, static_cast<double>(dk.comm->ring_steps)});
      }
    }
    step.rings_end = static_cast<std::uint32_t>(g_.step_deps_.size());
    g_.has_ring_transfers_ = g_.has_ring_transfers_ || step.rings_end > step.deps_end;
    g_.pass_steps_[static_cast<std::size_t>(p)].push_back(step);
  }
  for (std::size_t p = 0; p < g_.pass_steps_.size(); ++p) {
    std::vector<std::uint32_t> slot(g_.class_first_.size(), UINT32_MAX);
    auto& counts = g_.pass_classes_[p];
    for (const ComputeGraph::PassStep& st : g_.pass_steps_[p]) {
      if (slot[st.cls] == UINT32_MAX) {
        slot[st.cls] = static_cast<std::uint32_t>(counts.size());
        counts.push_back({st.cls, 0, st.kind});
      }
      ++counts[slot[st.cls]].count;
      if (g_.kernels_[st.id].phase == Phase::kBackwardWeight) {
        ++counts[slot[st.cls]].weight_gradients;
      }
    }
  }
  return std::move(g_);
}

Kernel gemm_kernel(std::string name, KernelKind kind, Phase phase, DataType dtype,
                   const GemmShape& shape, std::vector<KernelId> deps) {
  Kernel k;
  k.name = std::move(name);
  k.kind = kind;
  k.phase = phase;
  k.dtype = dtype;
  k.gemm = shape;
  k.flops = shape.flops();
  k.bytes_read = shape.bytes_read(dtype);
  k.bytes_written = shape.bytes_written(dtype);
  k.deps = std::move(deps);
  return k;
}

Kernel stream_kernel(std::string name, KernelKind kind, Phase phase, DataType dtype, Flops work,
                     Bytes read, Bytes written, std::vector<KernelId> deps) {
  Kernel k;
  k.name = std::move(name);
  k.kind = kind;
  k.phase = phase;
  k.dtype = dtype;
  k.flops = work;
  k.bytes_read = read;
  k.bytes_written = written;
  k.deps = std::move(deps);
  return k;
}

Kernel comm_kernel(std::string name, Phase phase, DataType dtype, const Communication& c,
                   std::vector<KernelId> deps) {
  Kernel k = stream_kernel(std::move(name), KernelKind::kCommunication, phase, dtype, Flops{},
                           Bytes{}, Bytes{}, std::move(deps));
  k.comm = c;
  return k;
}

bool dependencies_precede(const ComputeGraph& g) {
  for (std::size_t i = 0; i < g.size(); ++i) {
    for (const KernelId dep : g.kernels()[i].deps) {
      if (dep >= i) return false;
    }
  }
  return true;
}

bool is_acyclic(const ComputeGraph& g) {
  const std::size_t n = g.size();
  std::vector<std::size_t> indegree(n, 0);
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (const KernelId dep : g.kernels()[i].deps) {
      if (dep >= n) return false;  // a dangling id cannot be ordered
      ++indegree[i];
      users[dep].push_back(i);
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push_back(i);
  }
  std::size_t visited = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (const std::size_t u : users[i]) {
      if (--indegree[u] == 0) ready.push_back(u);
    }
  }
  return visited == n;
}

}  // namespace pathfinder
