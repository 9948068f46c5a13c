#include "compiler/cost/gpu_spec.h"

#include "gtest/gtest.h"

namespace gpt_sft::compiler::cost {
namespace {

TEST(GpuSpec, FindsEachKnownGpuByItsFlagSpelling) {
  for (const char* name : {"h100", "h200", "a100", "H100"}) {
    absl::StatusOr<GpuSpec> gpu = FindGpu(name);
    ASSERT_TRUE(gpu.ok()) << name << ": " << gpu.status();
    EXPECT_GT(gpu->bf16_tensor_flops, gpu->tf32_tensor_flops) << name;
    EXPECT_GT(gpu->tf32_tensor_flops, gpu->fp32_flops) << name;
    EXPECT_GT(gpu->l2_bytes_per_second, gpu->dram_bytes_per_second) << name;
    EXPECT_FALSE(gpu->source.empty()) << name;
  }
}

TEST(GpuSpec, UnknownGpuIsAnErrorListingTheKnownOnes) {
  absl::StatusOr<GpuSpec> gpu = FindGpu("v100");
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(gpu.status().message().find("'v100'"), std::string::npos) << gpu.status();
  EXPECT_NE(gpu.status().message().find("h100, h200, a100"), std::string::npos) << gpu.status();
}

TEST(GpuSpec, H200IsAnH100WithFasterMemory) {
  const GpuSpec h100 = *FindGpu("h100"), h200 = *FindGpu("h200");
  for (ComputeUnit unit : {ComputeUnit::kBf16TensorCore, ComputeUnit::kTf32TensorCore, ComputeUnit::kFp32Core}) {
    EXPECT_EQ(h100.PeakFlops(unit), h200.PeakFlops(unit)) << ComputeUnitName(unit);
  }
  EXPECT_DOUBLE_EQ(h100.dram_bytes_per_second, 3.35e12);
  EXPECT_DOUBLE_EQ(h200.dram_bytes_per_second, 4.8e12);
  EXPECT_EQ(h100.PeakFlops(ComputeUnit::kNone), 0);
}

}  // namespace
}  // namespace gpt_sft::compiler::cost
