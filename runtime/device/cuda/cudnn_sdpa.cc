// Implements CudnnSdpa and SdpaCommand. A call's f32 buffers (bf16 values in f32 storage):
//   1. its f32 inputs are rounded into bf16 staging scratch (exact: they hold bf16 values);
//   2. cuDNN runs on the staged and the bf16 tensors, writing lse (f32) in place and its
//      outputs into staging (f32 ones) or their own buffers (bf16 ones);
//   3. the staged outputs are widened into the call's f32 buffers.
// Buffers that store bf16 (the dtype mask) go to cuDNN as they are. The backward's rowsum(dO * O) lives
// in staging either way.
#include "runtime/device/cuda/cudnn_sdpa.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/device/cuda/bf16_convert_ptx.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

constexpr int64_t kStagingAlignment = 256;

int64_t AlignUp(int64_t bytes) { return (bytes + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment; }

CUdeviceptr AddressOf(const BufferRange& r) { return static_cast<CUdeviceptr>(r.buffer->device_address() + r.offset); }

absl::Status CuFailed(const CudaApi& cu, CUresult e, std::string_view call, std::string_view what) {
  return absl::Status(e == 2 ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal,
                      absl::StrCat(std::string(what), ": ", std::string(call), " failed with ", CuErrorName(cu, e)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudnnSdpa>> CudnnSdpa::Create(const CudaApi& cu) {
  absl::StatusOr<const CudnnApi*> dnn = CudnnApi::Get();
  if (!dnn.ok()) return dnn.status();
  auto engine = std::unique_ptr<CudnnSdpa>(new CudnnSdpa(cu, **dnn));
  if (cudnnStatus e = (*dnn)->Create(&engine->handle_); e != kCudnnSuccess) {
    engine->handle_ = nullptr;
    return absl::FailedPreconditionError(absl::StrCat("cudnnCreate failed with ", CudnnStatusName(**dnn, e),
                                                      " (compile the step with --attention=generated)"));
  }
  if (absl::Status s = engine->LoadConversions(); !s.ok()) return s;
  return engine;
}

CudnnSdpa::~CudnnSdpa() {
  for (auto& [shape, plan] : plans_) {
    if (plan.workspace != 0) cu_.MemFree(plan.workspace);
  }
  plans_.clear();  // descriptors before the handle
  if (handle_ != nullptr) dnn_.Destroy(handle_);
  for (auto [ptr, bytes] : scratch_) cu_.MemFree(ptr);
  if (conversions_ != nullptr) cu_.ModuleUnload(conversions_);
}

absl::Status CudnnSdpa::LoadConversions() {
  if (CUresult e = cu_.ModuleLoadDataEx(&conversions_, kBf16ConvertPtx, 0, nullptr, nullptr); e != kCudaSuccess) {
    conversions_ = nullptr;
    return CuFailed(cu_, e, "cuModuleLoadDataEx", "the sdpa builtins' bf16 conversion kernels");
  }
  for (auto [function, name] : {std::pair{&to_bf16_, kF32ToBf16Kernel}, std::pair{&to_f32_, kBf16ToF32Kernel}}) {
    if (CUresult e = cu_.ModuleGetFunction(function, conversions_, name); e != kCudaSuccess) {
      return CuFailed(cu_, e, "cuModuleGetFunction", name);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const SdpaGraph*> CudnnSdpa::PlanFor(const SdpaShape& shape) {
  if (auto it = plans_.find(shape); it != plans_.end()) return it->second.graph.get();
  absl::StatusOr<std::unique_ptr<SdpaGraph>> graph = SdpaGraph::Build(dnn_, handle_, shape);
  if (!graph.ok()) return graph.status();
  Plan plan;
  if (const int64_t bytes = (*graph)->workspace_bytes(); bytes > 0) {
    if (CUresult e = cu_.MemAlloc(&plan.workspace, static_cast<size_t>(bytes)); e != kCudaSuccess) {
      return CuFailed(cu_, e, "cuMemAlloc", absl::StrCat("the workspace of cuDNN ", shape.ToString()));
    }
  }
  plan.graph = *std::move(graph);
  const SdpaGraph* out = plan.graph.get();
  plans_.emplace(shape, std::move(plan));
  return out;
}

absl::StatusOr<CUdeviceptr> CudnnSdpa::Scratch(int64_t bytes) {
  if (!scratch_.empty() && scratch_.back().second >= bytes) return scratch_.back().first;
  CUdeviceptr ptr = 0;
  if (CUresult e = cu_.MemAlloc(&ptr, static_cast<size_t>(bytes)); e != kCudaSuccess) {
    return CuFailed(cu_, e, "cuMemAlloc", "the sdpa builtins' bf16 staging");
  }
  scratch_.emplace_back(ptr, bytes);
  return ptr;
}

absl::StatusOr<std::unique_ptr<SdpaCommand>> CudnnSdpa::Record(const SdpaCall& call, std::string_view label) {
  SdpaShape shape;
  shape.backward = call.backward;
  shape.B = call.B;
  shape.T = call.T;
  shape.H = call.H;
  shape.Hkv = call.Hkv;
  shape.D = call.D;
  shape.causal = call.causal;
  shape.scale = static_cast<float>(call.scale);
  absl::StatusOr<const SdpaGraph*> graph = PlanFor(shape);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(std::string(label), ": ", graph.status().message(),
                                                           " (compile the step with --attention=generated)"));
  }
  auto command = std::unique_ptr<SdpaCommand>(new SdpaCommand());
  command->engine_ = this;
  command->graph_ = *graph;
  command->scale_ = shape.scale;
  command->neg_inf_ = -std::numeric_limits<float>::infinity();
  // What cuDNN reads and writes, in uid order, with whether it goes through staging.
  struct Operand {
    SdpaTensor tensor;
    int64_t uid;
    const BufferRange* range;
    int64_t elements;
    bool written;
  };
  std::vector<Operand> operands = {{SdpaTensor::kQ, kUidQ, &call.q, call.QElements(), false},
                                   {SdpaTensor::kK, kUidK, &call.k, call.KvElements(), false},
                                   {SdpaTensor::kV, kUidV, &call.v, call.KvElements(), false},
                                   {SdpaTensor::kOut, kUidO, &call.out, call.QElements(), !call.backward}};
  if (call.backward) {
    operands.push_back({SdpaTensor::kDout, kUidDO, &call.dout, call.QElements(), false});
    operands.push_back({SdpaTensor::kDq, kUidDQ, &call.dq, call.QElements(), true});
    operands.push_back({SdpaTensor::kDk, kUidDK, &call.dk, call.KvElements(), true});
    operands.push_back({SdpaTensor::kDv, kUidDV, &call.dv, call.KvElements(), true});
  }
  int64_t offset = 0;
  for (const Operand& o : operands) {
    if (call.StoresBf16(o.tensor)) {
      command->device_tensors_.emplace_back(o.uid, AddressOf(*o.range));
      continue;
    }
    command->staged_.emplace_back(o.uid, offset);
    auto conversion = std::make_unique<SdpaCommand::Conversion>();
    conversion->function = o.written ? to_f32_ : to_bf16_;
    conversion->n = static_cast<uint64_t>(o.elements);
    // The staging side is bound with the scratch at the first Enqueue; the buffer side now.
    (o.written ? conversion->dst : conversion->src) = AddressOf(*o.range);
    (o.written ? command->out_ : command->in_).push_back(std::move(conversion));
    offset += AlignUp(o.elements * 2);
  }
  command->device_tensors_.emplace_back(kUidStats, AddressOf(call.lse));
  if (call.backward) {
    command->staged_.emplace_back(kUidRowSum, offset);
    offset += AlignUp(call.B * call.H * call.T * 4);
  }
  command->scratch_bytes_ = offset;
  return command;
}

SdpaCommand::~SdpaCommand() {
  if (pack_ != nullptr) engine_->dnn_.BackendDestroyDescriptor(pack_);
}

absl::Status SdpaCommand::BindVariantPack() {
  const CudnnApi& dnn = engine_->dnn_;
  absl::StatusOr<CUdeviceptr> scratch = engine_->Scratch(std::max<int64_t>(scratch_bytes_, 1));
  if (!scratch.ok()) return scratch.status();
  std::vector<int64_t> uids;
  std::vector<void*> pointers;
  for (auto [uid, address] : device_tensors_) {
    uids.push_back(uid);
    pointers.push_back(reinterpret_cast<void*>(address));
  }
  // Staged operands in the order Record listed them: inputs, then outputs.
  size_t in = 0, out = 0;
  for (auto [uid, at] : staged_) {
    const CUdeviceptr address = *scratch + static_cast<CUdeviceptr>(at);
    uids.push_back(uid);
    pointers.push_back(reinterpret_cast<void*>(address));
    if (uid == kUidRowSum) continue;
    const bool written = uid == kUidDQ || uid == kUidDK || uid == kUidDV || (uid == kUidO && !graph_->shape().backward);
    if (written) {
      out_[out++]->src = address;
    } else {
      in_[in++]->dst = address;
    }
  }
  uids.push_back(kUidScale);
  pointers.push_back(&scale_);
  if (graph_->shape().causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(&neg_inf_);
  }
  const int64_t engine_workspace = graph_->workspace_bytes();
  void* workspace = nullptr;
  for (const auto& [shape, plan] : engine_->plans_) {
    if (plan.graph.get() == graph_) workspace = reinterpret_cast<void*>(plan.workspace);
  }
  if (engine_workspace > 0 && workspace == nullptr) return absl::InternalError("sdpa: the plan's workspace is gone");
  const auto count = static_cast<int64_t>(uids.size());
  auto check = [&](cudnnStatus e, const char* call) {
    return e == kCudnnSuccess ? absl::OkStatus()
                              : absl::InternalError(absl::StrCat(graph_->shape().ToString(), ": ", call,
                                                                 " (variant pack) failed with ",
                                                                 CudnnStatusName(dnn, e)));
  };
  if (absl::Status s = check(dnn.BackendCreateDescriptor(cudnn_desc::kVariantPack, &pack_), "cudnnBackendCreateDescriptor");
      !s.ok()) {
    pack_ = nullptr;
    return s;
  }
  for (auto [name, type, n, value] :
       {std::tuple{cudnn_attr::kVariantPackUniqueIds, cudnn_type::kInt64, count, static_cast<const void*>(uids.data())},
        std::tuple{cudnn_attr::kVariantPackDataPointers, cudnn_type::kVoidPtr, count,
                   static_cast<const void*>(pointers.data())},
        std::tuple{cudnn_attr::kVariantPackWorkspace, cudnn_type::kVoidPtr, int64_t{1},
                   static_cast<const void*>(&workspace)}}) {
    if (absl::Status s = check(dnn.BackendSetAttribute(pack_, name, type, n, value), "cudnnBackendSetAttribute");
        !s.ok()) {
      return s;
    }
  }
  return check(dnn.BackendFinalize(pack_), "cudnnBackendFinalize");
}

CUresult SdpaCommand::Enqueue(CUstream stream) {
  if (pack_ == nullptr) {
    if (absl::Status s = BindVariantPack(); !s.ok()) {
      error_ = std::string(s.message());
      return kSdpaFailed;
    }
  }
  const CudaApi& cu = engine_->cu_;
  auto launch = [&](Conversion& c) {
    const auto blocks = static_cast<unsigned int>((c.n + kBf16ConvertBlock - 1) / kBf16ConvertBlock);
    return cu.LaunchKernel(c.function, blocks, 1, 1, kBf16ConvertBlock, 1, 1, 0, stream, c.params, nullptr);
  };
  for (auto& c : in_) {
    if (CUresult e = launch(*c); e != kCudaSuccess) return e;
  }
  const CudnnApi& dnn = engine_->dnn_;
  if ((last_ = dnn.SetStream(engine_->handle_, stream)) != kCudnnSuccess ||
      (last_ = dnn.BackendExecute(engine_->handle_, graph_->plan(), pack_)) != kCudnnSuccess) {
    error_ = absl::StrCat("cudnnBackendExecute (", graph_->shape().ToString(), ") failed with ",
                          CudnnStatusName(dnn, last_));
    return kSdpaFailed;
  }
  for (auto& c : out_) {
    if (CUresult e = launch(*c); e != kCudaSuccess) return e;
  }
  return kCudaSuccess;
}

std::string SdpaCommand::LastError() const { return error_; }

}  // namespace gpt_sft::runtime::device::cuda
