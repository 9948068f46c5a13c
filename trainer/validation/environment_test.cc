#include "trainer/validation/environment.h"

#include <filesystem>
#include <fstream>

#include "artifact/artifact_file.h"
#include "gtest/gtest.h"

namespace gpt_sft::trainer::validation {
namespace {

TEST(CpuModelFromCpuinfo, TakesTheFirstModelName) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
                                "processor\t: 1\nmodel name\t: AMD EPYC 7B13\n"),
            "AMD EPYC 7B13");
  EXPECT_EQ(CpuModelFromCpuinfo("processor : 0\n"), "");
}

TEST(CompilerVersionFromCache, ReadsTheArtifactsManifest) {
  const std::string dir = ::testing::TempDir() + "/cache";
  std::filesystem::create_directories(dir + "/abc");
  artifact::Artifact a;
  a.key = "abc";
  a.compiler_version = "gptc-9";
  a.target = "cpu";
  std::ofstream(dir + "/abc/step.gptart", std::ios::binary) << artifact::SerializeArtifact(a);
  EXPECT_EQ(CompilerVersionFromCache(dir, "abc"), "gptc-9");
  EXPECT_EQ(CompilerVersionFromCache(dir, "missing"), "");
  std::filesystem::create_directories(dir + "/bad");
  std::ofstream(dir + "/bad/step.gptart") << "not an artifact";
  EXPECT_EQ(CompilerVersionFromCache(dir, "bad"), "");
}

TEST(CollectEnvironment, ReadsThisMachine) {
  const Environment e = CollectEnvironment();
  EXPECT_GT(e.cpu_cores, 0);
  EXPECT_GT(e.cpus_usable, 0);
  EXPECT_FALSE(e.cpu_model.empty());
  EXPECT_FALSE(e.gpu.empty());
  EXPECT_EQ(e.packages.size(), ReportedPackages().size());
  // The build itself needs LLVM, so dpkg knows a version for it.
  EXPECT_EQ(e.packages[0].first, "LLVM (llvm-19-dev)");
  EXPECT_NE(e.packages[0].second, "not installed");
  EXPECT_NE(e.cxx_compiler, "unknown");
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
