// Every kernel of the depth-4 (the CPU benchmark config; also its bfloat16 step, whose rounding
// is integer code in the fusions) and depth-20 (nanochat's d20: width 1280, 10 heads, vocab
// 65536) steps at [4, 2048], compiled for the cuda target, assembles with
// the CUDA toolkit's ptxas for sm_90. Where no toolkit is installed the test is skipped, saying
// where it looked. The PTX is also checked to carry its kernels and no unresolved call (every
// libdevice function linked in). Both gemm choices of the target are covered: cuBLASLt (the
// matmuls are gemm.f32 builtins, their epilogues generated kernels) and the compiler's
// tiled gemm.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "compiler/codegen/external_tool.h"
#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"
#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

std::string Ptxas() { return CudaToolkitPath({}) + "/bin/ptxas"; }

StepConfig Config(int depth, int n_embd, int heads, int vocab, bool packed) {
  StepConfig config;
  config.model = *ModelConfig::FromDepth(depth, vocab, 2048, n_embd, heads);
  config.batch_size = 4;
  config.seq_len = 2048;
  config.packed = packed;
  return config;
}

int CountBuiltins(const artifact::Artifact& a) {
  int n = 0;
  for (const artifact::Function& f : a.functions) {
    for (const artifact::Launch& l : f.launches) n += l.kind == artifact::LaunchKind::kBuiltin;
  }
  return n;
}

void ExpectEveryKernelAssembles(const StepConfig& config, const std::string& what_config) {
  if (!std::filesystem::exists(Ptxas())) GTEST_SKIP() << "no CUDA toolkit: " << Ptxas() << " does not exist";
  for (const char* gemm : {"cublaslt", "tiled"}) {
    const std::string what = absl::StrCat(what_config, ", gemm=", gemm);
    setenv("GPT_SFT_CUDA_GEMM", gemm, 1);
    absl::StatusOr<artifact::Artifact> a = CompileStep(config, Target::kCuda);
    unsetenv("GPT_SFT_CUDA_GEMM");
    ASSERT_TRUE(a.ok()) << a.status();
    if (std::string(gemm) == "tiled") {
      EXPECT_EQ(CountBuiltins(*a), 0) << what;
    } else {
      EXPECT_GT(CountBuiltins(*a), 0) << what;
    }
    absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-ptxas-test");
    ASSERT_TRUE(dir.ok()) << dir.status();
    int modules = 0;
    size_t kernels = 0;
    for (const artifact::KernelModule& m : a->modules) {
      ASSERT_EQ(m.format, artifact::ModuleFormat::kPtx) << m.name;
      for (const std::string& k : m.symbols) {
        EXPECT_NE(m.bytes.find(absl::StrCat(".entry ", k, "(")), std::string::npos) << what << ": no .entry " << k;
      }
      EXPECT_EQ(m.bytes.find(".extern .func"), std::string::npos) << what << ": an unresolved function in " << m.name;
      const std::string ptx = dir->File(m.name + ".ptx"), cubin = dir->File(m.name + ".cubin");
      ASSERT_TRUE(WriteWholeFile(ptx, m.bytes).ok());
      absl::Status assembled = RunTool({Ptxas(), "-arch=sm_90", ptx, "-o", cubin}, "ptxas");
      EXPECT_TRUE(assembled.ok()) << what << ", gpu.module @" << m.name << ": " << assembled;
      EXPECT_GT(std::filesystem::file_size(cubin), 0u);
      ++modules;
      kernels += m.symbols.size();
    }
    EXPECT_GT(modules, 0);
    std::cout << what << ": " << kernels << " kernels in " << modules << " module(s) assembled for sm_90, "
              << CountBuiltins(*a) << " builtin launches\n";
  }
}

TEST(PtxAssembly, Depth4PaddedStep) { ExpectEveryKernelAssembles(Config(4, 256, 2, 8192, false), "depth 4, padded"); }

TEST(PtxAssembly, Depth4Bfloat16Step) {
  StepConfig config = Config(4, 256, 2, 8192, true);
  config.dtype = ElementType::kBF16;
  ExpectEveryKernelAssembles(config, "depth 4, packed, bfloat16");
}

TEST(PtxAssembly, Depth20PackedStep) {
  ExpectEveryKernelAssembles(Config(20, 1280, 10, 65536, true), "depth 20, packed");
}

}  // namespace
}  // namespace gpt_sft::compiler
