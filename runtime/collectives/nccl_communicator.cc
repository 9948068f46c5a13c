#include "runtime/collectives/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::collectives {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t ToNcclType(DataType type) {
  switch (type) {
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat64: return ncclFloat64;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kInt32: return ncclInt32;
    case DataType::kInt64: return ncclInt64;
    case DataType::kUint64: return ncclUint64;
  }
  return ncclFloat32;
}

ncclRedOp_t ToNcclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAvg: return ncclAvg;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

absl::Status CudaError(const std::string& where, cudaError_t error) {
  return absl::InternalError(absl::StrCat(where, ": ", cudaGetErrorName(error), ": ", cudaGetErrorString(error)));
}

absl::Status NcclError(const std::string& where, ncclResult_t result) {
  return absl::InternalError(absl::StrCat(where, ": ", ncclGetErrorString(result)));
}

void Sleep() { std::this_thread::sleep_for(std::chrono::microseconds(20)); }

// Waits for a nonblocking NCCL communicator to leave ncclInProgress (init, or an enqueue).
absl::Status WaitForComm(ncclComm_t comm, Clock::time_point deadline, const std::string& where) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    if (ncclResult_t rc = ncclCommGetAsyncError(comm, &state); rc != ncclSuccess) return NcclError(where, rc);
    if (state == ncclSuccess) return absl::OkStatus();
    if (state != ncclInProgress) return NcclError(where, state);
    if (Clock::now() >= deadline) return absl::DeadlineExceededError(absl::StrCat(where, ": timed out"));
    Sleep();
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, NcclOptions options, int device, ncclComm_t comm, cudaStream_t stream,
                   int32_t* scratch)
      : bootstrap_(bootstrap), options_(options), device_(device), comm_(comm), stream_(stream), scratch_(scratch) {}

  ~NcclCommunicator() override {
    cudaSetDevice(device_);
    if (poisoned_.ok()) {
      // Flush what was issued, then free; abort instead if that does not end in time.
      const ncclResult_t rc = ncclCommFinalize(comm_);
      const bool flushed = (rc == ncclSuccess || rc == ncclInProgress) &&
                           WaitForComm(comm_, Clock::now() + options_.timeout, "ncclCommFinalize").ok();
      if (flushed) {
        ncclCommDestroy(comm_);
      } else {
        ncclCommAbort(comm_);
      }
    }
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return bootstrap_.rank(); }
  int world_size() const override { return bootstrap_.world_size(); }
  std::string_view backend() const override { return "nccl"; }
  MemorySpace memory_space() const override { return MemorySpace::kCuda; }

  absl::Status AllReduce(void* buffer, int64_t count, DataType type, ReduceOp op) override {
    return Run(Describe("all_reduce", count, type, std::string(ReduceOpName(op))), [&] {
      return ncclAllReduce(buffer, buffer, static_cast<size_t>(count), ToNcclType(type), ToNcclOp(op), comm_,
                           stream_);
    });
  }
  absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, DataType type,
                             ReduceOp op) override {
    return Run(Describe("reduce_scatter", recv_count, type, std::string(ReduceOpName(op))), [&] {
      return ncclReduceScatter(send, recv, static_cast<size_t>(recv_count), ToNcclType(type), ToNcclOp(op), comm_,
                               stream_);
    });
  }
  absl::Status AllGather(const void* send, void* recv, int64_t send_count, DataType type) override {
    return Run(Describe("all_gather", send_count, type, ""), [&] {
      return ncclAllGather(send, recv, static_cast<size_t>(send_count), ToNcclType(type), comm_, stream_);
    });
  }
  absl::Status Broadcast(void* buffer, int64_t count, DataType type, int root) override {
    if (root < 0 || root >= world_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl broadcast: root ", root, " is not a rank of a world of ", world_size()));
    }
    return Run(Describe("broadcast", count, type, absl::StrCat("root ", root)), [&] {
      return ncclBroadcast(buffer, buffer, static_cast<size_t>(count), ToNcclType(type), root, comm_, stream_);
    });
  }
  // NCCL has no barrier: a one-element all-reduce on a device scratch word is one.
  absl::Status Barrier() override {
    return Run(Describe("barrier", 1, DataType::kInt32, ""),
               [&] { return ncclAllReduce(scratch_, scratch_, 1, ncclInt32, ncclSum, comm_, stream_); });
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
    if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) return Poison(CudaError(call, e));
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    const ncclResult_t rc = enqueue();
    if (rc != ncclSuccess && rc != ncclInProgress) return Poison(NcclError(call, rc));
    if (absl::Status s = WaitForComm(comm_, deadline, call); !s.ok()) return Poison(s, /*timed_out=*/true);
    for (;;) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress) return Poison(NcclError(call, async));
      const cudaError_t query = cudaStreamQuery(stream_);
      if (query == cudaSuccess) return absl::OkStatus();
      if (query != cudaErrorNotReady) return Poison(CudaError(call, query));
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
    ncclCommAbort(comm_);
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
  const int device_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  int32_t* scratch_;  // device word for Barrier
  std::mutex mu_;
  int64_t sequence_ = 0;  // guarded by mu_
  absl::Status poisoned_;  // guarded by mu_
};

absl::StatusOr<int> ChooseDevice(const Communicator& bootstrap, int requested) {
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "MakeNcclCommunicator on rank ", bootstrap.rank(), ": no CUDA device (cudaGetDeviceCount: ",
        e == cudaSuccess ? "0 devices" : absl::StrCat(cudaGetErrorName(e), ": ", cudaGetErrorString(e)), ")"));
  }
  if (requested >= devices) {
    return absl::InvalidArgumentError(absl::StrCat("MakeNcclCommunicator on rank ", bootstrap.rank(), ": device ",
                                                   requested, " of ", devices, " CUDA devices"));
  }
  return requested >= 0 ? requested : bootstrap.rank() % devices;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> MakeNcclCommunicator(Communicator& bootstrap, NcclOptions options) {
  if (bootstrap.memory_space() != MemorySpace::kHost) {
    return absl::InvalidArgumentError("MakeNcclCommunicator: the bootstrap communicator must use host memory");
  }
  // Every rank takes part in the broadcast, also one without a device (it sends a poisoned id:
  // zeros are never a valid id), so that a missing GPU on one rank does not hang the others.
  absl::StatusOr<int> device = ChooseDevice(bootstrap, options.device);
  const std::string where = absl::StrCat("MakeNcclCommunicator on rank ", bootstrap.rank(), " of ",
                                         bootstrap.world_size());
  ncclUniqueId id{};
  if (device.ok() && bootstrap.rank() == 0) {
    if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) return NcclError(where + ": ncclGetUniqueId", rc);
  }
  static_assert(sizeof(ncclUniqueId) % sizeof(int32_t) == 0);
  if (absl::Status s = bootstrap.Broadcast(&id, sizeof(id) / sizeof(int32_t), DataType::kInt32, 0); !s.ok()) return s;
  if (!device.ok()) return device.status();

  if (cudaError_t e = cudaSetDevice(*device); e != cudaSuccess) return CudaError(where + ": cudaSetDevice", e);
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
    return CudaError(where + ": cudaStreamCreate", e);
  }
  int32_t* scratch = nullptr;
  if (cudaError_t e = cudaMalloc(&scratch, sizeof(int32_t)); e != cudaSuccess) {
    cudaStreamDestroy(stream);
    return CudaError(where + ": cudaMalloc", e);
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // init and enqueues return ncclInProgress; we poll under the timeout
  ncclComm_t comm = nullptr;
  ncclResult_t rc = ncclCommInitRankConfig(&comm, bootstrap.world_size(), id, bootstrap.rank(), &config);
  absl::Status joined = (rc == ncclSuccess || rc == ncclInProgress)
                            ? WaitForComm(comm, Clock::now() + options.timeout, where + ": ncclCommInitRankConfig")
                            : NcclError(where + ": ncclCommInitRankConfig", rc);
  if (!joined.ok()) {
    if (comm != nullptr) ncclCommAbort(comm);
    cudaFree(scratch);
    cudaStreamDestroy(stream);
    return joined;
  }
  return std::unique_ptr<Communicator>(new NcclCommunicator(bootstrap, options, *device, comm, stream, scratch));
}

}  // namespace gpt_sft::runtime::collectives
