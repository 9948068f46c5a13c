// The cuda driver's sdpa builtins (runtime/device/SDPA_BUILTIN.md) on cuDNN: one CudnnSdpa
// per device, made at the first sdpa launch a command buffer records. It owns the cuDNN
// handle, the execution plans by shape (cudnn_sdpa_graph.h; each built once, with its
// workspace allocated once from cuDNN's query), the bf16 staging scratch f32 buffers go
// through, and the conversion kernels (bf16_convert_ptx.h).
//
// Record builds (or finds) the plan at record time; the command it returns only launches the
// conversions and calls cudnnBackendExecute on the step's stream, so it is captured into the
// step's CUDA graph like any kernel.
#ifndef GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_H_
#define GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/cuda/cuda_api.h"
#include "runtime/device/cuda/cudnn_api.h"
#include "runtime/device/cuda/cudnn_sdpa_graph.h"
#include "runtime/device/sdpa_builtin.h"

namespace gpt_sft::runtime::device::cuda {

class CudnnSdpa;

/// One recorded sdpa launch. Owned by the command buffer that recorded it; the CudnnSdpa that
/// made it must outlive it (the device does).
class SdpaCommand {
 public:
  ~SdpaCommand();
  /// Conversions in, cuDNN, conversions out, on `stream`; kSdpaFailed when cuDNN refuses
  /// (LastError says why), else the driver's code of the first launch that failed.
  CUresult Enqueue(CUstream stream);
  std::string LastError() const;

  /// Outside the driver's codes (and the gemm's), so the loop can tell a cuDNN failure apart.
  static constexpr CUresult kSdpaFailed = -1001;

 private:
  friend class CudnnSdpa;
  /// One conversion launch; params point into the object itself, so it is never copied.
  struct Conversion {
    Conversion() = default;
    Conversion(const Conversion&) = delete;
    Conversion& operator=(const Conversion&) = delete;
    CUfunction function = nullptr;
    CUdeviceptr src = 0, dst = 0;
    uint64_t n = 0;
    void* params[3] = {&src, &dst, &n};
  };
  absl::Status BindVariantPack();

  CudnnSdpa* engine_ = nullptr;
  const SdpaGraph* graph_ = nullptr;
  std::vector<std::unique_ptr<Conversion>> in_, out_;
  std::vector<std::pair<int64_t, CUdeviceptr>> device_tensors_;  // uid -> address
  int64_t scratch_bytes_ = 0;  // staging this call needs, bound at its first Enqueue
  std::vector<std::pair<int64_t, int64_t>> staged_;  // uid -> offset in the staging scratch
  float scale_ = 0, neg_inf_ = 0;
  cudnnDescriptor pack_ = nullptr;
  cudnnStatus last_ = kCudnnSuccess;
  std::string error_;
};

class CudnnSdpa {
 public:
  /// cuDNN loaded and a handle made; FailedPrecondition naming --attention=generated where the
  /// library is missing.
  static absl::StatusOr<std::unique_ptr<CudnnSdpa>> Create(const CudaApi& cu);
  ~CudnnSdpa();

  absl::StatusOr<std::unique_ptr<SdpaCommand>> Record(const SdpaCall& call, std::string_view label);

 private:
  friend class SdpaCommand;
  CudnnSdpa(const CudaApi& cu, const CudnnApi& dnn) : cu_(cu), dnn_(dnn) {}
  absl::StatusOr<const SdpaGraph*> PlanFor(const SdpaShape& shape);
  absl::Status LoadConversions();
  /// Staging scratch of at least `bytes` (a larger one replaces the current for later
  /// commands; earlier ones keep theirs alive here).
  absl::StatusOr<CUdeviceptr> Scratch(int64_t bytes);

  const CudaApi& cu_;
  const CudnnApi& dnn_;
  cudnnHandle handle_ = nullptr;
  CUmodule conversions_ = nullptr;
  CUfunction to_bf16_ = nullptr, to_f32_ = nullptr;
  struct Plan {
    std::unique_ptr<SdpaGraph> graph;
    CUdeviceptr workspace = 0;
  };
  std::map<SdpaShape, Plan> plans_;
  std::vector<std::pair<CUdeviceptr, int64_t>> scratch_;  // every staging buffer made, last the largest
};

}  // namespace gpt_sft::runtime::device::cuda

#endif  // GPT_SFT_RUNTIME_DEVICE_CUDA_CUDNN_SDPA_H_
