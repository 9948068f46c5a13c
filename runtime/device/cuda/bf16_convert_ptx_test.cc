// The driver's hand-written conversion PTX assembles for sm_90 with the toolkit's ptxas (a
// typo would otherwise surface only on a GPU, as a JIT error); skipped where there is no ptxas.
#include "runtime/device/cuda/bf16_convert_ptx.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::device::cuda {
namespace {

TEST(Bf16ConvertPtx, AssemblesForSm90) {
  const std::string ptxas = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) GTEST_SKIP() << "no CUDA toolkit: " << ptxas << " does not exist";
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  const std::string ptx = dir + "/bf16_convert.ptx", cubin = dir + "/bf16_convert.cubin", log = dir + "/ptxas.log";
  std::ofstream(ptx) << kBf16ConvertPtx;
  const std::string command = ptxas + " -arch=sm_90 -v " + ptx + " -o " + cubin + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(status, 0) << report;
  EXPECT_NE(report.find(kF32ToBf16Kernel), std::string::npos) << report;
  EXPECT_NE(report.find(kBf16ToF32Kernel), std::string::npos) << report;
}

}  // namespace
}  // namespace gpt_sft::runtime::device::cuda
