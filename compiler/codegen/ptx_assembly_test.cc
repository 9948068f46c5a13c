// Every kernel of the depth-4 (the CPU benchmark config; also its bfloat16 step, whose rounding
// is integer code in the fusions) and depth-20 (nanochat's d20: width 1280, 10 heads, vocab
// 65536) steps at [4, 2048], compiled for the cuda target, is assembled by the compiler itself
// with the CUDA toolkit's ptxas for sm_90 into a fat binary (SASS + PTX), ptxas's report naming
// every kernel (an unresolved call, e.g. a libdevice function not linked in, fails the
// compile). Where no toolkit is installed the test is skipped, saying where it looked. Both
// gemm choices of the target are covered: cuBLASLt (the
// matmuls are gemm.f32 builtins, their epilogues generated kernels) and the compiler's
// tiled gemm.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "artifact/artifact.h"
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
    // The compiler ran ptxas (and fatbinary) itself: each module is a fat binary, and ptxas's
    // report names every kernel (an unresolved function, e.g. a libdevice call not linked in,
    // would have failed the compile).
    int modules = 0;
    size_t kernels = 0, with_stack = 0;
    for (const artifact::KernelModule& m : a->modules) {
      ASSERT_EQ(m.format, artifact::ModuleFormat::kCudaFatbin) << m.name;
      ASSERT_GE(m.bytes.size(), 4u);
      EXPECT_EQ(m.bytes.substr(0, 4), std::string("\x50\xed\x55\xba", 4)) << what << ": not a fat binary";
      for (const std::string& k : m.symbols) {
        EXPECT_NE(m.assembler_report.find(absl::StrCat("Compiling entry function '", k, "' for 'sm_90'")),
                  std::string::npos)
            << what << ": ptxas did not report " << k;
      }
      for (size_t at = m.assembler_report.find(" bytes stack frame"); at != std::string::npos;
           at = m.assembler_report.find(" bytes stack frame", at + 1)) {
        const size_t line = m.assembler_report.rfind('\n', at) + 1;
        with_stack += m.assembler_report.compare(line, at - line, "    0") != 0;
      }
      ++modules;
      kernels += m.symbols.size();
    }
    EXPECT_GT(modules, 0);
    std::cout << what << ": " << kernels << " kernels in " << modules << " module(s) assembled for sm_90 at compile "
              << "time (" << with_stack << " with a stack frame), " << CountBuiltins(*a) << " builtin launches\n";
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
