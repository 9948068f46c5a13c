// --dtype=bfloat16 (nanochat's autocast rounding, gpt-autocast-bf16) against float32 and
// across the paths that run it: a depth-2, width-128 model (nanochat's init, random lm_head),
// two-document batches [4, 256], 4 optimizer steps of 2 micro-batches (AdamW and Muon).
//
// Tolerances, and why:
//   * bf16 vs f32, the same path: every micro-batch loss within 2e-2 relative. bf16 keeps 8
//     significant bits (relative rounding error up to 2^-9 ~ 2e-3 per rounding); a loss is a
//     mean over many tokens of errors that partly cancel, and PyTorch's own bf16-vs-fp32 gap
//     on trained models is of order 1e-3..1e-2. This random model's logits are near uniform,
//     so the measured gap is far smaller (~1e-5). Every loss must still differ from f32's, so
//     a step that silently skipped the rounding fails.
//   * compiled bf16 vs the interpreter's bf16 (cpu and opencl): the same roundings of the
//     same f32 values, so they agree to f32 accumulation-order noise, except where that noise
//     moves a value across a bf16 rounding boundary (one bf16 ulp, 2^-8 relative, for that
//     element). Losses within 5e-5 (measured opencl 1.0e-5), and on cpu equal bit for bit: it
//     runs the interpreter's kernels, the bf16 matmuls' (oneDNN or the fallback) included. After the run the Muon matrices within 1e-4 (measured ~1e-5);
//     the AdamW tensors (wte, lm_head) within 1e-2 (measured 6.4e-3, 4.4e-3): AdamW divides by
//     sqrt(v), so an element whose gradient is near zero still moves by about lr, and one
//     rounding flip in that gradient can flip the direction of the move.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/device/device.h"
#include "trainer/batch_tensors.h"
#include "trainer/eager_step.h"
#include "trainer/step_compile.h"
#include "trainer/step_testing.h"

namespace gpt_sft {
namespace {

constexpr int kSteps = 4, kAccum = 2, kB = 4, kT = 256, kVocab = 512;
constexpr double kBf16VsF32Tolerance = 2e-2;
constexpr double kCompiledTolerance = 5e-5;
constexpr double kMuonParamTolerance = 1e-4, kAdamwParamTolerance = 1e-2;

compiler::StepConfig Config(compiler::ElementType dtype) {
  compiler::StepConfig c;
  c.model = *compiler::ModelConfig::FromDepth(2, kVocab, kT, /*n_embd=*/128, /*n_head=*/2);
  c.batch_size = kB;
  c.seq_len = kT;
  c.packed = true;
  c.grad_accum_steps = kAccum;
  c.dtype = dtype;
  return c;
}

std::vector<trainer::StepBatch> Batches() {
  std::vector<trainer::StepBatch> batches;
  for (int i = 0; i < kSteps * kAccum; ++i) {
    batches.push_back(trainer::ToStepBatch(trainer::testing::TwoDocumentBatch(100 + i, kB, kT, kVocab), true));
  }
  return batches;
}

/// The micro-batch losses of kSteps optimizer steps; `params` is left trained.
std::vector<double> Train(trainer::TrainStep& step, const std::vector<trainer::StepBatch>& batches) {
  std::vector<double> losses;
  for (int it = 0; it < kSteps; ++it) {
    for (int m = 0; m < kAccum; ++m) {
      absl::StatusOr<double> loss = step.MicroStep(batches[it * kAccum + m]);
      EXPECT_TRUE(loss.ok()) << loss.status();
      losses.push_back(loss.ok() ? *loss : NAN);
    }
    EXPECT_TRUE(step.OptimizerStep(1.0 - double(it) / kSteps).ok());
  }
  return losses;
}

std::vector<double> TrainEager(compiler::ElementType dtype, runtime::ParamStore* params) {
  auto step = trainer::EagerStep::Create(Config(dtype), params);
  EXPECT_TRUE(step.ok()) << step.status();
  if (!step.ok()) return {};
  return Train(**step, Batches());
}

double RelDiff(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

/// Per parameter, max |actual - reference| over max |reference| (what MaxRelDiff maximises).
std::map<std::string, double> ParamRelDiffs(const runtime::ParamStore& actual, const runtime::ParamStore& reference) {
  std::map<std::string, double> diffs;
  for (size_t i = 0; i < actual.params().size(); ++i) {
    const runtime::Param& a = actual.params()[i];
    const runtime::Param& b = reference.params()[i];
    double diff = 0, scale = 1e-30;
    for (int64_t j = 0; j < a.numel(); ++j) {
      diff = std::max(diff, double(std::fabs(a.data()[j] - b.data()[j])));
      scale = std::max(scale, double(std::fabs(b.data()[j])));
    }
    diffs[a.name] = diff / scale;
  }
  return diffs;
}

TEST(Bf16Training, InterpreterBf16StaysNearF32ButIsNotF32) {
  runtime::ParamStore f32_params = trainer::testing::RandomParams(Config(compiler::ElementType::kF32).model);
  runtime::ParamStore bf16_params = trainer::testing::RandomParams(Config(compiler::ElementType::kBF16).model);
  const std::vector<double> f32 = TrainEager(compiler::ElementType::kF32, &f32_params);
  const std::vector<double> bf16 = TrainEager(compiler::ElementType::kBF16, &bf16_params);
  ASSERT_EQ(f32.size(), bf16.size());
  double worst = 0, least = 1;
  for (size_t i = 0; i < f32.size(); ++i) {
    const double d = RelDiff(bf16[i], f32[i]);
    worst = std::max(worst, d);
    least = std::min(least, d);
    EXPECT_LE(d, kBf16VsF32Tolerance) << "micro-batch " << i << ": bf16 " << bf16[i] << ", f32 " << f32[i];
  }
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_NE(bf16[i], f32[i]) << "micro-batch " << i << ": bf16 equals f32, so the rounding is not in the step";
  }
  std::cout << "parameters after the run, bf16 vs f32: " << trainer::testing::MaxRelDiff(bf16_params, f32_params)
            << std::endl;
  EXPECT_LT(f32.back(), f32.front()) << "training moved nothing";
  std::cout << "interpreter: bf16 vs f32 loss, worst relative difference " << worst << ", least " << least
            << " (first losses " << bf16.front() << " vs " << f32.front() << ", last " << bf16.back() << " vs "
            << f32.back() << ")" << std::endl;
}

class Bf16Compiled : public ::testing::TestWithParam<std::string> {};

TEST_P(Bf16Compiled, MatchesTheInterpreterBf16AndStaysNearF32) {
  // "opencl_clblast": the opencl step with its matmuls through the vendor-gemm builtins, bf16
  // operands as gemm.bf16 (what cuda's cuBLASLt runs), checked here on CLBlast.
  const bool clblast = GetParam() == "opencl_clblast";
  const std::string device = clblast ? "opencl" : GetParam();
  if (absl::StatusOr<std::unique_ptr<runtime::device::Device>> d = runtime::device::CreateDevice(device); !d.ok()) {
    GTEST_SKIP() << device << ": " << d.status().message();
  }
  const compiler::StepConfig config = Config(compiler::ElementType::kBF16);
  runtime::ParamStore eager_params = trainer::testing::RandomParams(config.model);
  runtime::ParamStore compiled_params = trainer::testing::RandomParams(config.model);
  runtime::ParamStore f32_params = trainer::testing::RandomParams(config.model);
  const std::vector<double> eager = TrainEager(compiler::ElementType::kBF16, &eager_params);
  const std::vector<double> f32 = TrainEager(compiler::ElementType::kF32, &f32_params);
  trainer::DeviceStepOptions options;
  options.device = device;
  if (clblast) setenv("GPT_SFT_OPENCL_GEMM", "clblast", 1);
  auto compiled = trainer::CompileDeviceStep(config, &compiled_params, /*cache_dir=*/"", options);
  if (clblast) unsetenv("GPT_SFT_OPENCL_GEMM");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::vector<double> losses = Train(**compiled, Batches());
  ASSERT_EQ(losses.size(), eager.size());
  double worst_vs_eager = 0, worst_vs_f32 = 0;
  for (size_t i = 0; i < losses.size(); ++i) {
    worst_vs_eager = std::max(worst_vs_eager, RelDiff(losses[i], eager[i]));
    worst_vs_f32 = std::max(worst_vs_f32, RelDiff(losses[i], f32[i]));
    EXPECT_LE(RelDiff(losses[i], eager[i]), kCompiledTolerance) << "micro-batch " << i;
    // The cpu step runs the interpreter's kernels (the bf16 matmuls' too): bit for bit.
    if (device == "cpu") {
      EXPECT_EQ(losses[i], eager[i]) << "micro-batch " << i;
    }
    EXPECT_LE(RelDiff(losses[i], f32[i]), kBf16VsF32Tolerance) << "micro-batch " << i;
  }
  ASSERT_TRUE((*compiled)->SyncParamsToHost().ok());
  const double params = trainer::testing::MaxRelDiff(compiled_params, eager_params);
  // The cpu step's Muon (its same-shape updates in one launch, muon_group_bf16) too.
  if (device == "cpu") {
    EXPECT_EQ(params, 0.0) << "the cpu step's parameters are not the interpreter's bits";
  }
  for (const auto& [name, diff] : ParamRelDiffs(compiled_params, eager_params)) {
    const bool adamw = name == "transformer.wte.weight" || name == "lm_head.weight";
    EXPECT_LE(diff, adamw ? kAdamwParamTolerance : kMuonParamTolerance) << name;
  }
  EXPECT_EQ((*compiled)->Recompilations(), 0);
  std::cout << GetParam() << ": compiled bf16 vs interpreter bf16, worst loss difference " << worst_vs_eager
            << ", parameters " << params << "; vs interpreter f32, worst loss difference " << worst_vs_f32
            << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Devices, Bf16Compiled, ::testing::Values("cpu", "opencl", "opencl_clblast"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace gpt_sft
