// Runs on every machine (NCCL and the CUDA driver are dlopened). Without a GPU (this machine)
// it checks that MakeNcclCommunicator refuses with an error naming the rank and the missing
// device, after taking part in the id's broadcast; with one, that a world of one rank
// (bootstrapped by the single-rank communicator) reduces and gathers device buffers, which it
// allocates through the same driver API. Multi-rank NCCL runs on a GPU machine under
// run_ranks.sh with MakeMpiCommunicator as bootstrap.
#include "runtime/collectives/nccl_communicator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/device/cuda/cuda_api.h"

namespace gpt_sft::runtime::collectives {
namespace {

using device::cuda::CudaApi;
using device::cuda::kCudaSuccess;

/// The driver, started, when it sees a GPU; else null.
const CudaApi* CudaWithADevice() {
  absl::StatusOr<const CudaApi*> cu = CudaApi::Get();
  int devices = 0;
  if (!cu.ok() || (*cu)->Init(0) != kCudaSuccess || (*cu)->DeviceGetCount(&devices) != kCudaSuccess || devices == 0) {
    return nullptr;
  }
  return *cu;
}

TEST(NcclCommunicator, WithoutADeviceTheErrorSaysSo) {
  if (CudaWithADevice() != nullptr) GTEST_SKIP() << "a CUDA device is present";
  std::unique_ptr<Communicator> bootstrap = MakeSingleRankCommunicator();
  auto made = MakeNcclCommunicator(*bootstrap);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(made.status().message()).find("MakeNcclCommunicator on rank 0: no CUDA device"),
            std::string::npos)
      << made.status();
}

TEST(NcclCommunicator, OneRankReducesAndGathersDeviceBuffers) {
  const CudaApi* cu = CudaWithADevice();
  if (cu == nullptr) GTEST_SKIP() << "no CUDA device here";
  std::unique_ptr<Communicator> bootstrap = MakeSingleRankCommunicator();
  auto made = MakeNcclCommunicator(*bootstrap);
  ASSERT_TRUE(made.ok()) << made.status();
  Communicator& nccl = **made;
  EXPECT_EQ(nccl.backend(), "nccl");
  EXPECT_EQ(nccl.memory_space(), MemorySpace::kCuda);
  const std::vector<float> host = {1, -2, 3, 4.5f, 5, 6, 7};
  const size_t bytes = host.size() * sizeof(float);
  device::cuda::CUdeviceptr a = 0, b = 0;  // in the primary context the communicator made current
  ASSERT_EQ(cu->MemAlloc(&a, bytes), kCudaSuccess);
  ASSERT_EQ(cu->MemAlloc(&b, bytes), kCudaSuccess);
  ASSERT_EQ(cu->MemcpyHtoD(a, host.data(), bytes), kCudaSuccess);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
    EXPECT_TRUE(nccl.AllReduce(reinterpret_cast<void*>(a), 7, DataType::kFloat32, op).ok());
  }
  EXPECT_TRUE(nccl.AllGather(reinterpret_cast<void*>(a), reinterpret_cast<void*>(b), 7, DataType::kFloat32).ok());
  EXPECT_TRUE(nccl.Broadcast(reinterpret_cast<void*>(b), 7, DataType::kFloat32, 0).ok());
  EXPECT_TRUE(nccl.Barrier().ok());
  std::vector<float> back(host.size());
  ASSERT_EQ(cu->MemcpyDtoH(back.data(), b, bytes), kCudaSuccess);
  EXPECT_EQ(back, host);
  cu->MemFree(a);
  cu->MemFree(b);
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives
