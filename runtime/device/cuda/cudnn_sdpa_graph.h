// cuDNN's fused scaled-dot-product attention as backend (graph API) descriptors: the forward
// and backward operation graphs of one shape, finalized into an execution plan with the first
// engine configuration cuDNN's heuristic (mode A) offers that finalizes, and the workspace
// that plan asks for. Built once per shape and kept by the driver (cudnn_sdpa.h); executing
// one only takes a variant pack of device pointers.
//
// Tensors are described in cuDNN's [B, H, T, D] order over the step's [B, T, H, D] storage
// (strides, no copies); every tensor cuDNN reads or writes is bf16 except the stats (lse),
// f32 [B, H, T, 1]. Uids of the variant pack: SdpaUid.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_GRAPH_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/cuda/cudnn_api.h"

namespace gpt_sft::runtime::device::cuda {

/// The key of a cached plan: one per (direction, shape, scale).
struct SdpaShape {
  bool backward = false;
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  bool causal = true;
  float scale = 0;

  bool operator<(const SdpaShape& o) const;
  /// "sdpa_fwd [B=4, T=2048, H=10, Hkv=10, D=128]".
  std::string ToString() const;
};

/// Unique ids of the tensors a variant pack binds. Scale and -inf are by-value scalars (host
/// pointers); kRowSum is device scratch the backward writes and reads (rowsum(dO * O)).
enum SdpaUid : int64_t {
  kUidQ = 1, kUidK, kUidV, kUidO, kUidStats, kUidScale, kUidNegInf, kUidDO, kUidDQ, kUidDK, kUidDV, kUidRowSum,
};

/// A finalized execution plan and the descriptors it was built from (all destroyed with it).
class SdpaGraph {
 public:
  ~SdpaGraph();
  SdpaGraph(const SdpaGraph&) = delete;
  SdpaGraph& operator=(const SdpaGraph&) = delete;

  /// FailedPrecondition naming the shape when cuDNN has no engine for it (so the way out, the
  /// generated kernels, can be named by the caller); Internal for a call that fails otherwise.
  static absl::StatusOr<std::unique_ptr<SdpaGraph>> Build(const CudnnApi& dnn, cudnnHandle handle,
                                                          const SdpaShape& shape);

  cudnnDescriptor plan() const { return plan_; }
  int64_t workspace_bytes() const { return workspace_bytes_; }
  const SdpaShape& shape() const { return shape_; }

 private:
  explicit SdpaGraph(const CudnnApi& dnn) : dnn_(dnn) {}

  const CudnnApi& dnn_;
  SdpaShape shape_;
  std::vector<cudnnDescriptor> owned_;  // destroyed in reverse order
  cudnnDescriptor plan_ = nullptr;
  int64_t workspace_bytes_ = 0;
};

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_GRAPH_H_
