// The NCCL entry points NcclCommunicator calls, reached by dlopen at run time (libnccl.so.2,
// from the machine or NVIDIA's pip wheel, or $GPT_SFT_LIBNCCL): no binary links NCCL or the
// CUDA runtime, so the communicator builds everywhere and a machine without NCCL gets one clear
// error when a job asks for it. Types and constants are declared by hand as nccl.h defines them
// (//runtime/collectives:nccl_api_test checks them against nccl.h where one is installed).
#ifndef GPT_SFT_RUNTIME_COLLECTIVES_NCCL_API_H_
#define GPT_SFT_RUNTIME_COLLECTIVES_NCCL_API_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "runtime/device/cuda/cuda_api.h"

namespace gpt_sft::runtime::collectives {

using ncclResult = int;
using ncclCommHandle = struct ncclComm*;
using NcclStream = device::cuda::CUstream;  // cudaStream_t and the driver's CUstream are one handle

/// ncclUniqueId: 128 opaque bytes, passed by value to ncclCommInitRank.
struct NcclUniqueId {
  char internal[128];
};

inline constexpr ncclResult kNcclSuccess = 0, kNcclInProgress = 7;
inline constexpr int kNcclInt32 = 2, kNcclInt64 = 4, kNcclUint64 = 5, kNcclFloat32 = 7, kNcclFloat64 = 8,
                     kNcclBfloat16 = 9;
inline constexpr int kNcclSum = 0, kNcclMax = 2, kNcclMin = 3, kNcclAvg = 4;

struct NcclApi {
  ncclResult (*GetUniqueId)(NcclUniqueId* id);
  ncclResult (*CommInitRank)(ncclCommHandle* comm, int nranks, NcclUniqueId id, int rank);
  ncclResult (*CommDestroy)(ncclCommHandle comm);
  ncclResult (*CommAbort)(ncclCommHandle comm);
  ncclResult (*CommGetAsyncError)(ncclCommHandle comm, ncclResult* async_error);
  const char* (*GetErrorString)(ncclResult result);
  ncclResult (*AllReduce)(const void* send, void* recv, size_t count, int type, int op, ncclCommHandle comm,
                          NcclStream stream);
  ncclResult (*ReduceScatter)(const void* send, void* recv, size_t recv_count, int type, int op, ncclCommHandle comm,
                              NcclStream stream);
  ncclResult (*AllGather)(const void* send, void* recv, size_t send_count, int type, ncclCommHandle comm,
                          NcclStream stream);
  ncclResult (*Broadcast)(const void* send, void* recv, size_t count, int type, int root, ncclCommHandle comm,
                          NcclStream stream);

  /// The table, loaded once per process; FailedPrecondition naming the library when it is missing.
  static absl::StatusOr<const NcclApi*> Get();
};

}  // namespace gpt_sft::runtime::collectives

#endif  // GPT_SFT_RUNTIME_COLLECTIVES_NCCL_API_H_
