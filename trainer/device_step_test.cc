// The compiled step on each device (cpu, opencl, opencl with CLBlast gemms) against the interpreter (EagerStep), on the
// same random model and batches: every micro-batch loss within 1e-5 relative and the parameters
// after the run within 1e-4 (the bar), padded and packed; plus the refusals and the
// artifact cache.
#include "trainer/device_step.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "compiler/codegen/step_compiler.h"
#include "data/collate/batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"
#include "trainer/batch_tensors.h"
#include "trainer/eager_step.h"
#include "trainer/step_compile.h"
#include "trainer/step_testing.h"

namespace gpt_sft::trainer {
namespace {

constexpr int kVocab = 97, kB = 2, kT = 16;

compiler::StepConfig Config(bool packed, int accum) {
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromDepth(1, kVocab, 64, 64, 2);
  config.batch_size = kB;
  config.seq_len = kT;
  config.packed = packed;
  config.grad_accum_steps = accum;
  return config;
}

data::Batch RandomBatch(uint32_t seed, int T = kT) { return testing::TwoDocumentBatch(seed, kB, T, kVocab); }
runtime::ParamStore RandomParams() { return testing::RandomParams(Config(false, 1).model); }
using testing::MaxRelDiff;

class DeviceStepTest : public ::testing::TestWithParam<std::string> {
 protected:
  absl::StatusOr<std::unique_ptr<DeviceStep>> Make(const compiler::StepConfig& config, runtime::ParamStore* params,
                                                   const std::string& cache_dir = "") {
    // "opencl_clblast": the opencl step with its matmuls through CLBlast (the gemm.f32 builtin),
    // which checks the compiler's vendor-gemm lowering (the one cuda's cuBLASLt runs) here.
    const bool clblast = GetParam() == "opencl_clblast";
    DeviceStepOptions options;
    options.device = clblast ? "opencl" : GetParam();
    if (clblast) setenv("GPT_SFT_OPENCL_GEMM", "clblast", 1);
    absl::StatusOr<std::unique_ptr<DeviceStep>> step = CompileDeviceStep(config, params, cache_dir, options);
    if (clblast) unsetenv("GPT_SFT_OPENCL_GEMM");
    return step;
  }
  void ExpectCompiledMatchesEager(bool packed);
};

void DeviceStepTest::ExpectCompiledMatchesEager(bool packed) {
  const compiler::StepConfig config = Config(packed, 2);
  runtime::ParamStore eager_params = RandomParams(), compiled_params = RandomParams();
  auto eager = EagerStep::Create(config, &eager_params);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto compiled = Make(config, &compiled_params);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_GT((*compiled)->compile_report().kernels, 0);
  // The micro-step's matmuls are builtin launches exactly when CLBlast takes them.
  const bool has_gemm_builtin = (*compiled)->compile_report().summary.find("builtin") != std::string::npos;
  EXPECT_EQ(has_gemm_builtin, GetParam() == "opencl_clblast" || GetParam() == "cpu") << (*compiled)->compile_report().summary;
  // ... and the [VALIDATION] line says which gemm runs.
  const std::string note = (*compiled)->compile_report().kernels_note;
  EXPECT_EQ(note, GetParam() == "cpu"              ? ""
                  : GetParam() == "opencl_clblast" ? "matmuls: CLBlast; attention: the compiler's flash kernels"
                                                   : "matmuls: the compiler's tiled gemm; attention: the compiler's flash kernels");
  EXPECT_NE((*compiled)->ValidationLine().find(note), std::string::npos);
  uint32_t seed = 1;
  for (int step = 0; step < 6; ++step) {
    for (int m = 0; m < 2; ++m) {
      const data::Batch batch = RandomBatch(seed++);
      absl::StatusOr<double> a = (*eager)->MicroStep(ToStepBatch(batch, packed));
      absl::StatusOr<double> b = (*compiled)->MicroStep(ToStepBatch(batch, packed));
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_NEAR(*b, *a, 1e-5 * std::abs(*a)) << "step " << step << " micro " << m;
    }
    const double lrm = 1.0 - step / 6.0;
    const absl::Status eager_step = (*eager)->OptimizerStep(lrm), compiled_step = (*compiled)->OptimizerStep(lrm);
    ASSERT_TRUE(eager_step.ok()) << eager_step;
    ASSERT_TRUE(compiled_step.ok()) << compiled_step;
  }
  ASSERT_TRUE((*compiled)->SyncParamsToHost().ok());
  EXPECT_LT(MaxRelDiff(compiled_params, eager_params), 1e-4);
  EXPECT_EQ((*compiled)->Recompilations(), 0);
  EXPECT_GT(MaxRelDiff(RandomParams(), eager_params), 1e-3) << "training moved nothing";
}

TEST_P(DeviceStepTest, MatchesTheInterpreterPadded) { ExpectCompiledMatchesEager(false); }
TEST_P(DeviceStepTest, MatchesTheInterpreterPacked) { ExpectCompiledMatchesEager(true); }

// The bf16 step (bf16 storage on the GPU targets, gemm.bf16 through CLBlast, Muon's
// Newton-Schulz in bf16): 20 micro-steps, padded and packed. Storage is exact (every value
// stored as bf16 is a bf16 value), so what differs from the interpreter is summation order,
// which a bf16 rounding point can carry one bf16 ulp further now and then.
TEST_P(DeviceStepTest, Bf16MatchesTheInterpreterPaddedAndPacked) {
  for (const bool packed : {false, true}) {
    compiler::StepConfig config = Config(packed, 2);
    config.dtype = compiler::ElementType::kBF16;
    runtime::ParamStore eager_params = RandomParams(), compiled_params = RandomParams();
    auto eager = EagerStep::Create(config, &eager_params);
    ASSERT_TRUE(eager.ok()) << eager.status();
    auto compiled = Make(config, &compiled_params);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    uint32_t seed = 1;
    double worst = 0;
    for (int step = 0; step < 10; ++step) {
      for (int m = 0; m < 2; ++m) {
        const data::Batch batch = RandomBatch(seed++);
        absl::StatusOr<double> a = (*eager)->MicroStep(ToStepBatch(batch, packed));
        absl::StatusOr<double> b = (*compiled)->MicroStep(ToStepBatch(batch, packed));
        ASSERT_TRUE(a.ok()) << a.status();
        ASSERT_TRUE(b.ok()) << b.status();
        worst = std::max(worst, std::abs(*b - *a) / std::abs(*a));
        EXPECT_NEAR(*b, *a, 1e-4 * std::abs(*a)) << "step " << step << " micro " << m << " packed " << packed;
      }
      const double lrm = 1.0 - step / 10.0;
      ASSERT_TRUE((*eager)->OptimizerStep(lrm).ok());
      ASSERT_TRUE((*compiled)->OptimizerStep(lrm).ok());
    }
    ASSERT_TRUE((*compiled)->SyncParamsToHost().ok());
    // Per tensor: Muon's matrices within 1e-3; AdamW's (wte, lm_head) looser, as in
    // //tests:bf16_training_test: AdamW divides by sqrt(v), so a last-bit difference in a
    // small bf16 gradient moves its update by far more than its relative size.
    for (size_t i = 0; i < compiled_params.params().size(); ++i) {
      const runtime::Param& pa = compiled_params.params()[i];
      const runtime::Param& pb = eager_params.params()[i];
      double diff = 0, scale = 1e-30;
      for (int64_t j = 0; j < pa.numel(); ++j) {
        diff = std::max(diff, double(std::abs(pa.data()[j] - pb.data()[j])));
        scale = std::max(scale, double(std::abs(pb.data()[j])));
      }
      const bool adamw = pa.name == "transformer.wte.weight" || pa.name == "lm_head.weight";
      std::cout << GetParam() << (packed ? " packed " : " padded ") << pa.name << ": " << diff / scale << std::endl;
      EXPECT_LT(diff / scale, adamw ? 3e-2 : 1e-3) << pa.name << (packed ? " packed" : " padded");
    }
    std::cout << GetParam() << (packed ? " packed" : " padded") << " bf16: worst loss difference " << worst
              << ", parameters " << MaxRelDiff(compiled_params, eager_params) << std::endl;
    EXPECT_EQ((*compiled)->Recompilations(), 0);
  }
}

// The trainer gives the arena back around every evaluation; the steps after must not notice.
TEST_P(DeviceStepTest, ReleasingTheScratchBetweenRunsChangesNothing) {
  const compiler::StepConfig config = Config(/*packed=*/true, 2);
  runtime::ParamStore kept_params = RandomParams(), released_params = RandomParams();
  auto kept = Make(config, &kept_params);
  auto released = Make(config, &released_params);
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(released.ok()) << released.status();
  uint32_t seed = 7;
  for (int step = 0; step < 3; ++step) {
    for (int m = 0; m < 2; ++m) {
      const data::Batch batch = RandomBatch(seed++);
      ASSERT_TRUE((*released)->BeginEvaluation().ok());
      absl::StatusOr<double> a = (*kept)->MicroStep(ToStepBatch(batch, true));
      absl::StatusOr<double> b = (*released)->MicroStep(ToStepBatch(batch, true));
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(*a, *b) << "step " << step << " micro " << m;
    }
    ASSERT_TRUE((*released)->BeginEvaluation().ok());
    ASSERT_TRUE((*kept)->OptimizerStep(1.0).ok());
    ASSERT_TRUE((*released)->OptimizerStep(1.0).ok());
  }
  ASSERT_TRUE((*kept)->SyncParamsToHost().ok());
  ASSERT_TRUE((*released)->SyncParamsToHost().ok());
  EXPECT_EQ(MaxRelDiff(kept_params, released_params), 0.0);
}

TEST_P(DeviceStepTest, RefusesAnotherBatchShape) {
  runtime::ParamStore params = RandomParams();
  auto step = Make(Config(false, 1), &params);
  ASSERT_TRUE(step.ok()) << step.status();
  const int64_t compilations = compiler::StepCompilations();
  absl::StatusOr<double> loss = (*step)->MicroStep(ToStepBatch(RandomBatch(3, kT / 2), false));
  ASSERT_FALSE(loss.ok());
  EXPECT_NE(loss.status().message().find("inputs"), std::string::npos) << loss.status();
  EXPECT_NE(loss.status().message().find("compiled for [2,16] i32, got [2,8]"), std::string::npos)
      << loss.status();
  EXPECT_EQ(compiler::StepCompilations(), compilations) << "a refused batch must not recompile";
  // The step still runs its own shape afterwards.
  EXPECT_TRUE((*step)->MicroStep(ToStepBatch(RandomBatch(4), false)).ok());
}

TEST_P(DeviceStepTest, SecondCreateLoadsFromTheCache) {
  const std::string dir = ::testing::TempDir() + "/compile_cache_test_" + GetParam();
  std::filesystem::remove_all(dir);
  runtime::ParamStore params = RandomParams();
  auto first = Make(Config(false, 1), &params, dir);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE((*first)->compile_report().cache_hit);
  EXPECT_THAT((*first)->compile_report().cache_log,
              ::testing::MatchesRegex("no entry .*; then compiled the step in .* s; then stored it as .*"));
  const int64_t compilations = compiler::StepCompilations();
  auto second = Make(Config(false, 1), &params, dir);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->compile_report().cache_hit);
  EXPECT_THAT((*second)->compile_report().cache_log, ::testing::MatchesRegex("found .* and loaded it in .* s"));
  EXPECT_EQ(compiler::StepCompilations(), compilations);
  const data::Batch batch = RandomBatch(9);
  EXPECT_EQ(*(*first)->MicroStep(ToStepBatch(batch, false)), *(*second)->MicroStep(ToStepBatch(batch, false)));

  // A damaged entry (one flipped byte in a kernel module) is noticed, recompiled and replaced.
  const std::string file = (*second)->compile_report().cache_entry + "/step.gptart";
  {
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(0, std::ios::end);
    const std::streamoff last = static_cast<std::streamoff>(f.tellg()) - 1;
    f.seekg(last);
    const char byte = static_cast<char>(f.get() ^ 0x5a);
    f.seekp(last);
    f.put(byte);
  }
  auto third = Make(Config(false, 1), &params, dir);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE((*third)->compile_report().cache_hit);
  // In the order it happened: the damage (naming the file), the compile, the store.
  EXPECT_THAT((*third)->compile_report().cache_log,
              ::testing::MatchesRegex("entry .* not usable \\(.*step\\.gptart.*\\); then compiled the step in .* s; "
                                      "then stored it as .*"));
  auto fourth = Make(Config(false, 1), &params, dir);
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  EXPECT_TRUE((*fourth)->compile_report().cache_hit);
}

/// Runs one optimizer step of two micro-batches from `seed` on `step`.
absl::Status TrainOneStep(TrainStep& step, uint32_t seed, double lrm) {
  for (int m = 0; m < 2; ++m) {
    if (absl::StatusOr<double> loss = step.MicroStep(ToStepBatch(RandomBatch(seed + m), false)); !loss.ok()) {
      return loss.status();
    }
  }
  return step.OptimizerStep(lrm);
}

bool BitEqual(const runtime::ParamStore& a, const runtime::ParamStore& b) {
  for (size_t i = 0; i < a.params().size(); ++i) {
    const runtime::Param &x = a.params()[i], &y = b.params()[i];
    if (std::memcmp(x.data(), y.data(), x.numel() * sizeof(float)) != 0) return false;
  }
  return true;
}

// What --resume relies on: a step given another step's weights and exported optimizer state
// continues exactly as that step does; without the state it does not.
TEST_P(DeviceStepTest, ImportedOptimizerStateContinuesTheRunExactly) {
  const compiler::StepConfig config = Config(false, 2);
  runtime::ParamStore trained = RandomParams(), resumed = RandomParams(), fresh = RandomParams();
  auto first = Make(config, &trained);
  ASSERT_TRUE(first.ok()) << first.status();
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(TrainOneStep(**first, 10 * s, 1.0 - s * 0.1).ok());
  ASSERT_TRUE((*first)->SyncParamsToHost().ok());
  absl::StatusOr<OptimizerState> state = (*first)->ExportOptimizerState();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->steps_taken, 2);
  for (size_t i = 0; i < trained.params().size(); ++i) {
    std::memcpy(resumed.params()[i].data(), trained.params()[i].data(), trained.params()[i].numel() * sizeof(float));
    std::memcpy(fresh.params()[i].data(), trained.params()[i].data(), trained.params()[i].numel() * sizeof(float));
  }
  auto second = Make(config, &resumed);
  auto without_state = Make(config, &fresh);
  ASSERT_TRUE(second.ok() && without_state.ok());
  ASSERT_TRUE((*second)->ImportOptimizerState(*state).ok());
  EXPECT_EQ((*second)->steps_taken(), 2);
  for (DeviceStep* step : {first->get(), second->get(), without_state->get()}) {
    ASSERT_TRUE(TrainOneStep(*step, 20, 0.8).ok());
    ASSERT_TRUE(step->SyncParamsToHost().ok());
  }
  EXPECT_TRUE(BitEqual(resumed, trained));
  EXPECT_FALSE(BitEqual(fresh, trained));
  // The exported state round-trips, and a state of another layout is refused by name.
  absl::StatusOr<OptimizerState> again = (*second)->ExportOptimizerState();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->steps_taken, 3);
  state->tensors.pop_back();
  EXPECT_FALSE((*second)->ImportOptimizerState(*state).ok());
}

TEST(EagerStepState, ImportedOptimizerStateContinuesTheRunExactly) {
  const compiler::StepConfig config = Config(false, 2);
  runtime::ParamStore trained = RandomParams(), resumed = RandomParams();
  auto first = EagerStep::Create(config, &trained);
  ASSERT_TRUE(first.ok());
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(TrainOneStep(**first, 10 * s, 1.0 - s * 0.1).ok());
  absl::StatusOr<OptimizerState> state = (*first)->ExportOptimizerState();
  ASSERT_TRUE(state.ok());
  for (size_t i = 0; i < trained.params().size(); ++i) {
    std::memcpy(resumed.params()[i].data(), trained.params()[i].data(), trained.params()[i].numel() * sizeof(float));
  }
  auto second = EagerStep::Create(config, &resumed);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->ImportOptimizerState(*state).ok());
  ASSERT_TRUE(TrainOneStep(**first, 20, 0.8).ok());
  ASSERT_TRUE(TrainOneStep(**second, 20, 0.8).ok());
  EXPECT_TRUE(BitEqual(resumed, trained));
  state->tensors[0].first = "adamw.exp_avg/renamed";
  EXPECT_NE((*second)->ImportOptimizerState(*state).message().find("renamed"), std::string::npos);
}

// The loop's guard before every update: a NaN or infinity in any accumulated gradient is found
// and named (tensor, element), and nothing is reported while all are finite.
TEST_P(DeviceStepTest, FirstNonFiniteGradientNamesTheTensorAndElement) {
  const compiler::StepConfig config = Config(false, 2);
  runtime::ParamStore params = RandomParams();
  auto step = Make(config, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_TRUE((*step)->MicroStep(ToStepBatch(RandomBatch(3), false)).ok());
  absl::StatusOr<std::optional<NonFiniteValue>> clean = (*step)->FirstNonFiniteGradient();
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_FALSE(clean->has_value()) << (*clean)->tensor;
  const runtime::Param& victim = params.params().back();
  absl::StatusOr<runtime::Tensor> grad = (*step)->Gradient(params.params().size() - 1);
  ASSERT_TRUE(grad.ok());
  static_cast<float*>(grad->raw_data())[5] = INFINITY;
  ASSERT_TRUE((*step)->executable().Upload(compiler::GradName(victim.name), grad->raw_data(),
                                           static_cast<int64_t>(grad->bytes())).ok());
  absl::StatusOr<std::optional<NonFiniteValue>> found = (*step)->FirstNonFiniteGradient();
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->tensor, victim.name);
  EXPECT_EQ((*found)->element, 5);
  EXPECT_TRUE(std::isinf((*found)->value));
}

TEST(EagerStepState, FirstNonFiniteGradientNamesTheTensorAndElement) {
  const compiler::StepConfig config = Config(false, 2);
  runtime::ParamStore params = RandomParams();
  auto step = EagerStep::Create(config, &params);
  ASSERT_TRUE(step.ok());
  ASSERT_TRUE((*step)->MicroStep(ToStepBatch(RandomBatch(3), false)).ok());
  absl::StatusOr<std::optional<NonFiniteValue>> clean = (*step)->FirstNonFiniteGradient();
  ASSERT_TRUE(clean.ok());
  EXPECT_FALSE(clean->has_value());
  runtime::Tensor shared = (*step)->grad(1);  // shares the step's gradient buffer
  static_cast<float*>(shared.raw_data())[7] = std::nanf("");
  absl::StatusOr<std::optional<NonFiniteValue>> found = (*step)->FirstNonFiniteGradient();
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->tensor, params.params()[1].name);
  EXPECT_EQ((*found)->element, 7);
  EXPECT_TRUE(std::isnan((*found)->value));
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceStepTest, ::testing::Values("cpu", "opencl", "opencl_clblast"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace gpt_sft::trainer
