// The attention kernels of nanochat's d20 bf16 step ([4, 2048], width 1280, 10 heads of 128),
// compiled for the cuda target, are the warp-tile kernels (compiler/lowering/gpu/
// flash_attention_*.cc): each one's PTX runs bf16 tensor-core products
// (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32), and ptxas (sm_90, at compile time)
// reports no stack frame and no spills for it: no row lives in local memory. Padded and
// packed (segment ids) steps. Skipped where no CUDA toolkit is installed.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "artifact/artifact.h"
#include "compiler/builder/step_config.h"
#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"
#include "compiler/cost/ptxas_report.h"
#include "gtest/gtest.h"

namespace gpt_sft::compiler {
namespace {

constexpr char kMma[] = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";

/// The PTX of entry `name` in `ptx`: from its .entry to the next (or the end).
std::string EntryText(const std::string& ptx, const std::string& name) {
  const size_t at = ptx.find(absl::StrCat(".entry ", name, "("));
  if (at == std::string::npos) return "";
  const size_t next = ptx.find(".entry ", at + 1);
  return ptx.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

void ExpectTensorCoreAttention(bool packed) {
  const std::string ptxas = CudaToolkitPath({}) + "/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) GTEST_SKIP() << "no CUDA toolkit: " << ptxas << " does not exist";
  StepConfig config;
  config.model = *ModelConfig::FromDepth(20, 65536, 2048, 1280, 10);
  config.batch_size = 4;
  config.seq_len = 2048;
  config.packed = packed;
  config.dtype = ElementType::kBF16;
  absl::StatusOr<artifact::Artifact> a = CompileStep(config, Target::kCuda);
  ASSERT_TRUE(a.ok()) << a.status();
  std::set<std::string> seen;
  for (const artifact::KernelModule& m : a->modules) {
    ASSERT_EQ(m.format, artifact::ModuleFormat::kCudaFatbin) << m.name;
    absl::StatusOr<std::map<std::string, cost::KernelResources>> report = cost::ParsePtxasReport(m.assembler_report);
    ASSERT_TRUE(report.ok()) << report.status();
    for (const std::string& k : m.symbols) {
      if (k.find("attention") == std::string::npos) continue;
      // Every attention kernel but the backward's row dots (delta) is a warp-tile kernel.
      if (k.rfind("attention_grad_delta", 0) == 0 || k.rfind("flash_attention_grad_delta", 0) == 0) continue;
      EXPECT_EQ(k.rfind("flash_attention", 0), 0u) << k << ": not a warp-tile kernel";
      seen.insert(k);
      EXPECT_NE(EntryText(m.source, k).find(kMma), std::string::npos) << k << ": no " << kMma;
      ASSERT_TRUE(report->count(k)) << k << " is not in ptxas's report";
      const cost::KernelResources& r = report->at(k);
      EXPECT_EQ(r.stack_frame_bytes, 0) << k;
      EXPECT_EQ(r.spill_store_bytes, 0) << k;
      EXPECT_EQ(r.spill_load_bytes, 0) << k;
      std::cout << k << ": " << r.registers << " registers, " << r.stack_frame_bytes << " bytes stack, "
                << r.spill_store_bytes << "/" << r.spill_load_bytes << " bytes spilled, " << r.shared_bytes
                << " bytes shared\n";
    }
  }
  EXPECT_FALSE(seen.empty()) << "no attention kernel in the step";
}

TEST(FlashAttentionPtx, D20Bfloat16PaddedStep) { ExpectTensorCoreAttention(/*packed=*/false); }

TEST(FlashAttentionPtx, D20Bfloat16PackedStep) { ExpectTensorCoreAttention(/*packed=*/true); }

}  // namespace
}  // namespace gpt_sft::compiler
