// kill -9 at random instants while a child process saves run steps (SaveRunStep: model, meta,
// optimizer state, train_state.json into one step directory) over and over. After every kill:
// the latest step loads (the model against its meta's checksum, the optimizer state and the
// resume state, each equal to what was saved for that step), the step before it is intact, and
// opening the directory again removes the dead child's temp entries. Kills until 100 landed
// inside a save (about 200 kills) on a small model (about 0.5 MB per step), a few seconds in all.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "base/test_dir.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/checkpoint/step_directory.h"
#include "trainer/run_dir/optimizer_state_file.h"
#include "trainer/run_dir/resume_state.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;

compiler::ModelConfig Small() { return *compiler::ModelConfig::FromDepth(2, 512, 64, 64, 1); }

/// What step `step` saves: weights and optimizer state that differ from step to step.
runtime::ParamStore WeightsOf(int64_t step) {
  runtime::ParamStore s = *runtime::ParamStore::Create(Small());
  s.InitNanochat(uint64_t(step) + 1, /*zero_output_projections=*/false);
  return s;
}

OptimizerState OptimizerOf(const runtime::ParamStore& params, int64_t step) {
  OptimizerState state;
  state.steps_taken = step;
  for (const auto& [name, shape] : OptimizerStateLayout(params)) {
    runtime::Tensor t = runtime::Tensor::Empty(runtime::DType::kF32, shape);
    float* p = static_cast<float*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = float(step) + 1e-4f * float(i);
    state.tensors.emplace_back(name, std::move(t));
  }
  return state;
}

ResumeState ResumeOf(int64_t step) { return {step, 4 * step, 99, 10 * step, {{"seed", "42"}}}; }

/// The child: saves steps first, first + 1, ... until it is killed.
[[noreturn]] void SaveForever(const std::string& run, int64_t first) {
  for (int64_t step = first;; ++step) {
    const runtime::ParamStore params = WeightsOf(step);
    if (!SaveRunStep(run, params, {step, 1.0, {}}, OptimizerOf(params, step), ResumeOf(step)).ok()) _exit(3);
  }
}

/// Everything step `step` of `run` holds equals what was saved for it.
void ExpectStepIntact(const std::string& run, int64_t step) {
  SCOPED_TRACE("step " + std::to_string(step));
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(run, step);  // checksum checked
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const runtime::ParamStore expected = WeightsOf(step);
  EXPECT_EQ(loaded->params.Checksum(), expected.Checksum());
  const std::string dir = run + "/" + runtime::StepDirName(step);
  absl::StatusOr<OptimizerState> optimizer = ReadOptimizerStateFile(dir + "/" + OptimizerStateFileName(step));
  ASSERT_TRUE(optimizer.ok()) << optimizer.status();
  const OptimizerState want = OptimizerOf(expected, step);
  ASSERT_EQ(optimizer->tensors.size(), want.tensors.size());
  for (size_t i = 0; i < want.tensors.size(); ++i) {
    ASSERT_EQ(std::memcmp(optimizer->tensors[i].second.raw_data(), want.tensors[i].second.raw_data(),
                          want.tensors[i].second.bytes()),
              0);
  }
}

TEST(StepSaveKill, TheLatestStepAlwaysLoadsAfterAKillAtAnyInstant) {
  const std::string run = base::testing::FreshTestDir();
  // One save's duration sets the range of the kill instants (a few saves' worth).
  const auto start = std::chrono::steady_clock::now();
  {
    const runtime::ParamStore params = WeightsOf(0);
    ASSERT_TRUE(SaveRunStep(run, params, {0, 1.0, {}}, OptimizerOf(params, 0), ResumeOf(0)).ok());
  }
  const double save_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::mt19937 rng(20261204);
  std::uniform_real_distribution<double> instant(0.0, 3.0 * save_us);
  int64_t latest = 0, killed_mid_save = 0;
  // Kills until 100 of them landed inside a save (where the test tests something): about 200 on
  // an idle machine; a loaded one lands fewer inside, so it may take more, up to kMaxTrials.
  constexpr int kMidSaveKills = 100, kMaxTrials = 1000;
  int trials = 0;
  for (int trial = 0; trial < kMaxTrials && killed_mid_save < kMidSaveKills; ++trial, ++trials) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) SaveForever(run, latest + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(instant(rng))));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the saving child failed on its own (exit " << WEXITSTATUS(status) << ")";
    bool temp_left = false;
    for (const auto& e : fs::directory_iterator(run)) temp_left |= absl::StrContains(e.path().filename().string(), ".tmp.");
    killed_mid_save += temp_left;
    // The resume path's view: the latest step with its resume state, loaded and checked.
    absl::StatusOr<LoadedRunStep> step = LoadLatestRunStep(run);
    ASSERT_TRUE(step.ok()) << "trial " << trial << ": " << step.status();
    ASSERT_GE(step->resume.step, latest);
    latest = step->resume.step;
    EXPECT_EQ(*runtime::FindLastStep(run), latest);
    ExpectStepIntact(run, latest);
    if (latest > 0) ExpectStepIntact(run, latest - 1);
    // A new run's start removes what the dead child left.
    absl::StatusOr<std::vector<std::string>> removed = runtime::RemoveDeadTemps(run);
    ASSERT_TRUE(removed.ok()) << removed.status();
    for (const auto& e : fs::directory_iterator(run)) {
      ASSERT_FALSE(absl::StrContains(e.path().filename().string(), ".tmp.")) << e.path();
    }
  }
  for (int64_t s = 0; s <= latest; ++s) ExpectStepIntact(run, s);  // every earlier step too
  std::cout << trials << " kills; " << killed_mid_save << " left a save half done; " << latest
            << " steps completed; one save takes " << save_us / 1000 << " ms" << std::endl;
  // Unless enough kills land inside a save, this test would not test anything.
  EXPECT_GE(killed_mid_save, kMidSaveKills);
}

}  // namespace
}  // namespace gpt_sft::trainer
