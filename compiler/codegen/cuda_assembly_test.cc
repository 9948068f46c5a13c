// The cuda target's modules assembled at compile time: a fat binary whose header is CUDA's,
// ptxas's report per kernel in the artifact, both kept through the artifact file; without the
// toolkit, PTX as before. And assembly errors carry ptxas's message.
#include "compiler/codegen/cuda_assembly.h"

#include <string>

#include "artifact/artifact.h"
#include "artifact/artifact_file.h"
#include "compiler/builder/step_config.h"
#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

using ::testing::HasSubstr;

StepConfig Tiny() {
  StepConfig config;
  config.model = *ModelConfig::FromDepth(1, 97, 64, 64, 2);
  config.batch_size = 2;
  config.seq_len = 16;
  return config;
}

TEST(CudaAssembly, ModulesAreFatBinariesWithTheAssemblersReport) {
  const std::string toolkit = CudaToolkitPath({});
  absl::StatusOr<artifact::Artifact> a = CompileStep(Tiny(), Target::kCuda);
  ASSERT_TRUE(a.ok()) << a.status();
  if (!CanAssembleCuda(toolkit)) {
    for (const artifact::KernelModule& m : a->modules) EXPECT_EQ(m.format, artifact::ModuleFormat::kPtx);
    EXPECT_THAT(a->target_description, HasSubstr("JIT-compiled at load"));
    GTEST_SKIP() << "no ptxas/fatbinary under " << toolkit << ": the modules stay PTX";
  }
  EXPECT_THAT(a->target_description, HasSubstr("SASS for sm_90 + PTX, assembled by ptxas at compile time"));
  ASSERT_FALSE(a->modules.empty());
  for (const artifact::KernelModule& m : a->modules) {
    EXPECT_EQ(m.format, artifact::ModuleFormat::kCudaFatbin);
    EXPECT_EQ(m.bytes.substr(0, 4), std::string("\x50\xed\x55\xba", 4));  // fatbin magic 0xba55ed50
    for (const std::string& k : m.symbols) {
      EXPECT_THAT(m.assembler_report, HasSubstr("Function properties for " + k));
    }
    EXPECT_THAT(m.assembler_report, HasSubstr("bytes stack frame"));
  }
  // The file keeps both.
  const std::string bytes = artifact::SerializeArtifact(*a);
  absl::StatusOr<artifact::Artifact> back = artifact::ParseArtifact(bytes, "tiny.gptart");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->modules.size(), a->modules.size());
  EXPECT_EQ(back->modules[0].format, artifact::ModuleFormat::kCudaFatbin);
  EXPECT_EQ(back->modules[0].bytes, a->modules[0].bytes);
  EXPECT_EQ(back->modules[0].assembler_report, a->modules[0].assembler_report);
}

TEST(CudaAssembly, BadPtxIsAnErrorCarryingPtxassMessage) {
  const std::string toolkit = CudaToolkitPath({});
  if (!CanAssembleCuda(toolkit)) GTEST_SKIP() << "no ptxas/fatbinary under " << toolkit;
  absl::StatusOr<AssembledCudaModule> bad = AssembleCudaModule(".version 8.0\n.target sm_90\nnonsense;\n", "sm_90",
                                                               toolkit);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("ptxas"));
  EXPECT_FALSE(AssembleCudaModule("", "gfx90a", toolkit).ok());
}

}  // namespace
}  // namespace gpt_sft::compiler
