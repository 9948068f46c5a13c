// The whole training step on a device against the interpreter, as the trainer runs it: a
// random nanochat-initialised model (depth 2, width 128), batches of the SFT mixture packed
// best-fit into [2, 256] rows, 2 micro-batches per step, AdamW and Muon, 20 steps with the
// trainer's lr schedule. Every micro-batch loss within 1e-4 (relative) of the interpreter's,
// every parameter within 1e-3 (relative to its tensor's largest value) after the run, no
// recompilation; then the checkpoint written from the synced ParamStore reloads bit-exactly
// and gives the same validation loss on the interpreter. Parameterised over the devices the
// compiled step runs on here.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>

#include "data/collate/loader.h"
#include "data/pipeline/sft_mixture.h"
#include "data/pipeline/task_source.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/device/device.h"
#include "trainer/batch_tensors.h"
#include "trainer/run_dir/checkpoint_reload_check.h"
#include "trainer/config/demo_setup.h"
#include "trainer/eager_step.h"
#include "base/runfiles.h"
#include "trainer/step_compile.h"

namespace gpt_sft {
namespace {

constexpr int kSteps = 20, kAccum = 2, kB = 2, kT = 256, kVocab = 1024;

struct TrainingData {
  std::shared_ptr<const data::Tokenizer> tokenizer;
  std::vector<trainer::StepBatch> train, val;
  std::string checkpoint_dir;
};

/// A tokenizer and random base model in a temporary base dir, and the batches.
TrainingData MakeSetup() {
  TrainingData s;
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/base";
  std::ostringstream log;
  absl::Status made = trainer::EnsureRandomBaseModel(base, {2, kVocab, 7}, log);
  EXPECT_TRUE(made.ok()) << made << log.str();
  s.checkpoint_dir = base + "/base_checkpoints/d2";
  s.tokenizer = std::make_shared<const data::Tokenizer>(*data::Tokenizer::Load(trainer::TokenizerPath(base)));
  data::SftMixtureOptions mix;
  mix.words_path = *base::FindRunfile("external/wordlist/words");
  mix.spelling_bee = mix.simple_spelling = mix.synthetic_mc = 200;
  auto mixture = data::BuildSftMixture(mix);
  EXPECT_TRUE(mixture.ok()) << mixture.status();
  data::TaskSource source(*mixture, s.tokenizer, 4 * (kT + 1));
  data::LoaderOptions options;
  options.B = kB;
  options.T = kT;
  options.packing = data::Packing::kBestFit;
  options.pad_id = s.tokenizer->SpecialId(data::SpecialToken::kAssistantEnd);
  auto loader = data::BatchLoader::Create(&source, options);
  EXPECT_TRUE(loader.ok()) << loader.status();
  for (int i = 0; i < kSteps * kAccum + 2; ++i) {
    absl::StatusOr<data::Batch> b = (*loader)->Next();
    EXPECT_TRUE(b.ok()) << b.status();
    (i < kSteps * kAccum ? s.train : s.val).push_back(trainer::ToStepBatch(*b, /*packed=*/true));
  }
  return s;
}

compiler::StepConfig Config(const compiler::ModelConfig& model) {
  compiler::StepConfig c;
  c.model = model;
  c.batch_size = kB;
  c.seq_len = kT;
  c.packed = true;
  c.grad_accum_steps = kAccum;
  return c;
}

std::unique_ptr<runtime::ParamStore> LoadParams(const std::string& dir) {
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(dir, 0);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return std::make_unique<runtime::ParamStore>(std::move(loaded->params));
}

double ValidationLoss(trainer::EagerStep& step, const std::vector<trainer::StepBatch>& batches) {
  double sum = 0;
  for (const trainer::StepBatch& b : batches) sum += *step.Loss(b);
  return sum / batches.size();
}

class DeviceTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceTraining, MatchesTheInterpreterAndCheckpointsExactly) {
  const std::string device = GetParam();
  if (absl::StatusOr<std::unique_ptr<runtime::device::Device>> d = runtime::device::CreateDevice(device); !d.ok()) {
    GTEST_SKIP() << device << ": " << d.status().message();
  }
  TrainingData s = MakeSetup();
  std::unique_ptr<runtime::ParamStore> eager_params = LoadParams(s.checkpoint_dir);
  std::unique_ptr<runtime::ParamStore> device_params = LoadParams(s.checkpoint_dir);
  const compiler::StepConfig config = Config(eager_params->config());
  absl::StatusOr<std::unique_ptr<trainer::EagerStep>> eager = trainer::EagerStep::Create(config, eager_params.get());
  ASSERT_TRUE(eager.ok()) << eager.status();
  trainer::DeviceStepOptions options;
  options.device = device;
  absl::StatusOr<std::unique_ptr<trainer::DeviceStep>> compiled =
      trainer::CompileDeviceStep(config, device_params.get(), /*cache_dir=*/"", options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  std::cout << (*compiled)->ValidationLine() << std::endl;

  double worst_loss = 0;
  for (int it = 0; it < kSteps; ++it) {
    for (int m = 0; m < kAccum; ++m) {
      const trainer::StepBatch& batch = s.train[it * kAccum + m];
      absl::StatusOr<double> want = (*eager)->MicroStep(batch), got = (*compiled)->MicroStep(batch);
      ASSERT_TRUE(want.ok() && got.ok()) << want.status() << " / " << got.status();
      const double rel = std::fabs(*got - *want) / std::fabs(*want);
      worst_loss = std::max(worst_loss, rel);
      EXPECT_LE(rel, 1e-4) << "step " << it << " micro-batch " << m << ": " << *got << " vs " << *want;
    }
    const double lrm = 1.0 - double(it) / kSteps;
    ASSERT_TRUE((*eager)->OptimizerStep(lrm).ok());
    ASSERT_TRUE((*compiled)->OptimizerStep(lrm).ok());
  }
  EXPECT_EQ((*compiled)->Recompilations(), 0);

  // Parameters: the device's, brought home.
  ASSERT_TRUE((*compiled)->SyncParamsToHost().ok());
  double worst_param = 0;
  for (size_t i = 0; i < eager_params->params().size(); ++i) {
    const runtime::Param& a = eager_params->params()[i];
    const runtime::Param& b = device_params->params()[i];
    double diff = 0, scale = 1e-12;
    for (int64_t j = 0; j < a.numel(); ++j) {
      diff = std::max(diff, double(std::fabs(a.data()[j] - b.data()[j])));
      scale = std::max(scale, double(std::fabs(a.data()[j])));
    }
    worst_param = std::max(worst_param, diff / scale);
    EXPECT_LE(diff / scale, 1e-3) << a.name;
  }
  std::cout << device << ": worst loss difference " << worst_loss << ", worst parameter difference " << worst_param
            << " over " << kSteps << " steps" << std::endl;

  // The checkpoint, written from the ParamStore, reloads bit-exactly; the interpreter gives
  // the reloaded weights the trained ones' validation loss.
  const std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/sft_" + device;
  runtime::CheckpointRecord record;
  record.step = kSteps;
  ASSERT_TRUE(runtime::SaveCheckpoint(out, *device_params, record).ok());
  absl::StatusOr<trainer::ReloadComparison> reloaded = trainer::ReloadAndCompare(out, kSteps, *device_params);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(reloaded->bit_exact) << reloaded->mismatch;
  auto trained_eval = trainer::EagerStep::Create(config, device_params.get());
  auto reloaded_eval = trainer::EagerStep::Create(config, reloaded->reloaded.get());
  ASSERT_TRUE(trained_eval.ok() && reloaded_eval.ok());
  EXPECT_EQ(ValidationLoss(**trained_eval, s.val), ValidationLoss(**reloaded_eval, s.val));
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceTraining, ::testing::Values("opencl"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace gpt_sft
