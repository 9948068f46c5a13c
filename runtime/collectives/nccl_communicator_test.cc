// Built only where the CUDA toolkit is detected. Without a GPU (this machine) it checks that
// MakeNcclCommunicator refuses with an error naming the missing device; with one, that a world
// of one rank (bootstrapped by the single-rank communicator) reduces and gathers device buffers.
// Multi-rank NCCL runs on a GPU machine under run_ranks.sh with MakeMpiCommunicator as bootstrap.
#include "runtime/collectives/nccl_communicator.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::collectives {
namespace {

bool HasCudaDevice() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

TEST(NcclCommunicator, WithoutADeviceTheErrorSaysSo) {
  if (HasCudaDevice()) GTEST_SKIP() << "a CUDA device is present";
  std::unique_ptr<Communicator> bootstrap = MakeSingleRankCommunicator();
  auto made = MakeNcclCommunicator(*bootstrap);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(made.status().message()).find("rank 0: no CUDA device"), std::string::npos) << made.status();
}

TEST(NcclCommunicator, OneRankReducesAndGathersDeviceBuffers) {
  if (!HasCudaDevice()) GTEST_SKIP() << "no CUDA device here";
  std::unique_ptr<Communicator> bootstrap = MakeSingleRankCommunicator();
  auto made = MakeNcclCommunicator(*bootstrap);
  ASSERT_TRUE(made.ok()) << made.status();
  Communicator& nccl = **made;
  EXPECT_EQ(nccl.backend(), "nccl");
  EXPECT_EQ(nccl.memory_space(), MemorySpace::kCuda);
  const std::vector<float> host = {1, -2, 3, 4.5f, 5, 6, 7};
  float* a = nullptr;
  float* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, host.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, host.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
    EXPECT_TRUE(nccl.AllReduce(a, 7, DataType::kFloat32, op).ok());
  }
  EXPECT_TRUE(nccl.AllGather(a, b, 7, DataType::kFloat32).ok());
  EXPECT_TRUE(nccl.Broadcast(b, 7, DataType::kFloat32, 0).ok());
  EXPECT_TRUE(nccl.Barrier().ok());
  std::vector<float> back(host.size());
  ASSERT_EQ(cudaMemcpy(back.data(), b, back.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  cudaFree(a);
  cudaFree(b);
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives
