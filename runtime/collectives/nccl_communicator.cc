// Implements MakeNcclCommunicator over the dlopened NCCL and CUDA driver.
#include "runtime/collectives/nccl_communicator.h"

#include <cstdint>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/collectives/nccl_api.h"
#include "runtime/device/cuda/cuda_api.h"

namespace gpt_sft::runtime::collectives {
namespace {

using Clock = std::chrono::steady_clock;
using device::cuda::CudaApi;
using device::cuda::CUcontext;
using device::cuda::CUdevice;
using device::cuda::CUdeviceptr;
using device::cuda::CUresult;
using device::cuda::CUstream;

int ToNcclType(DataType type) {
  switch (type) {
    case DataType::kFloat32: return kNcclFloat32;
    case DataType::kFloat64: return kNcclFloat64;
    case DataType::kBFloat16: return kNcclBfloat16;
    case DataType::kInt32: return kNcclInt32;
    case DataType::kInt64: return kNcclInt64;
    case DataType::kUint64: return kNcclUint64;
  }
  return kNcclFloat32;
}

int ToNcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return kNcclSum;
    case ReduceOp::kAvg: return kNcclAvg;
    case ReduceOp::kMax: return kNcclMax;
    case ReduceOp::kMin: return kNcclMin;
  }
  return kNcclSum;
}

absl::Status CuError(const CudaApi& cu, const std::string& where, CUresult e) {
  return absl::InternalError(absl::StrCat(where, ": ", device::cuda::CuErrorName(cu, e)));
}

absl::Status NcclError(const NcclApi& nccl, const std::string& where, ncclResult result) {
  const char* text = nccl.GetErrorString(result);
  return absl::InternalError(absl::StrCat(where, ": ", text != nullptr ? text : "NCCL error", " (", result, ")"));
}

void Sleep() { std::this_thread::sleep_for(std::chrono::microseconds(20)); }

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, NcclOptions options, const CudaApi* cu, const NcclApi* nccl, int device,
                   CUdevice cu_device, CUcontext context, ncclCommHandle comm, CUstream stream, CUdeviceptr scratch)
      : bootstrap_(bootstrap), options_(options), cu_(cu), nccl_(nccl), device_(device), cu_device_(cu_device),
        context_(context), comm_(comm), stream_(stream), scratch_(scratch) {}

  ~NcclCommunicator() override {
    cu_->CtxSetCurrent(context_);
    if (poisoned_.ok()) {
      nccl_->CommDestroy(comm_);  // flushes what was issued (every call waited for its stream)
    }
    cu_->MemFree(scratch_);
    cu_->StreamDestroy(stream_);
    cu_->DevicePrimaryCtxRelease(cu_device_);
  }

  int rank() const override { return bootstrap_.rank(); }
  int world_size() const override { return bootstrap_.world_size(); }
  std::string_view backend() const override { return "nccl"; }
  MemorySpace memory_space() const override { return MemorySpace::kCuda; }

  absl::Status AllReduce(void* buffer, int64_t count, DataType type, ReduceOp op) override {
    return Run(Describe("all_reduce", count, type, std::string(ReduceOpName(op))), [&] {
      return nccl_->AllReduce(buffer, buffer, static_cast<size_t>(count), ToNcclType(type), ToNcclOp(op), comm_,
                              stream_);
    });
  }
  absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, DataType type,
                             ReduceOp op) override {
    return Run(Describe("reduce_scatter", recv_count, type, std::string(ReduceOpName(op))), [&] {
      return nccl_->ReduceScatter(send, recv, static_cast<size_t>(recv_count), ToNcclType(type), ToNcclOp(op), comm_,
                                  stream_);
    });
  }
  absl::Status AllGather(const void* send, void* recv, int64_t send_count, DataType type) override {
    return Run(Describe("all_gather", send_count, type, ""), [&] {
      return nccl_->AllGather(send, recv, static_cast<size_t>(send_count), ToNcclType(type), comm_, stream_);
    });
  }
  absl::Status Broadcast(void* buffer, int64_t count, DataType type, int root) override {
    if (root < 0 || root >= world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl broadcast: root ", root, " is not a rank of a world of ", world_size()));
    }
    return Run(Describe("broadcast", count, type, absl::StrCat("root ", root)), [&] {
      return nccl_->Broadcast(buffer, buffer, static_cast<size_t>(count), ToNcclType(type), root, comm_, stream_);
    });
  }
  // NCCL has no barrier: a one-element all-reduce on a device scratch word is one.
  absl::Status Barrier() override {
    void* word = reinterpret_cast<void*>(scratch_);
    return Run(Describe("barrier", 1, DataType::kInt32, ""),
               [&] { return nccl_->AllReduce(word, word, 1, kNcclInt32, kNcclSum, comm_, stream_); });
  }

 private:
  std::string Describe(const char* name, int64_t count, DataType type, const std::string& detail) const {
    std::string text = absl::StrCat("nccl ", name, " #", sequence_ + 1);
    if (std::string_view(name) != "barrier") {
      absl::StrAppend(&text, " (count ", count, ", ", std::string(DataTypeName(type)));
      if (!detail.empty()) absl::StrAppend(&text, ", ", detail);
      absl::StrAppend(&text, ")");
    }
    absl::StrAppend(&text, " on rank ", rank(), " of ", world_size(), " (device ", device_, ")");
    return text;
  }

  template <typename Enqueue>
  absl::Status Run(const std::string& call, Enqueue enqueue) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!poisoned_.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(call, ": the communicator failed earlier: ", poisoned_.message()));
    }
    ++sequence_;
    if (CUresult e = cu_->CtxSetCurrent(context_); e != device::cuda::kCudaSuccess) {
      return Poison(CuError(*cu_, call, e));
    }
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    const ncclResult rc = enqueue();
    if (rc != kNcclSuccess && rc != kNcclInProgress) return Poison(NcclError(*nccl_, call, rc));
    for (;;) {
      ncclResult async = kNcclSuccess;
      nccl_->CommGetAsyncError(comm_, &async);
      if (async != kNcclSuccess && async != kNcclInProgress) return Poison(NcclError(*nccl_, call, async));
      const CUresult query = cu_->StreamQuery(stream_);
      if (query == device::cuda::kCudaSuccess) return absl::OkStatus();
      if (query != device::cuda::kCudaErrorNotReady) return Poison(CuError(*cu_, call, query));
      if (Clock::now() >= deadline) {
        return Poison(absl::DeadlineExceededError(
                          absl::StrCat(call, ": timed out after ", options_.timeout.count(), " ms")),
                      /*timed_out=*/true);
      }
      Sleep();
    }
  }

  // Aborts NCCL (a hung kernel returns), and on a timeout asks the bootstrap who is missing.
  absl::Status Poison(const absl::Status& error, bool timed_out = false) {
    nccl_->CommAbort(comm_);
    std::string text(error.message());
    if (timed_out) {
      const absl::Status who = bootstrap_.Barrier();
      absl::StrAppend(&text, who.ok() ? "; every rank answered a host barrier afterwards (NCCL itself hung)"
                                      : absl::StrCat("; host barrier: ", std::string(who.message())));
    }
    poisoned_ = absl::Status(error.code(), text);
    return poisoned_;
  }

  Communicator& bootstrap_;
  const NcclOptions options_;
  const CudaApi* cu_;
  const NcclApi* nccl_;
  const int device_;
  CUdevice cu_device_;
  CUcontext context_;
  ncclCommHandle comm_;
  CUstream stream_;
  CUdeviceptr scratch_;  // device word for Barrier
  std::mutex mu_;
  int64_t sequence_ = 0;  // guarded by mu_
  absl::Status poisoned_;  // guarded by mu_
};

/// The driver and NCCL loaded and this rank's device chosen; or why not (every rank still
/// takes part in the id's broadcast, so that one rank's failure does not hang the others).
struct Setup {
  const CudaApi* cu = nullptr;
  const NcclApi* nccl = nullptr;
  int device = -1;
};

absl::StatusOr<Setup> Prepare(const Communicator& bootstrap, int requested) {
  const std::string where = absl::StrCat("MakeNcclCommunicator on rank ", bootstrap.rank());
  Setup setup;
  absl::StatusOr<const CudaApi*> cu = CudaApi::Get();
  if (!cu.ok()) return absl::FailedPreconditionError(absl::StrCat(where, ": no CUDA device (", cu.status().message(), ")"));
  setup.cu = *cu;
  int devices = 0;
  if (CUresult e = setup.cu->Init(0); e != device::cuda::kCudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": no CUDA device (cuInit: ", device::cuda::CuErrorName(*setup.cu, e), ")"));
  }
  if (setup.cu->DeviceGetCount(&devices) != device::cuda::kCudaSuccess || devices == 0) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": no CUDA device (the driver sees none)"));
  }
  if (requested >= devices) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": device ", requested, " of ", devices, " CUDA devices"));
  }
  setup.device = requested >= 0 ? requested : bootstrap.rank() % devices;
  absl::StatusOr<const NcclApi*> nccl = NcclApi::Get();
  if (!nccl.ok()) return absl::FailedPreconditionError(absl::StrCat(where, ": ", nccl.status().message()));
  setup.nccl = *nccl;
  return setup;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator& bootstrap, NcclOptions options) {
  if (bootstrap.memory_space() != MemorySpace::kHost) {
    return absl::InvalidArgumentError("MakeNcclCommunicator: the bootstrap communicator must use host memory");
  }
  absl::StatusOr<Setup> setup = Prepare(bootstrap, options.device);
  const std::string where = absl::StrCat("MakeNcclCommunicator on rank ", bootstrap.rank(), " of ",
                                         bootstrap.world_size());
  // Every rank takes part in the broadcast, also one that cannot join (it sends zeros, never a
  // valid id), so that a missing GPU on one rank does not hang the others.
  NcclUniqueId id{};
  if (setup.ok() && bootstrap.rank() == 0) {
    if (ncclResult rc = setup->nccl->GetUniqueId(&id); rc != kNcclSuccess) {
      return NcclError(*setup->nccl, where + ": ncclGetUniqueId", rc);
    }
  }
  static_assert(sizeof(NcclUniqueId) % sizeof(int32_t) == 0);
  if (absl::Status s = bootstrap.Broadcast(&id, sizeof(id) / sizeof(int32_t), DataType::kInt32, 0); !s.ok()) return s;
  if (!setup.ok()) return setup.status();
  const CudaApi& cu = *setup->cu;
  const NcclApi& nccl = *setup->nccl;

  CUdevice cu_device = 0;
  CUcontext context = nullptr;
  if (CUresult e = cu.DeviceGet(&cu_device, setup->device); e != device::cuda::kCudaSuccess) {
    return CuError(cu, where + ": cuDeviceGet", e);
  }
  if (CUresult e = cu.DevicePrimaryCtxRetain(&context, cu_device); e != device::cuda::kCudaSuccess) {
    return CuError(cu, where + ": cuDevicePrimaryCtxRetain", e);
  }
  auto release = [&] { cu.DevicePrimaryCtxRelease(cu_device); };
  if (CUresult e = cu.CtxSetCurrent(context); e != device::cuda::kCudaSuccess) {
    release();
    return CuError(cu, where + ": cuCtxSetCurrent", e);
  }
  CUstream stream = nullptr;
  if (CUresult e = cu.StreamCreate(&stream, device::cuda::kStreamNonBlocking); e != device::cuda::kCudaSuccess) {
    release();
    return CuError(cu, where + ": cuStreamCreate", e);
  }
  CUdeviceptr scratch = 0;
  if (CUresult e = cu.MemAlloc(&scratch, sizeof(int32_t)); e != device::cuda::kCudaSuccess) {
    cu.StreamDestroy(stream);
    release();
    return CuError(cu, where + ": cuMemAlloc", e);
  }
  // ncclCommInitRank blocks until every rank joined: on a helper thread (with this context), so
  // that the wait is bounded; a thread left waiting past the timeout ends with the process.
  auto joined = std::make_shared<std::promise<std::pair<ncclResult, ncclCommHandle>>>();
  std::future<std::pair<ncclResult, ncclCommHandle>> result = joined->get_future();
  std::thread([&cu, &nccl, context, joined, id, world = bootstrap.world_size(), rank = bootstrap.rank()] {
    cu.CtxSetCurrent(context);
    ncclCommHandle comm = nullptr;
    const ncclResult rc = nccl.CommInitRank(&comm, world, id, rank);
    joined->set_value({rc, comm});
  }).detach();
  absl::Status failed = absl::OkStatus();
  ncclCommHandle comm = nullptr;
  if (result.wait_for(options.timeout) != std::future_status::ready) {
    failed = absl::DeadlineExceededError(absl::StrCat(where, ": ncclCommInitRank: not every rank joined within ",
                                                      options.timeout.count(), " ms"));
  } else if (auto [rc, made] = result.get(); rc != kNcclSuccess) {
    failed = NcclError(nccl, where + ": ncclCommInitRank", rc);
  } else {
    comm = made;
  }
  if (!failed.ok()) {
    cu.MemFree(scratch);
    cu.StreamDestroy(stream);
    release();
    return failed;
  }
  return std::unique_ptr<Communicator>(
      new NcclCommunicator(bootstrap, options, &cu, &nccl, setup->device, cu_device, context, comm, stream, scratch));
}

}  // namespace gpt_sft::runtime::collectives
