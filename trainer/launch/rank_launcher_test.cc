// Which device a rank opens, and where its local rank comes from.
#include "trainer/launch/rank_launcher.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

TEST(DeviceForLocalRank, CudaWithoutAnIndexIsOneGpuPerLocalRank) {
  EXPECT_EQ(DeviceForLocalRank("cuda", 0), "cuda:0");
  EXPECT_EQ(DeviceForLocalRank("cuda", 3), "cuda:3");
}

TEST(DeviceForLocalRank, AnExplicitIndexTheCpuAndOpenClAreTakenAsGiven) {
  EXPECT_EQ(DeviceForLocalRank("cuda:1", 3), "cuda:1");
  EXPECT_EQ(DeviceForLocalRank("cpu", 3), "cpu");
  EXPECT_EQ(DeviceForLocalRank("opencl", 1), "opencl");
}

TEST(LocalRank, ComesFromTheLauncher) {
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("MPI_LOCALRANKID");
  unsetenv("SLURM_LOCALID");
  EXPECT_EQ(LocalRank(), 0);
  setenv("SLURM_LOCALID", "2", 1);
  EXPECT_EQ(LocalRank(), 2);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);  // Open MPI's wins
  EXPECT_EQ(LocalRank(), 5);
}

}  // namespace
}  // namespace gpt_sft::trainer
