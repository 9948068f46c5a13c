// --device=cuda on a machine without a usable GPU is one error naming the driver and what
// was found; nothing crashes. Two real situations: no NVIDIA driver library at all (a name
// the loader cannot find), and NVIDIA's own stub libcuda from the toolkit, which loads but
// whose cuInit fails. Where a GPU is present the test runs the device's basics instead.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {
namespace {

// CudaApi::Get loads once per process: each case runs in a child with its own environment.
void ExpectCudaRefused(const std::string& libcuda, const std::string& expected) {
  EXPECT_EXIT(
      {
        setenv("GPT_SFT_LIBCUDA", libcuda.c_str(), 1);
        absl::StatusOr<std::unique_ptr<Device>> d = CreateDevice("cuda");
        if (d.ok()) _exit(3);
        const std::string m(d.status().message());
        if (d.status().code() != absl::StatusCode::kInvalidArgument) _exit(4);
        if (m.find("cuda: ") != 0 || m.find(expected) == std::string::npos) {
          fprintf(stderr, "message: %s\n", m.c_str());
          _exit(5);
        }
        fprintf(stderr, "refused: %s\n", m.c_str());
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "refused: cuda: ");
}

TEST(CudaDevice, NoDriverIsOneClearError) {
  ExpectCudaRefused("libcuda-that-is-not-installed.so.1", "no NVIDIA driver: libcuda-that-is-not-installed.so.1");
}

TEST(CudaDevice, TheToolkitsStubDriverIsOneClearError) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  ExpectCudaRefused(stub, "cuInit failed with CUDA_ERROR_STUB_LIBRARY");
}

TEST(CudaDevice, AnIndexThatIsNoNumberIsRefused) {
  absl::StatusOr<std::unique_ptr<Device>> d = CreateDevice("cuda:x");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("the cuda device index must be a number"), std::string::npos)
      << d.status();
}

TEST(CudaDevice, TheDriverListSaysWhyCudaIsUnavailable) {
  bool listed = false;
  for (const std::string& line : DescribeDrivers()) listed |= line.rfind("cuda", 0) == 0;
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace gpt_sft::runtime::device
