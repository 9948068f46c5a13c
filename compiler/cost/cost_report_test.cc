// BuildCostReport on a real cuda artifact: a depth-2 bfloat16 step (width 256, 2 heads,
// vocab 1024, [2, 128], 2 micro-steps per optimizer step) compiled by the compiler. Checks
// that the report is consistent with itself (rows sum to totals, the step is micro_step x
// accumulation + optimizer_step, MFU in (0, 1]), with the GPU table (an H200 is never slower
// than an H100, an A100 always is), with the launches (gemm FLOPs from their scalars, every
// kernel's bytes from its PTX), and with ptxas where the toolkit is installed.
#include <cmath>
#include <filesystem>

#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"
#include "compiler/cost/cost_report.h"
#include "compiler/cost/cost_report_format.h"
#include "compiler/cost/gpu_spec.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace gpt_sft::compiler::cost {
namespace {

StepConfig SmallConfig() {
  StepConfig config;
  config.model = *ModelConfig::FromDepth(2, 1024, 128, 256, 2);
  config.batch_size = 2;
  config.seq_len = 128;
  config.grad_accum_steps = 2;
  config.dtype = ElementType::kBF16;
  return config;
}

class CostReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<artifact::Artifact> compiled = CompileStep(SmallConfig(), Target::kCuda);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    artifact_ = new artifact::Artifact(*std::move(compiled));
  }
  static void TearDownTestSuite() { delete artifact_; }

  static CostReport Report(const std::string& gpu, const ArtifactResources* resources = nullptr) {
    absl::StatusOr<CostReport> report = BuildCostReport(*artifact_, *FindGpu(gpu), resources, "test");
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : CostReport{};
  }

  static artifact::Artifact* artifact_;
};

artifact::Artifact* CostReportTest::artifact_ = nullptr;

TEST_F(CostReportTest, RowsSumToTheirFunctionsTotals) {
  const CostReport report = Report("h100");
  ASSERT_EQ(report.functions.size(), 4u);
  for (const FunctionCost& f : report.functions) {
    double seconds = 0, flops = 0;
    int64_t bytes = 0;
    for (const LaunchRow& row : f.rows) {
      seconds += row.cost.seconds;
      flops += row.cost.work.flops;
      bytes += row.cost.work.bytes_read + row.cost.work.bytes_written;
    }
    EXPECT_NEAR(seconds, f.totals.seconds, 1e-12 * f.rows.size()) << f.name;
    EXPECT_NEAR(flops, f.totals.TotalFlops(), 1e-6 * flops) << f.name;
    EXPECT_EQ(bytes, f.totals.bytes_read + f.totals.bytes_written) << f.name;
    EXPECT_EQ(static_cast<int64_t>(f.rows.size()), f.totals.launches) << f.name;
    EXPECT_GT(f.totals.seconds, 0) << f.name;
  }
}

TEST_F(CostReportTest, TheStepIsMicroStepsTimesAccumulationPlusTheOptimizerStep) {
  const CostReport report = Report("h100");
  ASSERT_TRUE(report.step.has_value());
  const StepCost& step = *report.step;
  const FunctionCost* micro = nullptr;
  const FunctionCost* optimizer = nullptr;
  for (const FunctionCost& f : report.functions) {
    if (f.name == "micro_step") micro = &f;
    if (f.name == "optimizer_step") optimizer = &f;
  }
  ASSERT_NE(micro, nullptr);
  ASSERT_NE(optimizer, nullptr);
  EXPECT_DOUBLE_EQ(step.seconds, 2 * micro->totals.seconds + optimizer->totals.seconds);
  EXPECT_EQ(step.tokens, 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(step.tokens_per_second, step.tokens / step.seconds);
  EXPECT_GT(step.mfu, 0);
  EXPECT_LE(step.mfu, 1);
  EXPECT_EQ(step.model_flops_per_token, SmallConfig().model.FlopsPerToken());
  EXPECT_LE(step.seconds_without_local, step.seconds);
  double classes = 0;
  for (const ClassCost& c : step.classes) classes += c.seconds;
  EXPECT_NEAR(classes, step.seconds, 1e-9 * step.seconds);
}

TEST_F(CostReportTest, AnH200IsNeverSlowerThanAnH100AndAnA100AlwaysIs) {
  const CostReport h100 = Report("h100"), h200 = Report("h200"), a100 = Report("a100");
  for (size_t f = 0; f < h100.functions.size(); ++f) {
    for (size_t i = 0; i < h100.functions[f].rows.size(); ++i) {
      EXPECT_LE(h200.functions[f].rows[i].cost.seconds, h100.functions[f].rows[i].cost.seconds)
          << h100.functions[f].name << " launch " << i;
    }
    EXPECT_GT(a100.functions[f].totals.seconds, h100.functions[f].totals.seconds) << h100.functions[f].name;
  }
  EXPECT_LT(h200.step->seconds, h100.step->seconds);
  EXPECT_GT(h200.step->mfu, h100.step->mfu);
}

// Under bf16 storage a gemm of two bf16 buffers is gemm.bf16 (bf16 tensor cores); one with an
// f32 operand of bf16 values stays gemm.f32 (TF32 tensor cores).
TEST_F(CostReportTest, EveryGemmIsTwoMnkOnTensorCoresInABf16Step) {
  const CostReport report = Report("h100");
  int bf16_gemms = 0;
  for (size_t f = 0; f < report.functions.size(); ++f) {
    for (const LaunchRow& row : report.functions[f].rows) {
      if (row.name != "gemm.f32" && row.name != "gemm.bf16") continue;
      const artifact::Launch& l = artifact_->functions[f].launches[row.index];
      EXPECT_DOUBLE_EQ(row.cost.work.flops, 2.0 * l.args[0].scalar.i * l.args[1].scalar.i * l.args[2].scalar.i);
      EXPECT_EQ(row.cost.work.unit,
                row.name == "gemm.bf16" ? ComputeUnit::kBf16TensorCore : ComputeUnit::kTf32TensorCore)
          << row.op;
      if (row.name == "gemm.bf16") ++bf16_gemms;
    }
  }
  EXPECT_GT(bf16_gemms, 0);
}

TEST_F(CostReportTest, EveryKernelsBytesComeFromItsPtx) {
  const CostReport report = Report("h100");
  for (const FunctionCost& f : report.functions) {
    for (const LaunchRow& row : f.rows) {
      if (row.kind != "kernel") continue;
      EXPECT_TRUE(row.cost.work.note.empty()) << f.name << " " << row.index << " " << row.name << ": "
                                             << row.cost.work.note;
      EXPECT_GT(row.cost.work.bytes_written, 0) << f.name << " " << row.index << " " << row.name << " stores nothing";
    }
  }
}

TEST_F(CostReportTest, WithoutPtxasNothingIsChargedForLocalMemory) {
  const CostReport report = Report("h100");
  EXPECT_FALSE(report.have_ptxas);
  for (const FunctionCost& f : report.functions) EXPECT_EQ(f.totals.local_bytes, 0) << f.name;
  EXPECT_NE(CostReportText(report).find("n/a (no ptxas)"), std::string::npos);
}

TEST_F(CostReportTest, PtxasFindsNoKernelInLocalMemory) {
  const std::string ptxas = CudaToolkitPath({}) + "/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) GTEST_SKIP() << "no CUDA toolkit: " << ptxas << " does not exist";
  absl::StatusOr<ArtifactResources> resources = RunPtxas(*artifact_, ptxas);
  ASSERT_TRUE(resources.ok()) << resources.status();
  const CostReport report = Report("h100", &*resources);
  EXPECT_TRUE(report.have_ptxas);
  for (const FunctionCost& f : report.functions) {
    for (const LaunchRow& row : f.rows) {
      if (row.kind != "kernel") continue;
      ASSERT_TRUE(row.cost.resources.has_value()) << row.name << " is not in the ptxas report";
      EXPECT_GT(row.cost.resources->registers, 0) << row.name;
      // Under bf16 autocast attention runs on the warp-tile kernels: no kernel keeps a row
      // in local memory (DESIGN.md).
      EXPECT_EQ(row.cost.local_bytes, 0) << row.name;
    }
  }
}

TEST_F(CostReportTest, JsonCarriesTheSameFigures) {
  const CostReport report = Report("a100");
  const nlohmann::json j = nlohmann::json::parse(CostReportJson(report));
  EXPECT_EQ(j["gpu"]["name"], "a100");
  ASSERT_EQ(j["functions"].size(), report.functions.size());
  for (size_t f = 0; f < report.functions.size(); ++f) {
    EXPECT_EQ(j["functions"][f]["name"], report.functions[f].name);
    EXPECT_DOUBLE_EQ(j["functions"][f]["totals"]["seconds"].get<double>(), report.functions[f].totals.seconds);
    EXPECT_EQ(j["functions"][f]["launches"].size(), report.functions[f].rows.size());
  }
  EXPECT_DOUBLE_EQ(j["step"]["mfu"].get<double>(), report.step->mfu);
  EXPECT_EQ(j["step"]["tokens"], report.step->tokens);
}

TEST_F(CostReportTest, OnlyCudaArtifactsArePriced) {
  artifact::Artifact opencl = *artifact_;
  opencl.target = "opencl";
  absl::StatusOr<CostReport> report = BuildCostReport(opencl, *FindGpu("h100"), nullptr, "test");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("opencl"), std::string::npos) << report.status();
}

}  // namespace
}  // namespace gpt_sft::compiler::cost
