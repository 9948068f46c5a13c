#include "trainer/run_dir/resume_state.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "base/read_file.h"
#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/tiny_param_store.h"
#include "trainer/run_dir/optimizer_state_file.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::ListDir;

using runtime::testing::Tiny;
using runtime::testing::TinyStore;

/// An optimizer state of `params`' layout whose values are fixed by `seed`.
OptimizerState StateFor(const runtime::ParamStore& params, int64_t steps, float seed) {
  OptimizerState state;
  state.steps_taken = steps;
  for (const auto& [name, shape] : OptimizerStateLayout(params)) {
    runtime::Tensor t = runtime::Tensor::Empty(runtime::DType::kF32, shape);
    float* p = static_cast<float*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = seed + 1e-3f * float(i) + float(name.size());
    state.tensors.emplace_back(name, std::move(t));
  }
  return state;
}

void ExpectSameState(const OptimizerState& a, const OptimizerState& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  EXPECT_EQ(a.steps_taken, b.steps_taken);
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    ASSERT_EQ(a.tensors[i].second.shape(), b.tensors[i].second.shape());
    EXPECT_EQ(std::memcmp(a.tensors[i].second.raw_data(), b.tensors[i].second.raw_data(), a.tensors[i].second.bytes()), 0)
        << a.tensors[i].first;
  }
}

TEST(ResumeState, ARunStepRoundTripsBitExactly) {
  const std::string run = FreshTestDir();
  const runtime::ParamStore params = TinyStore(3);
  const OptimizerState optimizer = StateFor(params, 4, 0.5f);
  TrainerOptions o;
  ResumeState resume{4, 32, 1700000000, 1234, RunShapeOf(o, params.config(), 10, 500)};
  absl::StatusOr<runtime::ResolvedCheckpoint> saved = SaveRunStep(run, params, {4, 2.0, {}}, optimizer, resume);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->model_path, run + "/step_000004/model_000004.safetensors");
  EXPECT_THAT(ListDir(run + "/step_000004"), ElementsAre("meta_000004.json", "model_000004.safetensors",
                                                         "optim_000004.safetensors", "train_state.json"));
  ASSERT_TRUE(SaveRunStep(run, TinyStore(9), {2, 2.0, {}}, StateFor(params, 2, 1.f),
                          {2, 16, 1, 10, resume.shape}).ok());
  absl::StatusOr<LoadedRunStep> loaded = LoadLatestRunStep(run);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->dir, run + "/step_000004");
  EXPECT_EQ(loaded->params.Checksum(), params.Checksum());
  ExpectSameState(loaded->optimizer, optimizer);
  EXPECT_EQ(loaded->resume.step, 4);
  EXPECT_EQ(loaded->resume.micro_batches, 32);
  EXPECT_EQ(loaded->resume.run, 1700000000);
  EXPECT_EQ(loaded->resume.metrics_bytes, 1234);
  EXPECT_EQ(loaded->resume.shape, resume.shape);
}

TEST(ResumeState, NoStepToResumeNamesTheDirectory) {
  const std::string run = FreshTestDir();
  ASSERT_TRUE(runtime::SaveCheckpoint(run, TinyStore(1), {3, 1.0, {}}).ok());  // flat: no resume state
  EXPECT_THAT(LoadLatestRunStep(run).status().message(), HasSubstr(run + " has no step to resume from"));
}

TEST(ResumeState, AChangedShapeIsRefusedWithBothValues) {
  TrainerOptions a, b;
  b.max_seq_len = 512;
  a.max_seq_len = 256;
  const RunShape was = RunShapeOf(a, Tiny(), 10, 100), now = RunShapeOf(b, Tiny(), 10, 100);
  EXPECT_TRUE(CheckSameRun(was, was, "/r/step_000004").ok());
  const absl::Status s = CheckSameRun(was, now, "/r/step_000004");
  EXPECT_THAT(s.message(), HasSubstr("/r/step_000004 was trained with --max_seq_len=256; this run has --max_seq_len=512"));
  compiler::ModelConfig wider = *compiler::ModelConfig::FromDepth(2, 16, 8, 16, 1);
  EXPECT_THAT(CheckSameRun(was, RunShapeOf(a, wider, 10, 100), "/r").message(),
              HasSubstr("was trained with model_config=" + Tiny().ToJson() + "; this run has model_config=" +
                        wider.ToJson()));
  a.matrix_lr = 0.03;
  EXPECT_THAT(CheckSameRun(was, RunShapeOf(a, Tiny(), 10, 100), "/r").message(),
              HasSubstr("--matrix_lr=0.02"));
}

// Edited training data is refused even when its row count is unchanged: the --jsonl files'
// contents are fingerprinted.
TEST(ResumeState, EditedTrainingDataIsRefused) {
  const std::string dir = FreshTestDir();
  const std::string file = dir + "/mine.jsonl";
  auto write = [&](const char* text) { std::ofstream(file) << text; };
  write("[{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"hello\"}]\n");
  TrainerOptions o;
  o.data.jsonl = {file};
  const RunShape was = RunShapeOf(o, Tiny(), 10, 100);
  EXPECT_TRUE(CheckSameRun(was, RunShapeOf(o, Tiny(), 10, 100), "/r").ok());
  write("[{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"howdy\"}]\n");
  const absl::Status edited = CheckSameRun(was, RunShapeOf(o, Tiny(), 10, 100), "/r");
  EXPECT_THAT(edited.message(), HasSubstr("was trained with training_data=builtin_tasks=true jsonl_repeat=1 jsonl=[mine.jsonl#"));
  EXPECT_THAT(edited.message(), HasSubstr("--jsonl"));
  o.data.jsonl_repeat = 2;
  EXPECT_THAT(CheckSameRun(was, RunShapeOf(o, Tiny(), 10, 100), "/r").message(), HasSubstr("jsonl_repeat=2"));
}

TEST(OptimizerState, ImportChecksTheLayout) {
  const runtime::ParamStore params = TinyStore(1);
  OptimizerState state = StateFor(params, 1, 0.f);
  EXPECT_TRUE(CheckOptimizerStateLayout(params, state).ok());
  state.tensors[1].first = "adamw.exp_avg/other";
  EXPECT_THAT(CheckOptimizerStateLayout(params, state).message(), HasSubstr("'adamw.exp_avg/other'"));
  state.tensors.pop_back();
  EXPECT_THAT(CheckOptimizerStateLayout(params, state).message(), HasSubstr("tensors"));
}

TEST(OptimizerStateFile, RoundTripsAndNamesADamagedFile) {
  const std::string dir = FreshTestDir();
  const runtime::ParamStore params = TinyStore(1);
  const OptimizerState state = StateFor(params, 7, 2.f);
  const std::string path = dir + "/" + OptimizerStateFileName(7);
  ASSERT_TRUE(WriteOptimizerStateFile(path, state).ok());
  ExpectSameState(*ReadOptimizerStateFile(path), state);
  fs::resize_file(path, fs::file_size(path) - 4);
  EXPECT_THAT(ReadOptimizerStateFile(path).status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace gpt_sft::trainer

namespace gpt_sft::trainer {
namespace {

// Every file of a step is checked on load: with a flipped bit anywhere in train_state.json (every
// byte, two bits each) or in the optimizer file (every 5th byte, two bits each), or either file
// truncated, the step is refused naming the file, or loads exactly as saved; never otherwise.
TEST(ResumeState, AFlippedBitOrTruncationInAnyFileOfTheStepIsRefused) {
  const std::string run = FreshTestDir();
  const runtime::ParamStore params = TinyStore(3);
  TrainerOptions o;
  ASSERT_TRUE(SaveRunStep(run, params, {4, 2.0, {}}, StateFor(params, 4, 0.5f),
                          {4, 32, 1700000000, 1234, RunShapeOf(o, params.config(), 10, 500)})
                  .ok());
  for (const auto& [file, stride] : {std::pair{std::string("train_state.json"), size_t(1)},
                                     std::pair{std::string("optim_000004.safetensors"), size_t(5)}}) {
    const std::string path = run + "/step_000004/" + file;
    const std::string bytes = *base::ReadFile(path);
    // Refused naming the file, or (a flip in JSON layout or a name nothing reads) the very same step.
    const auto refused = [&](const std::string& content, const std::string& what) {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
      absl::StatusOr<LoadedRunStep> loaded = LoadLatestRunStep(run);
      if (!loaded.ok()) {
        EXPECT_THAT(loaded.status().message(), HasSubstr(file)) << what;
        return;
      }
      ExpectSameState(loaded->optimizer, StateFor(params, 4, 0.5f));
      EXPECT_EQ(loaded->resume.step, 4) << what;
      EXPECT_EQ(loaded->resume.micro_batches, 32) << what;
      EXPECT_EQ(loaded->resume.run, 1700000000) << what;
      EXPECT_EQ(loaded->resume.metrics_bytes, 1234) << what;
      EXPECT_EQ(loaded->resume.shape, RunShapeOf(o, params.config(), 10, 500)) << what;
    };
    for (size_t at = 0; at < bytes.size(); at += stride) {
      for (int bit : {0, 6}) {
        std::string flipped = bytes;
        flipped[at] = char(flipped[at] ^ (1 << bit));
        refused(flipped, "bit " + std::to_string(bit) + " of byte " + std::to_string(at));
      }
    }
    refused(bytes.substr(0, bytes.size() / 2), "half");
    refused(bytes.substr(0, bytes.size() - 1), "all but the last byte");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    ASSERT_TRUE(LoadLatestRunStep(run).ok()) << file;
  }
}

}  // namespace
}  // namespace gpt_sft::trainer
