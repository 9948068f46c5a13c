// Implements SdpaGraph::Build. The operation graphs, in cuDNN's [B, H, T, D] order (S, P, dP,
// dS are [B, H, T, T] virtual f32 tensors; causal keeps key j <= query i):
//
//   forward   S = Q Kᵀ; S *= scale; S = i >= j ? S : -inf;
//             m = rowmax S; E = exp(S - m); l = rowsum E; stats = m + log l; P = E / l;
//             O = P V
//   backward  r = rowsum(dO * O) (kept in kRowSum scratch);
//             S as the forward; P = exp(S - stats);
//             dV = Pᵀ dO; dP = dO Vᵀ; dS = P (dP - r) scale; dQ = dS K; dK = dSᵀ Q
//
// which is what cuDNN's fused flash-attention engines match (the softmax with its stats, the
// causal mask from generated indices, the two or five products). A transpose is a reshape
// into a virtual tensor with swapped strides.
#include "runtime/device/cuda/cudnn_sdpa_graph.h"

#include <array>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

using Dims = std::array<int64_t, 4>;

/// Descriptors made, attributes set and finalized in order; the first failure is kept and
/// every later call does nothing, so a graph reads as a straight list of ops.
class Builder {
 public:
  Builder(const CudnnApi& dnn, std::vector<cudnnDescriptor>& owned, std::string what)
      : dnn_(dnn), owned_(owned), what_(std::move(what)) {}

  const absl::Status& status() const { return status_; }

  cudnnDescriptor Make(int type) {
    cudnnDescriptor d = nullptr;
    if (!status_.ok()) return nullptr;
    Check(dnn_.BackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", type);
    if (d != nullptr) owned_.push_back(d);
    return d;
  }
  void Set(cudnnDescriptor d, int name, int type, int64_t count, const void* value) {
    if (!status_.ok()) return;
    Check(dnn_.BackendSetAttribute(d, name, type, count, value), "cudnnBackendSetAttribute", name);
  }
  void SetDesc(cudnnDescriptor d, int name, cudnnDescriptor value) {
    Set(d, name, cudnn_type::kBackendDescriptor, 1, &value);
  }
  void SetInt(cudnnDescriptor d, int name, int64_t value) { Set(d, name, cudnn_type::kInt64, 1, &value); }
  void Finalize(cudnnDescriptor d, int what) {
    if (!status_.ok()) return;
    Check(dnn_.BackendFinalize(d), "cudnnBackendFinalize", what);
  }

  /// A tensor: non-virtual ones carry a variant-pack uid; virtual ones get a fresh id.
  cudnnDescriptor Tensor(int64_t uid, int data_type, Dims dims, Dims strides, bool is_virtual,
                         bool by_value = false) {
    cudnnDescriptor t = Make(cudnn_desc::kTensor);
    const int64_t id = is_virtual ? next_virtual_uid_++ : uid, alignment = 16;
    const bool virt = is_virtual, value = by_value;
    Set(t, cudnn_attr::kTensorDataType, cudnn_type::kDataType, 1, &data_type);
    Set(t, cudnn_attr::kTensorDimensions, cudnn_type::kInt64, 4, dims.data());
    Set(t, cudnn_attr::kTensorStrides, cudnn_type::kInt64, 4, strides.data());
    SetInt(t, cudnn_attr::kTensorUniqueId, id);
    SetInt(t, cudnn_attr::kTensorByteAlignment, alignment);
    Set(t, cudnn_attr::kTensorIsVirtual, cudnn_type::kBoolean, 1, &virt);
    if (by_value) Set(t, cudnn_attr::kTensorIsByValue, cudnn_type::kBoolean, 1, &value);
    Finalize(t, cudnn_desc::kTensor);
    return t;
  }
  /// A virtual f32 tensor with packed strides.
  cudnnDescriptor Virtual(Dims dims, int data_type = kCudnnDataFloat) {
    return Tensor(0, data_type, dims, Packed(dims), /*is_virtual=*/true);
  }
  static Dims Packed(Dims d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

  /// y = mode(x[, b]) (t: the condition of a binary select; axis: a generated index's).
  void Pointwise(int mode, cudnnDescriptor x, cudnnDescriptor b, cudnnDescriptor y, cudnnDescriptor t = nullptr,
                 int64_t axis = -1, int precision = kCudnnDataFloat) {
    cudnnDescriptor pw = Make(cudnn_desc::kPointwise);
    Set(pw, cudnn_attr::kPointwiseMode, cudnn_type::kPointwiseMode, 1, &mode);
    Set(pw, cudnn_attr::kPointwiseMathPrec, cudnn_type::kDataType, 1, &precision);
    if (axis >= 0) SetInt(pw, cudnn_attr::kPointwiseAxis, axis);
    Finalize(pw, cudnn_desc::kPointwise);
    cudnnDescriptor op = Make(cudnn_desc::kOperationPointwise);
    SetDesc(op, cudnn_attr::kOpPointwiseDescriptor, pw);
    SetDesc(op, cudnn_attr::kOpPointwiseX, x);
    if (b != nullptr) SetDesc(op, cudnn_attr::kOpPointwiseB, b);
    SetDesc(op, cudnn_attr::kOpPointwiseY, y);
    if (t != nullptr) SetDesc(op, cudnn_attr::kOpPointwiseT, t);
    Finalize(op, cudnn_desc::kOperationPointwise);
    ops_.push_back(op);
  }
  /// c = a b over the last two dims (f32 accumulation), batch over the first two.
  void Matmul(cudnnDescriptor a, cudnnDescriptor b, cudnnDescriptor c) {
    cudnnDescriptor mm = Make(cudnn_desc::kMatmul);
    const int compute = kCudnnDataFloat;
    Set(mm, cudnn_attr::kMatmulCompType, cudnn_type::kDataType, 1, &compute);
    Finalize(mm, cudnn_desc::kMatmul);
    cudnnDescriptor op = Make(cudnn_desc::kOperationMatmul);
    SetDesc(op, cudnn_attr::kOpMatmulA, a);
    SetDesc(op, cudnn_attr::kOpMatmulB, b);
    SetDesc(op, cudnn_attr::kOpMatmulC, c);
    SetDesc(op, cudnn_attr::kOpMatmulDescriptor, mm);
    Finalize(op, cudnn_desc::kOperationMatmul);
    ops_.push_back(op);
  }
  /// y = reduce(x) over the dims where y has extent 1.
  void Reduce(int reduction, cudnnDescriptor x, cudnnDescriptor y) {
    cudnnDescriptor rd = Make(cudnn_desc::kReduction);
    const int compute = kCudnnDataFloat;
    Set(rd, cudnn_attr::kReductionOperator, cudnn_type::kReductionOperator, 1, &reduction);
    Set(rd, cudnn_attr::kReductionCompType, cudnn_type::kDataType, 1, &compute);
    Finalize(rd, cudnn_desc::kReduction);
    cudnnDescriptor op = Make(cudnn_desc::kOperationReduction);
    SetDesc(op, cudnn_attr::kOpReductionX, x);
    SetDesc(op, cudnn_attr::kOpReductionY, y);
    SetDesc(op, cudnn_attr::kOpReductionDescriptor, rd);
    Finalize(op, cudnn_desc::kOperationReduction);
    ops_.push_back(op);
  }
  /// y = x seen through y's dims and strides (a transpose).
  void Reshape(cudnnDescriptor x, cudnnDescriptor y) {
    cudnnDescriptor op = Make(cudnn_desc::kOperationReshape);
    SetDesc(op, cudnn_attr::kOpReshapeX, x);
    SetDesc(op, cudnn_attr::kOpReshapeY, y);
    Finalize(op, cudnn_desc::kOperationReshape);
    ops_.push_back(op);
  }

  const std::vector<cudnnDescriptor>& ops() const { return ops_; }
  const std::string& what() const { return what_; }

  void Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }

 private:
  void Check(cudnnStatus e, const char* call, int detail) {
    if (e == kCudnnSuccess) return;
    Fail(absl::InternalError(
        absl::StrCat(what_, ": ", call, " (", detail, ") failed with ", CudnnStatusName(dnn_, e))));
  }

  const CudnnApi& dnn_;
  std::vector<cudnnDescriptor>& owned_;
  std::string what_;
  std::vector<cudnnDescriptor> ops_;
  absl::Status status_;
  int64_t next_virtual_uid_ = 1000;
};

/// The step's [B, T, heads, D] storage as cuDNN's [B, heads, T, D].
Dims RowsOf(const SdpaShape& s, int64_t heads) { return {s.B, heads, s.T, s.D}; }
Dims RowStrides(const SdpaShape& s, int64_t heads) { return {s.T * heads * s.D, s.D, heads * s.D, 1}; }
/// The same storage transposed: [B, heads, D, T].
Dims ColsOf(const SdpaShape& s, int64_t heads) { return {s.B, heads, s.D, s.T}; }
Dims ColStrides(const SdpaShape& s, int64_t heads) { return {s.T * heads * s.D, s.D, 1, heads * s.D}; }

/// S = scale Q Kᵀ with the causal mask applied: the scores both graphs start from.
cudnnDescriptor MaskedScores(Builder& g, const SdpaShape& s, cudnnDescriptor q, cudnnDescriptor kt,
                             cudnnDescriptor scale, cudnnDescriptor neg_inf) {
  const Dims scores = {s.B, s.H, s.T, s.T};
  cudnnDescriptor raw = g.Virtual(scores);
  g.Matmul(q, kt, raw);
  cudnnDescriptor scaled = g.Virtual(scores);
  g.Pointwise(cudnn_pointwise::kMul, raw, scale, scaled);
  if (!s.causal) return scaled;
  cudnnDescriptor row = g.Virtual(scores, kCudnnDataInt32), col = g.Virtual(scores, kCudnnDataInt32);
  g.Pointwise(cudnn_pointwise::kGenIndex, scaled, nullptr, row, nullptr, /*axis=*/2);
  g.Pointwise(cudnn_pointwise::kGenIndex, scaled, nullptr, col, nullptr, /*axis=*/3);
  cudnnDescriptor visible = g.Virtual(scores, kCudnnDataBoolean);
  g.Pointwise(cudnn_pointwise::kCmpGe, row, col, visible);
  cudnnDescriptor masked = g.Virtual(scores);
  g.Pointwise(cudnn_pointwise::kBinarySelect, scaled, neg_inf, masked, visible);
  return masked;
}

void BuildForward(Builder& g, const SdpaShape& s) {
  const Dims one = {1, 1, 1, 1}, stats_dims = {s.B, s.H, s.T, 1}, scores = {s.B, s.H, s.T, s.T};
  cudnnDescriptor q = g.Tensor(kUidQ, kCudnnDataBf16, RowsOf(s, s.H), RowStrides(s, s.H), false);
  cudnnDescriptor kt = g.Tensor(kUidK, kCudnnDataBf16, ColsOf(s, s.Hkv), ColStrides(s, s.Hkv), false);
  cudnnDescriptor v = g.Tensor(kUidV, kCudnnDataBf16, RowsOf(s, s.Hkv), RowStrides(s, s.Hkv), false);
  cudnnDescriptor o = g.Tensor(kUidO, kCudnnDataBf16, RowsOf(s, s.H), RowStrides(s, s.H), false);
  cudnnDescriptor stats = g.Tensor(kUidStats, kCudnnDataFloat, stats_dims, Builder::Packed(stats_dims), false);
  cudnnDescriptor scale = g.Tensor(kUidScale, kCudnnDataFloat, one, one, false, /*by_value=*/true);
  cudnnDescriptor neg_inf = g.Tensor(kUidNegInf, kCudnnDataFloat, one, one, false, /*by_value=*/true);

  cudnnDescriptor masked = MaskedScores(g, s, q, kt, scale, neg_inf);
  cudnnDescriptor m = g.Virtual(stats_dims);
  g.Reduce(kCudnnReduceMax, masked, m);
  cudnnDescriptor shifted = g.Virtual(scores), e = g.Virtual(scores);
  g.Pointwise(cudnn_pointwise::kSub, masked, m, shifted);
  g.Pointwise(cudnn_pointwise::kExp, shifted, nullptr, e);
  cudnnDescriptor l = g.Virtual(stats_dims), log_l = g.Virtual(stats_dims);
  g.Reduce(kCudnnReduceAdd, e, l);
  g.Pointwise(cudnn_pointwise::kLog, l, nullptr, log_l);
  g.Pointwise(cudnn_pointwise::kAdd, m, log_l, stats);
  cudnnDescriptor p = g.Virtual(scores);
  g.Pointwise(cudnn_pointwise::kDiv, e, l, p);
  g.Matmul(p, v, o);
}

void BuildBackward(Builder& g, const SdpaShape& s) {
  if (s.H != s.Hkv) {
    // dK and dV would sum over each kv head's query heads: a reduction across heads this
    // graph does not express yet.
    g.Fail(absl::FailedPreconditionError(absl::StrCat(g.what(), ": the cuDNN backward here runs H == Hkv only")));
    return;
  }
  const Dims one = {1, 1, 1, 1}, stats_dims = {s.B, s.H, s.T, 1}, scores = {s.B, s.H, s.T, s.T};
  const Dims rows = RowsOf(s, s.H), row_strides = RowStrides(s, s.H);
  cudnnDescriptor q = g.Tensor(kUidQ, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor k = g.Tensor(kUidK, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor v = g.Tensor(kUidV, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor o = g.Tensor(kUidO, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor d_o = g.Tensor(kUidDO, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor stats = g.Tensor(kUidStats, kCudnnDataFloat, stats_dims, Builder::Packed(stats_dims), false);
  cudnnDescriptor row_sum = g.Tensor(kUidRowSum, kCudnnDataFloat, stats_dims, Builder::Packed(stats_dims), false);
  cudnnDescriptor scale = g.Tensor(kUidScale, kCudnnDataFloat, one, one, false, /*by_value=*/true);
  cudnnDescriptor neg_inf = g.Tensor(kUidNegInf, kCudnnDataFloat, one, one, false, /*by_value=*/true);
  // Kᵀ and Vᵀ: K and V read untransposed by dQ = dS K, so each is one tensor and a transposed
  // view of it (a uid names one tensor of the graph).
  const Dims cols = ColsOf(s, s.H), col_view = {s.H * s.D * s.T, s.D * s.T, 1, s.D};
  cudnnDescriptor kt = g.Tensor(0, kCudnnDataBf16, cols, col_view, true);
  g.Reshape(k, kt);
  cudnnDescriptor vt = g.Tensor(0, kCudnnDataBf16, cols, col_view, true);
  g.Reshape(v, vt);
  cudnnDescriptor dq = g.Tensor(kUidDQ, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor dk = g.Tensor(kUidDK, kCudnnDataBf16, rows, row_strides, false);
  cudnnDescriptor dv = g.Tensor(kUidDV, kCudnnDataBf16, rows, row_strides, false);

  // r = rowsum(dO * O): the softmax backward's per-row correction.
  cudnnDescriptor d_o_o = g.Virtual(rows);
  g.Pointwise(cudnn_pointwise::kMul, d_o, o, d_o_o);
  g.Reduce(kCudnnReduceAdd, d_o_o, row_sum);
  // P from the forward's stats.
  cudnnDescriptor masked = MaskedScores(g, s, q, kt, scale, neg_inf);
  cudnnDescriptor shifted = g.Virtual(scores), p = g.Virtual(scores);
  g.Pointwise(cudnn_pointwise::kSub, masked, stats, shifted);
  g.Pointwise(cudnn_pointwise::kExp, shifted, nullptr, p);
  // dV = Pᵀ dO.
  cudnnDescriptor pt = g.Tensor(0, kCudnnDataFloat, scores, {s.H * s.T * s.T, s.T * s.T, 1, s.T}, true);
  g.Reshape(p, pt);
  g.Matmul(pt, d_o, dv);
  // dS = P (dO Vᵀ - r) scale.
  cudnnDescriptor dp = g.Virtual(scores), centred = g.Virtual(scores), ds_raw = g.Virtual(scores),
                  ds = g.Virtual(scores);
  g.Matmul(d_o, vt, dp);
  g.Pointwise(cudnn_pointwise::kSub, dp, row_sum, centred);
  g.Pointwise(cudnn_pointwise::kMul, p, centred, ds_raw);
  g.Pointwise(cudnn_pointwise::kMul, ds_raw, scale, ds);
  // dQ = dS K; dK = dSᵀ Q.
  g.Matmul(ds, k, dq);
  cudnnDescriptor dst = g.Tensor(0, kCudnnDataFloat, scores, {s.H * s.T * s.T, s.T * s.T, 1, s.T}, true);
  g.Reshape(ds, dst);
  g.Matmul(dst, q, dk);
}

}  // namespace

bool SdpaShape::operator<(const SdpaShape& o) const {
  return std::tie(backward, B, T, H, Hkv, D, causal, scale) <
         std::tie(o.backward, o.B, o.T, o.H, o.Hkv, o.D, o.causal, o.scale);
}

std::string SdpaShape::ToString() const {
  return absl::StrCat(backward ? "sdpa_bwd" : "sdpa_fwd", " [B=", B, ", T=", T, ", H=", H, ", Hkv=", Hkv, ", D=", D,
                      causal ? ", causal" : "", "]");
}

SdpaGraph::~SdpaGraph() {
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) dnn_.BackendDestroyDescriptor(*it);
}

absl::StatusOr<std::unique_ptr<SdpaGraph>> SdpaGraph::Build(const CudnnApi& dnn, cudnnHandle handle,
                                                            const SdpaShape& shape) {
  auto graph = std::unique_ptr<SdpaGraph>(new SdpaGraph(dnn));
  graph->shape_ = shape;
  Builder g(dnn, graph->owned_, absl::StrCat("cuDNN ", shape.ToString()));
  if (shape.backward) {
    BuildBackward(g, shape);
  } else {
    BuildForward(g, shape);
  }
  // 1. the operation graph over the ops, on this handle;
  cudnnDescriptor op_graph = g.Make(cudnn_desc::kOperationGraph);
  g.Set(op_graph, cudnn_attr::kGraphOps, cudnn_type::kBackendDescriptor, static_cast<int64_t>(g.ops().size()),
        g.ops().data());
  g.Set(op_graph, cudnn_attr::kGraphHandle, cudnn_type::kHandle, 1, &handle);
  g.Finalize(op_graph, cudnn_desc::kOperationGraph);
  // 2. the heuristic's engine configurations, best first;
  cudnnDescriptor heur = g.Make(cudnn_desc::kEngineHeur);
  g.SetDesc(heur, cudnn_attr::kEngineHeurOperationGraph, op_graph);
  const int mode = kCudnnHeurModeA;
  g.Set(heur, cudnn_attr::kEngineHeurMode, cudnn_type::kHeurMode, 1, &mode);
  g.Finalize(heur, cudnn_desc::kEngineHeur);
  if (!g.status().ok()) return g.status();
  constexpr int kConfigs = 8;
  std::array<cudnnDescriptor, kConfigs> configs{};
  for (cudnnDescriptor& c : configs) c = g.Make(cudnn_desc::kEngineCfg);
  int64_t returned = 0;
  if (!g.status().ok()) return g.status();
  if (cudnnStatus e = dnn.BackendGetAttribute(heur, cudnn_attr::kEngineHeurResults, cudnn_type::kBackendDescriptor,
                                              kConfigs, &returned, configs.data());
      e != kCudnnSuccess) {
    return absl::InternalError(absl::StrCat(g.what(), ": the engine heuristic failed with ", CudnnStatusName(dnn, e)));
  }
  // 3. the first configuration whose plan finalizes on this GPU.
  std::string tried;
  for (int64_t i = 0; i < returned; ++i) {
    cudnnDescriptor plan = nullptr;
    if (dnn.BackendCreateDescriptor(cudnn_desc::kExecutionPlan, &plan) != kCudnnSuccess) continue;
    dnn.BackendSetAttribute(plan, cudnn_attr::kPlanHandle, cudnn_type::kHandle, 1, &handle);
    dnn.BackendSetAttribute(plan, cudnn_attr::kPlanEngineConfig, cudnn_type::kBackendDescriptor, 1, &configs[i]);
    if (cudnnStatus e = dnn.BackendFinalize(plan); e != kCudnnSuccess) {
      absl::StrAppend(&tried, tried.empty() ? "" : ", ", CudnnStatusName(dnn, e));
      dnn.BackendDestroyDescriptor(plan);
      continue;
    }
    graph->owned_.push_back(plan);
    graph->plan_ = plan;
    int64_t count = 0;
    dnn.BackendGetAttribute(plan, cudnn_attr::kPlanWorkspaceSize, cudnn_type::kInt64, 1, &count,
                            &graph->workspace_bytes_);
    return graph;
  }
  return absl::FailedPreconditionError(absl::StrCat(g.what(), ": cuDNN has no engine for this graph (", returned,
                                                    " configurations", tried.empty() ? "" : ": ", tried, ")"));
}

}  // namespace gpt_sft::runtime::device::cuda
