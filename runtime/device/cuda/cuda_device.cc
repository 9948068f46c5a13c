// Implements the cuda driver: discovery, buffers, PTX modules, command buffers replayed as
// CUDA graphs, markers and the profile.
#include "runtime/device/cuda/cuda_device.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/device/cuda/cublaslt_api.h"
#include "runtime/device/cuda/cuda_api.h"
#include "runtime/device/cuda/cudnn_sdpa.h"
#include "runtime/device/gemm_builtin.h"
#include "runtime/device/sdpa_builtin.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

absl::Status CuError(const CudaApi& cu, CUresult code, std::string_view call, std::string_view what) {
  constexpr CUresult kOutOfMemory = 2;
  return absl::Status(code == kOutOfMemory ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal,
                      absl::StrCat(std::string(what), ": ", std::string(call), " failed with ", CuErrorName(cu, code)));
}

int Attribute(const CudaApi& cu, CUdevice d, CUdevice_attribute a) {
  int value = 0;
  cu.DeviceGetAttribute(&value, a, d);
  return value;
}

/// "NVIDIA H200 (sm_90, 132 SMs, 140 GiB)".
std::string Describe(const CudaApi& cu, CUdevice d) {
  char name[256] = {};
  cu.DeviceGetName(name, sizeof(name) - 1, d);
  size_t total = 0;
  cu.DeviceTotalMem(&total, d);
  return absl::StrFormat("%s (sm_%d%d, %d SMs, %.0f GiB)", name, Attribute(cu, d, kAttrComputeCapabilityMajor),
                         Attribute(cu, d, kAttrComputeCapabilityMinor), Attribute(cu, d, kAttrMultiprocessorCount),
                         static_cast<double>(total) / (1 << 30));
}

/// The driver loaded and started, with the number of devices; or why not.
absl::StatusOr<std::pair<const CudaApi*, int>> Start() {
  absl::StatusOr<const CudaApi*> cu = CudaApi::Get();
  if (!cu.ok()) return cu.status();
  if (CUresult e = (*cu)->Init(0); e != kCudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("the NVIDIA driver does not start: cuInit failed with ", CuErrorName(**cu, e),
                     " (no usable GPU, or the driver is a stub)"));
  }
  int count = 0;
  if (CUresult e = (*cu)->DeviceGetCount(&count); e != kCudaSuccess || count == 0) {
    return absl::NotFoundError("the NVIDIA driver sees no GPU");
  }
  return std::make_pair(*cu, count);
}

class CuBuffer : public Buffer {
 public:
  CuBuffer(const CudaApi* cu, CUdeviceptr ptr, int64_t bytes) : Buffer(bytes), cu_(cu), ptr_(ptr) {}
  ~CuBuffer() override { cu_->MemFree(ptr_); }
  void* host_pointer() const override { return nullptr; }
  uint64_t device_address() const override { return ptr_; }
  CUdeviceptr ptr() const { return ptr_; }

 private:
  const CudaApi* cu_;
  CUdeviceptr ptr_;
};

class CuKernel : public Kernel {
 public:
  CuKernel(std::string symbol, CUfunction function) : symbol_(std::move(symbol)), function_(function) {}
  const std::string& symbol() const override { return symbol_; }
  CUfunction function() const { return function_; }

 private:
  std::string symbol_;
  CUfunction function_;
};

class CuModule : public Module {
 public:
  CuModule(const CudaApi* cu, std::string name, CUmodule module) : cu_(cu), name_(std::move(name)), module_(module) {}
  ~CuModule() override {
    kernels_.clear();
    cu_->ModuleUnload(module_);
  }
  absl::StatusOr<Kernel*> FindKernel(std::string_view symbol) override {
    const std::string key(symbol);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second.get();
    CUfunction function = nullptr;
    if (CUresult e = cu_->ModuleGetFunction(&function, module_, key.c_str()); e != kCudaSuccess) {
      return absl::NotFoundError(
          absl::StrCat("module '", name_, "' has no kernel '", key, "' (", CuErrorName(*cu_, e), ")"));
    }
    auto kernel = std::make_unique<CuKernel>(key, function);
    Kernel* out = kernel.get();
    kernels_.emplace(key, std::move(kernel));
    return out;
  }

 private:
  const CudaApi* cu_;
  std::string name_;
  CUmodule module_;
  std::map<std::string, std::unique_ptr<CuKernel>> kernels_;
};

/// cuBLASLt for the gemm builtin: one handle and one workspace per device, made at the first
/// gemm a command buffer records.
struct BlasContext {
  const CublasLtApi* lt = nullptr;
  cublasLtHandle handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspace_bytes = 0;
};

absl::Status BlasError(const CublasLtApi& lt, cublasStatus status, std::string_view call, std::string_view what) {
  return absl::InternalError(absl::StrCat(std::string(what), ": ", std::string(call), " failed with ",
                                          CublasStatusName(lt, status)));
}

/// One recorded gemm: its descriptors and the algorithm cuBLASLt's heuristic chose, made once
/// at record time; Enqueue only calls cublasLtMatmul.
class GemmPlan {
 public:
  ~GemmPlan() {
    if (lt_ == nullptr) return;
    for (cublasLtMatrixLayout l : {a_, b_, c_}) {
      if (l != nullptr) lt_->MatrixLayoutDestroy(l);
    }
    if (desc_ != nullptr) lt_->MatmulDescDestroy(desc_);
  }

  static absl::StatusOr<std::unique_ptr<GemmPlan>> Create(const BlasContext& blas, const GemmCall& call,
                                                          std::string_view label) {
    auto plan = std::unique_ptr<GemmPlan>(new GemmPlan());
    const CublasLtApi& lt = *blas.lt;
    plan->lt_ = &lt;
    plan->blas_ = blas;
    plan->alpha_ = static_cast<float>(call.alpha);
    plan->beta_ = static_cast<float>(call.beta);
    plan->a_ptr_ = CuDeviceAddress(call.b);  // cuBLAS's A is our B (gemm_builtin.h)
    plan->b_ptr_ = CuDeviceAddress(call.a);
    plan->c_in_ptr_ = call.beta != 0 ? CuDeviceAddress(call.c_in) : CuDeviceAddress(call.c);
    plan->c_ptr_ = CuDeviceAddress(call.c);
    const ColumnMajorGemm cm = ToColumnMajor(call);
    const std::string what = absl::StrCat(std::string(label), " (cuBLASLt ", call.batch > 1 ? absl::StrCat(call.batch, " x ") : "",
                                          call.M, "x", call.N, "x", call.K, ")");
    // Exact fp32 products (no TF32), so the f32 step matches the interpreter as the generated
    // gemm does; TF32 tensor cores where every input is a bf16 value held in f32 (exact for
    // them); bf16 operands (gemm.bf16) on the bf16 tensor cores, accumulated in fp32.
    const int compute =
        call.inputs_bf16 && !call.ab_stored_bf16 ? kCublasCompute32FFastTf32 : kCublasCompute32F;
    const int operand_type = call.ab_stored_bf16 ? kCudaR16BF : kCudaR32F;
    if (cublasStatus e = lt.MatmulDescCreate(&plan->desc_, compute, kCudaR32F); e != kCublasSuccess) {
      return BlasError(lt, e, "cublasLtMatmulDescCreate", what);
    }
    lt.MatmulDescSetAttribute(plan->desc_, kMatmulDescTransA, &cm.op_a, sizeof(cm.op_a));
    lt.MatmulDescSetAttribute(plan->desc_, kMatmulDescTransB, &cm.op_b, sizeof(cm.op_b));
    struct {
      cublasLtMatrixLayout* layout;
      int type;
      int64_t rows, cols, ld;
    } layouts[] = {{&plan->a_, operand_type, cm.a_rows, cm.a_cols, cm.a_ld},
                   {&plan->b_, operand_type, cm.b_rows, cm.b_cols, cm.b_ld},
                   {&plan->c_, kCudaR32F, cm.c_rows, cm.c_cols, cm.c_ld}};
    for (auto& l : layouts) {
      if (cublasStatus e = lt.MatrixLayoutCreate(l.layout, l.type, static_cast<uint64_t>(l.rows),
                                                 static_cast<uint64_t>(l.cols), l.ld);
          e != kCublasSuccess) {
        return BlasError(lt, e, "cublasLtMatrixLayoutCreate", what);
      }
      // A batch: every operand holds `batch` matrices back to back (gemm_batched.f32).
      if (call.batch > 1) {
        const int32_t count = static_cast<int32_t>(call.batch);
        const int64_t stride = l.rows * l.cols;
        for (auto [attribute, value, bytes] : {std::tuple{kMatrixLayoutBatchCount, static_cast<const void*>(&count),
                                                          sizeof(count)},
                                               std::tuple{kMatrixLayoutStridedBatchOffset,
                                                          static_cast<const void*>(&stride), sizeof(stride)}}) {
          if (cublasStatus e = lt.MatrixLayoutSetAttribute(*l.layout, attribute, value, bytes); e != kCublasSuccess) {
            return BlasError(lt, e, "cublasLtMatrixLayoutSetAttribute", what);
          }
        }
      }
    }
    cublasLtMatmulPreference preference = nullptr;
    if (cublasStatus e = lt.MatmulPreferenceCreate(&preference); e != kCublasSuccess) {
      return BlasError(lt, e, "cublasLtMatmulPreferenceCreate", what);
    }
    const uint64_t max_workspace = blas.workspace_bytes;
    lt.MatmulPreferenceSetAttribute(preference, kMatmulPrefMaxWorkspaceBytes, &max_workspace, sizeof(max_workspace));
    CublasLtHeuristic found{};
    int count = 0;
    cublasStatus e = lt.MatmulAlgoGetHeuristic(blas.handle, plan->desc_, plan->a_, plan->b_, plan->c_, plan->c_,
                                               preference, 1, &found, &count);
    lt.MatmulPreferenceDestroy(preference);
    if (e != kCublasSuccess) return BlasError(lt, e, "cublasLtMatmulAlgoGetHeuristic", what);
    if (count == 0) return absl::InternalError(absl::StrCat(what, ": cuBLASLt has no algorithm for this gemm"));
    plan->algo_ = found.algo;
    return plan;
  }

  /// Maps cublasStatus onto the CUresult the command loop expects (the status is kept for the message).
  CUresult Enqueue(CUstream stream) {
    last_ = lt_->Matmul(blas_.handle, desc_, &alpha_, reinterpret_cast<const void*>(a_ptr_), a_,
                        reinterpret_cast<const void*>(b_ptr_), b_, &beta_, reinterpret_cast<const void*>(c_in_ptr_), c_,
                        reinterpret_cast<void*>(c_ptr_), c_, &algo_, reinterpret_cast<void*>(blas_.workspace),
                        blas_.workspace_bytes, stream);
    return last_ == kCublasSuccess ? kCudaSuccess : kGemmFailed;
  }
  std::string LastError() const { return CublasStatusName(*lt_, last_); }

  /// Outside the driver's codes, so the loop can tell a cuBLASLt failure apart.
  static constexpr CUresult kGemmFailed = -1000;

 private:
  GemmPlan() = default;
  static CUdeviceptr CuDeviceAddress(const BufferRange& r);

  const CublasLtApi* lt_ = nullptr;
  BlasContext blas_;
  cublasLtMatmulDesc desc_ = nullptr;
  cublasLtMatrixLayout a_ = nullptr, b_ = nullptr, c_ = nullptr;
  CublasLtAlgo algo_{};
  float alpha_ = 1, beta_ = 0;
  CUdeviceptr a_ptr_ = 0, b_ptr_ = 0, c_in_ptr_ = 0, c_ptr_ = 0;
  cublasStatus last_ = kCublasSuccess;
};

/// One recorded command: enqueue on a stream, or a host call.
struct CuCommand {
  std::string label;
  std::function<CUresult(CUstream)> enqueue;  // null for a host call
  std::function<absl::Status()> host_call;
  GemmPlan* gemm = nullptr;  // a gemm builtin's plan, which knows why it failed
  SdpaCommand* sdpa = nullptr;  // an sdpa builtin's command, which knows why it failed
};

class CuDevice;

class CuCommandBuffer : public CommandBuffer {
 public:
  CuCommandBuffer(CuDevice* device, const CudaApi* cu) : device_(device), cu_(cu) {}
  ~CuCommandBuffer() override {
    if (exec_ != nullptr) cu_->GraphExecDestroy(exec_);
  }

  absl::Status AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                         std::string_view label) override;
  absl::Status AddCopy(BufferRange dst, BufferRange src, std::string_view label) override;
  absl::Status AddFill(BufferRange dst, uint32_t pattern, std::string_view label) override;
  absl::Status AddBuiltin(std::string_view name, absl::Span<const KernelArg> args, std::string_view label) override;
  absl::Status AddHostCall(std::function<absl::Status()> call, std::string_view label) override {
    commands_.push_back({std::string(label), nullptr, std::move(call)});
    has_host_calls_ = true;
    return absl::OkStatus();
  }
  int64_t size() const override { return static_cast<int64_t>(commands_.size()); }

  const std::vector<CuCommand>& commands() const { return commands_; }
  bool has_host_calls() const { return has_host_calls_; }
  CUgraphExec& exec() { return exec_; }
  int64_t& submissions() { return submissions_; }

 private:
  CuDevice* device_;
  const CudaApi* cu_;
  std::vector<CuCommand> commands_;
  // Each launch's argument values and the pointers cuLaunchKernel reads them through; deques
  // keep both where they are as launches are added.
  std::deque<std::vector<uint64_t>> arg_values_;
  std::deque<std::vector<void*>> arg_pointers_;
  std::deque<std::unique_ptr<GemmPlan>> gemm_plans_;
  std::deque<std::unique_ptr<SdpaCommand>> sdpa_commands_;
  bool has_host_calls_ = false;
  CUgraphExec exec_ = nullptr;
  int64_t submissions_ = 0;
};

class CuMarker : public Marker {
 public:
  CuMarker(const CudaApi* cu, CUevent event) : cu_(cu), event(event) {}
  ~CuMarker() override { cu_->EventDestroy(event); }
  const CudaApi* cu_;
  CUevent event;
};

class CuDevice : public Device {
 public:
  CuDevice(const CudaApi* cu, CUdevice device, CUcontext context, CUstream stream, std::string description,
           bool profile)
      : cu_(cu), device_(device), context_(context), stream_(stream), description_(std::move(description)),
        profile_(profile) {
    limits_.max_workgroup_size = Attribute(*cu, device, kAttrMaxThreadsPerBlock);
    for (int d = 0; d < 3; ++d) limits_.max_workgroup_dims[d] = Attribute(*cu, device, kAttrMaxBlockDimX + d);
    limits_.max_workgroup_memory_bytes = Attribute(*cu, device, kAttrMaxSharedMemoryPerBlock);
    size_t total = 0;
    cu->DeviceTotalMem(&total, device);
    limits_.total_memory_bytes = static_cast<int64_t>(total);
    limits_.max_allocation_bytes = static_cast<int64_t>(total);
    limits_.buffer_alignment = 256;  // cuMemAlloc's; the compiler plans GPU buffers on 256 bytes
    limits_.compute_units = Attribute(*cu, device, kAttrMultiprocessorCount);
  }
  ~CuDevice() override {
    cu_->StreamSynchronize(stream_);
    ReleasePending();
    sdpa_.reset();
    if (blas_.handle != nullptr) blas_.lt->Destroy(blas_.handle);
    if (blas_.workspace != 0) cu_->MemFree(blas_.workspace);
    cu_->StreamDestroy(stream_);
    cu_->DevicePrimaryCtxRelease(device_);
  }

  std::string driver() const override { return "cuda"; }
  std::string name() const override { return "cuda: " + description_; }
  const DeviceLimits& limits() const override { return limits_; }
  const CudaApi& cu() const { return *cu_; }

  /// cuBLASLt, started at the first call: FailedPrecondition when it cannot be loaded.
  absl::StatusOr<const BlasContext*> Blas() {
    if (!blas_status_.ok()) return blas_status_;
    if (blas_.handle != nullptr) return &blas_;
    absl::StatusOr<const CublasLtApi*> lt = CublasLtApi::Get();
    if (!lt.ok()) return blas_status_ = lt.status();
    if (cublasStatus e = (*lt)->Create(&blas_.handle); e != kCublasSuccess) {
      blas_.handle = nullptr;
      return blas_status_ = BlasError(**lt, e, "cublasLtCreate", "cuda");
    }
    blas_.lt = *lt;
    // 32 MiB: what cuBLAS recommends for Hopper's split-K and stream-K kernels.
    blas_.workspace_bytes = size_t{32} << 20;
    if (CUresult e = cu_->MemAlloc(&blas_.workspace, blas_.workspace_bytes); e != kCudaSuccess) {
      blas_.workspace = 0;
      return blas_status_ = CuError(*cu_, e, "cuMemAlloc", "the cuBLASLt workspace");
    }
    return &blas_;
  }

  /// cuDNN for the sdpa builtins, started at the first call: FailedPrecondition naming
  /// --attention=generated when it cannot be loaded.
  absl::StatusOr<CudnnSdpa*> Sdpa() {
    if (!sdpa_status_.ok()) return sdpa_status_;
    if (sdpa_ != nullptr) return sdpa_.get();
    absl::StatusOr<std::unique_ptr<CudnnSdpa>> sdpa = CudnnSdpa::Create(*cu_);
    if (!sdpa.ok()) return sdpa_status_ = sdpa.status();
    sdpa_ = *std::move(sdpa);
    return sdpa_.get();
  }

  absl::StatusOr<std::unique_ptr<Buffer>> Allocate(int64_t bytes) override {
    size_t free = 0, total = 0;
    cu_->MemGetInfo(&free, &total);
    CUdeviceptr ptr = 0;
    if (CUresult e = cu_->MemAlloc(&ptr, static_cast<size_t>(std::max<int64_t>(bytes, 1))); e != kCudaSuccess) {
      return absl::ResourceExhaustedError(absl::StrCat("cuda: allocating ", bytes, " bytes failed with ",
                                                       CuErrorName(*cu_, e), " (", free, " bytes free of ", total,
                                                       ")"));
    }
    return std::unique_ptr<Buffer>(new CuBuffer(cu_, ptr, bytes));
  }

  absl::StatusOr<std::unique_ptr<Buffer>> WrapHostMemory(void*, int64_t) override {
    return absl::UnimplementedError("the cuda driver keeps its buffers in device memory");
  }

  absl::Status Upload(BufferRange dst, const void* src) override {
    if (absl::Status s = CheckRange(dst, "upload"); !s.ok()) return s;
    if (absl::Status s = Synchronize(); !s.ok()) return s;
    if (CUresult e = cu_->MemcpyHtoD(Address(dst), src, dst.bytes); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuMemcpyHtoD", "upload");
    }
    return absl::OkStatus();
  }

  absl::Status Download(void* dst, BufferRange src) override {
    if (absl::Status s = CheckRange(src, "download"); !s.ok()) return s;
    if (absl::Status s = Synchronize(); !s.ok()) return s;
    if (CUresult e = cu_->MemcpyDtoH(dst, Address(src), src.bytes); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuMemcpyDtoH", "download");
    }
    return absl::OkStatus();
  }

  absl::Status Discard(Buffer&) override { return absl::OkStatus(); }

  absl::StatusOr<std::unique_ptr<Module>> LoadModule(ModuleFormat format, std::string_view bytes,
                                                     std::string_view name) override {
    if (format != ModuleFormat::kPtx && format != ModuleFormat::kCudaFatbin) {
      return absl::UnimplementedError(absl::StrCat("the cuda driver loads PTX and CUDA fat binaries, not ",
                                                   artifact::ModuleFormatName(format), " (module '", std::string(name),
                                                   "')"));
    }
    // A copy: NUL-terminated as cuModuleLoadDataEx reads PTX text, and malloc-aligned as it
    // reads a fat binary's header (the driver runs its SASS here, or JIT-compiles its PTX).
    const std::string image(bytes);
    std::string log(16384, '\0');
    CUjit_option options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule module = nullptr;
    if (CUresult e = cu_->ModuleLoadDataEx(&module, image.data(), 2, options, values); e != kCudaSuccess) {
      log.resize(std::strlen(log.c_str()));
      return absl::InvalidArgumentError(absl::StrCat("module '", std::string(name), "' does not load on ",
                                                     description_, " (", CuErrorName(*cu_, e), "); JIT log:\n", log));
    }
    return std::unique_ptr<Module>(new CuModule(cu_, std::string(name), module));
  }

  absl::StatusOr<std::unique_ptr<CommandBuffer>> CreateCommandBuffer() override {
    return std::unique_ptr<CommandBuffer>(new CuCommandBuffer(this, cu_));
  }

  absl::Status Submit(CommandBuffer& commands) override {
    auto& cb = static_cast<CuCommandBuffer&>(commands);
    // The first submission runs the commands as they are (a failure names its command); the
    // second captures them into a graph, replayed from then on.
    const bool graph = !profile_ && !cb.has_host_calls() && cb.size() > 0 && cb.submissions() >= 1;
    ++cb.submissions();
    if (graph && cb.exec() == nullptr) {
      if (absl::Status s = Capture(cb); !s.ok()) return s;
    }
    if (cb.exec() != nullptr) {
      if (CUresult e = cu_->GraphLaunch(cb.exec(), stream_); e != kCudaSuccess) {
        return CuError(*cu_, e, "cuGraphLaunch", "the step's graph");
      }
      return absl::OkStatus();
    }
    for (const CuCommand& c : cb.commands()) {
      if (c.enqueue == nullptr) {
        if (absl::Status s = Synchronize(); !s.ok()) return s;
        if (absl::Status s = c.host_call(); !s.ok()) return absl::Status(s.code(), absl::StrCat(c.label, ": ", s.message()));
        continue;
      }
      if (absl::Status s = Enqueue(c); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status Synchronize() override {
    if (CUresult e = cu_->StreamSynchronize(stream_); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuStreamSynchronize", "synchronize (a kernel before it failed)");
    }
    AccountPending();
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Marker>> RecordMarker() override {
    CUevent event = nullptr;
    if (CUresult e = cu_->EventCreate(&event, kEventDefault); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuEventCreate", "marker");
    }
    if (CUresult e = cu_->EventRecord(event, stream_); e != kCudaSuccess) {
      cu_->EventDestroy(event);
      return CuError(*cu_, e, "cuEventRecord", "marker");
    }
    return std::unique_ptr<Marker>(new CuMarker(cu_, event));
  }

  absl::StatusOr<double> ElapsedSeconds(const Marker& start, const Marker& end) override {
    CUevent a = static_cast<const CuMarker&>(start).event, b = static_cast<const CuMarker&>(end).event;
    if (CUresult e = cu_->EventSynchronize(b); e != kCudaSuccess) return CuError(*cu_, e, "cuEventSynchronize", "markers");
    float ms = 0;
    if (CUresult e = cu_->EventElapsedTime(&ms, a, b); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuEventElapsedTime", "markers");
    }
    return ms * 1e-3;
  }

  std::vector<ProfileEntry> TakeProfile() override {
    cu_->StreamSynchronize(stream_);
    AccountPending();
    return profile_table_.Take();
  }

  static CUdeviceptr Address(const BufferRange& r) {
    return static_cast<CuBuffer*>(r.buffer)->ptr() + static_cast<CUdeviceptr>(r.offset);
  }

 private:
  absl::Status Enqueue(const CuCommand& c) {
    CUevent start = nullptr, end = nullptr;
    if (profile_) {
      cu_->EventCreate(&start, kEventDefault);
      cu_->EventCreate(&end, kEventDefault);
      cu_->EventRecord(start, stream_);
    }
    if (CUresult e = c.enqueue(stream_); e != kCudaSuccess) {
      if (start != nullptr) cu_->EventDestroy(start);
      if (end != nullptr) cu_->EventDestroy(end);
      return EnqueueError(c, e, "enqueueing");
    }
    if (profile_) {
      cu_->EventRecord(end, stream_);
      pending_.push_back({c.label, start, end});
    }
    return absl::OkStatus();
  }

  absl::Status Capture(CuCommandBuffer& cb) {
    if (CUresult e = cu_->StreamBeginCapture(stream_, kCaptureModeThreadLocal); e != kCudaSuccess) {
      return CuError(*cu_, e, "cuStreamBeginCapture", "capturing the step's graph");
    }
    absl::Status enqueued = absl::OkStatus();
    for (const CuCommand& c : cb.commands()) {
      if (CUresult e = c.enqueue(stream_); e != kCudaSuccess) {
        enqueued = EnqueueError(c, e, "enqueueing (captured)");
        break;
      }
    }
    CUgraph graph = nullptr;
    CUresult ended = cu_->StreamEndCapture(stream_, &graph);
    if (!enqueued.ok()) {
      if (graph != nullptr) cu_->GraphDestroy(graph);
      return enqueued;
    }
    if (ended != kCudaSuccess) return CuError(*cu_, ended, "cuStreamEndCapture", "capturing the step's graph");
    CUresult e = cu_->GraphInstantiate(&cb.exec(), graph, 0);
    cu_->GraphDestroy(graph);
    if (e != kCudaSuccess) {
      cb.exec() = nullptr;
      return CuError(*cu_, e, "cuGraphInstantiate", "the step's graph");
    }
    return absl::OkStatus();
  }

  absl::Status EnqueueError(const CuCommand& c, CUresult e, std::string_view how) {
    if (c.sdpa != nullptr && e == SdpaCommand::kSdpaFailed) {
      return absl::InternalError(absl::StrCat(c.label, ": ", std::string(how), " ", c.sdpa->LastError()));
    }
    if (c.gemm != nullptr && e == GemmPlan::kGemmFailed) {
      return absl::InternalError(absl::StrCat(c.label, ": ", std::string(how), " cublasLtMatmul failed with ",
                                              c.gemm->LastError()));
    }
    return CuError(*cu_, e, how, c.label);
  }

  void AccountPending() {
    for (const Pending& p : pending_) {
      float ms = 0;
      cu_->EventElapsedTime(&ms, p.start, p.end);
      cu_->EventDestroy(p.start);
      cu_->EventDestroy(p.end);
      profile_table_.Add(p.label, ms * 1e-3);
    }
    pending_.clear();
  }
  void ReleasePending() {
    for (const Pending& p : pending_) {
      cu_->EventDestroy(p.start);
      cu_->EventDestroy(p.end);
    }
    pending_.clear();
  }

  struct Pending {
    std::string label;
    CUevent start, end;
  };

  const CudaApi* cu_;
  CUdevice device_;
  CUcontext context_;
  CUstream stream_;
  std::string description_;
  bool profile_;
  DeviceLimits limits_;
  std::vector<Pending> pending_;
  ProfileTable profile_table_;
  BlasContext blas_;
  absl::Status blas_status_ = absl::OkStatus();
  std::unique_ptr<CudnnSdpa> sdpa_;
  absl::Status sdpa_status_ = absl::OkStatus();
};

CUdeviceptr GemmPlan::CuDeviceAddress(const BufferRange& r) { return CuDevice::Address(r); }

absl::Status CuCommandBuffer::AddBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label) {
  if (IsSdpaBuiltin(name)) {
    absl::StatusOr<SdpaCall> call = ReadSdpaBuiltin(name, args, label);
    if (!call.ok()) return call.status();
    absl::StatusOr<CudnnSdpa*> sdpa = device_->Sdpa();
    if (!sdpa.ok()) {
      return absl::Status(sdpa.status().code(), absl::StrCat(std::string(label), ": ", sdpa.status().message()));
    }
    absl::StatusOr<std::unique_ptr<SdpaCommand>> command = (*sdpa)->Record(*call, label);
    if (!command.ok()) return command.status();
    SdpaCommand* c = sdpa_commands_.emplace_back(*std::move(command)).get();
    commands_.push_back({std::string(label), [c](CUstream s) { return c->Enqueue(s); }, nullptr, nullptr, c});
    return absl::OkStatus();
  }
  absl::StatusOr<GemmCall> call = ReadGemmBuiltin(name, args, label, "cuda");
  if (!call.ok()) return call.status();
  absl::StatusOr<const BlasContext*> blas = device_->Blas();
  if (!blas.ok()) return absl::Status(blas.status().code(), absl::StrCat(std::string(label), ": ", blas.status().message()));
  absl::StatusOr<std::unique_ptr<GemmPlan>> plan = GemmPlan::Create(**blas, *call, label);
  if (!plan.ok()) return plan.status();
  GemmPlan* p = gemm_plans_.emplace_back(*std::move(plan)).get();
  commands_.push_back({std::string(label), [p](CUstream s) { return p->Enqueue(s); }, nullptr, p});
  return absl::OkStatus();
}

absl::Status CuCommandBuffer::AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                                        std::string_view label) {
  auto& k = static_cast<CuKernel&>(kernel);
  const std::string what = absl::StrCat(std::string(label), " (kernel ", k.symbol(), ")");
  std::vector<uint64_t>& values = arg_values_.emplace_back(args.size(), 0);
  std::vector<void*>& pointers = arg_pointers_.emplace_back(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    void* slot = &values[i];
    if (a.is_buffer) {
      if (absl::Status s = CheckRange(a.buffer, what); !s.ok()) return s;
      const CUdeviceptr address = CuDevice::Address(a.buffer);
      std::memcpy(slot, &address, sizeof(address));
    } else {
      switch (a.scalar.type) {
        case Scalar::Type::kI64: { int64_t v = a.scalar.i; std::memcpy(slot, &v, sizeof(v)); break; }
        case Scalar::Type::kI32: { int32_t v = static_cast<int32_t>(a.scalar.i); std::memcpy(slot, &v, sizeof(v)); break; }
        case Scalar::Type::kF64: { double v = a.scalar.f; std::memcpy(slot, &v, sizeof(v)); break; }
        case Scalar::Type::kF32: { float v = static_cast<float>(a.scalar.f); std::memcpy(slot, &v, sizeof(v)); break; }
      }
    }
    pointers[i] = slot;
  }
  const DeviceLimits& limits = device_->limits();
  if (config.block[0] * config.block[1] * config.block[2] > limits.max_workgroup_size) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": a block of ", config.block[0], "x", config.block[1], "x",
                                                   config.block[2], " threads; the device allows ",
                                                   limits.max_workgroup_size));
  }
  const CudaApi* cu = cu_;
  CUfunction f = k.function();
  const std::array<int64_t, 3> grid = config.grid, block = config.block;
  const unsigned int shared = static_cast<unsigned int>(config.workgroup_bytes);
  void** params = pointers.data();
  commands_.push_back({std::string(label),
                       [cu, f, grid, block, shared, params](CUstream s) {
                         return cu->LaunchKernel(f, static_cast<unsigned int>(grid[0]), static_cast<unsigned int>(grid[1]),
                                                 static_cast<unsigned int>(grid[2]), static_cast<unsigned int>(block[0]),
                                                 static_cast<unsigned int>(block[1]), static_cast<unsigned int>(block[2]),
                                                 shared, s, params, nullptr);
                       },
                       nullptr});
  return absl::OkStatus();
}

absl::Status CuCommandBuffer::AddCopy(BufferRange dst, BufferRange src, std::string_view label) {
  if (absl::Status s = CheckRange(dst, label); !s.ok()) return s;
  if (absl::Status s = CheckRange(src, label); !s.ok()) return s;
  if (dst.bytes != src.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a copy of ", src.bytes, " bytes into ", dst.bytes));
  }
  const CUdeviceptr to = CuDevice::Address(dst), from = CuDevice::Address(src);
  if (dst.bytes == 0 || to == from) return absl::OkStatus();
  const CudaApi* cu = cu_;
  const size_t bytes = static_cast<size_t>(dst.bytes);
  commands_.push_back({std::string(label), [cu, to, from, bytes](CUstream s) { return cu->MemcpyDtoDAsync(to, from, bytes, s); },
                       nullptr});
  return absl::OkStatus();
}

absl::Status CuCommandBuffer::AddFill(BufferRange dst, uint32_t pattern, std::string_view label) {
  if (absl::Status s = CheckRange(dst, label); !s.ok()) return s;
  if (dst.bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a fill of ", dst.bytes,
                                                   " bytes, not whole 32-bit words"));
  }
  if (dst.bytes == 0) return absl::OkStatus();
  const CudaApi* cu = cu_;
  const CUdeviceptr to = CuDevice::Address(dst);
  const size_t words = static_cast<size_t>(dst.bytes / 4);
  commands_.push_back({std::string(label), [cu, to, pattern, words](CUstream s) { return cu->MemsetD32Async(to, pattern, words, s); },
                       nullptr});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListCudaDevices() {
  absl::StatusOr<std::pair<const CudaApi*, int>> started = Start();
  if (!started.ok()) return started.status();
  auto [cu, count] = *started;
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    CUdevice d = 0;
    if (cu->DeviceGet(&d, i) == kCudaSuccess) out.push_back(Describe(*cu, d));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int index, const DeviceOptions& options) {
  absl::StatusOr<std::pair<const CudaApi*, int>> started = Start();
  if (!started.ok()) return absl::InvalidArgumentError(absl::StrCat("cuda: ", started.status().message()));
  auto [cu, count] = *started;
  if (index < 0 || index >= count) {
    return absl::InvalidArgumentError(absl::StrCat("cuda:", index, ": there are ", count, " CUDA device(s)"));
  }
  CUdevice device = 0;
  if (CUresult e = cu->DeviceGet(&device, index); e != kCudaSuccess) return CuError(*cu, e, "cuDeviceGet", "cuda");
  CUcontext context = nullptr;
  if (CUresult e = cu->DevicePrimaryCtxRetain(&context, device); e != kCudaSuccess) {
    return CuError(*cu, e, "cuDevicePrimaryCtxRetain", "cuda");
  }
  if (CUresult e = cu->CtxSetCurrent(context); e != kCudaSuccess) {
    cu->DevicePrimaryCtxRelease(device);
    return CuError(*cu, e, "cuCtxSetCurrent", "cuda");
  }
  CUstream stream = nullptr;
  if (CUresult e = cu->StreamCreate(&stream, kStreamNonBlocking); e != kCudaSuccess) {
    cu->DevicePrimaryCtxRelease(device);
    return CuError(*cu, e, "cuStreamCreate", "cuda");
  }
  return std::unique_ptr<Device>(new CuDevice(cu, device, context, stream, Describe(*cu, device), options.profile));
}

}  // namespace gpt_sft::runtime::device::cuda
