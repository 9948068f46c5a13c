#include "runtime/checkpoint/step_directory.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/tiny_param_store.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::ListDir;
using base::testing::WriteBytes;

using testing::Tiny;
using testing::TinyStore;

/// Saves `store` as `step` of `run` through a StepDirectory.
absl::Status SaveStep(const std::string& run, int64_t step, const ParamStore& store, base::FaultHook hook = {}) {
  absl::StatusOr<std::unique_ptr<StepDirectory>> dir = StepDirectory::Begin(run, step, hook);
  if (!dir.ok()) return dir.status();
  if (absl::StatusOr<ResolvedCheckpoint> s = SaveCheckpoint((*dir)->temp_dir(), store, {step, 1.5, {}}); !s.ok()) {
    return s.status();
  }
  return (*dir)->Publish();
}

TEST(StepDirectory, PublishesOneDirectoryThatLoadsAndResolves) {
  const std::string run = FreshTestDir();
  const ParamStore a = TinyStore(1);
  ASSERT_TRUE(SaveStep(run, 7, a).ok());
  EXPECT_THAT(ListDir(run), ElementsAre("step_000007"));
  EXPECT_THAT(ListDir(run + "/step_000007"), ElementsAre("meta_000007.json", "model_000007.safetensors"));
  EXPECT_EQ(*FindLastStep(run), 7);
  LoadedCheckpoint loaded = *LoadCheckpoint(run, 7);
  EXPECT_EQ(loaded.params.Checksum(), a.Checksum());
  // The step directory alone is a flat checkpoint directory too (nanochat's layout).
  EXPECT_EQ(LoadCheckpoint(run + "/step_000007", 7)->params.Checksum(), a.Checksum());
}

TEST(StepDirectory, ReplacingAStepSwapsItWhole) {
  const std::string run = FreshTestDir();
  ASSERT_TRUE(SaveStep(run, 3, TinyStore(1)).ok());
  const ParamStore b = TinyStore(2);
  ASSERT_TRUE(SaveStep(run, 3, b).ok());
  EXPECT_THAT(ListDir(run), ElementsAre("step_000003"));
  EXPECT_EQ(LoadCheckpoint(run, 3)->params.Checksum(), b.Checksum());
}

TEST(StepDirectory, WithoutRenameExchangeAStepIsReplacedByTwoRenames) {
  const std::string run = FreshTestDir();
  ASSERT_TRUE(SaveStep(run, 3, TinyStore(1)).ok());
  base::FaultHook no_exchange = [](absl::string_view p) {
    return p == "step:exchange" ? absl::UnimplementedError("no exchange") : absl::OkStatus();
  };
  const ParamStore b = TinyStore(2);
  ASSERT_TRUE(SaveStep(run, 3, b, no_exchange).ok());
  EXPECT_THAT(ListDir(run), ElementsAre("step_000003"));
  EXPECT_EQ(LoadCheckpoint(run, 3)->params.Checksum(), b.Checksum());
}

TEST(StepDirectory, AFailureAtEveryPointOfPublishKeepsThePreviousStep) {
  const ParamStore a = TinyStore(1), b = TinyStore(2);
  for (const char* point : {"step:fsync", "step:rename"}) {
    const std::string run = FreshTestDir() + "/" + std::string(point).substr(5);
    fs::create_directories(run);
    ASSERT_TRUE(SaveStep(run, 3, a).ok());
    base::FaultHook fail = [&](absl::string_view p) {
      return p == point ? absl::UnavailableError("injected") : absl::OkStatus();
    };
    absl::Status s = SaveStep(run, 3, b, fail);
    EXPECT_THAT(s.message(), HasSubstr(run + "/step_000003")) << point;
    s = SaveStep(run, 4, b, fail);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(ListDir(run), ElementsAre("step_000003")) << point;  // no temp left, no step 4
    EXPECT_EQ(LoadCheckpoint(run, 3)->params.Checksum(), a.Checksum()) << point;
  }
}

TEST(StepDirectory, FlatAndStepLayoutsResolveTogether) {
  const std::string run = FreshTestDir();
  ASSERT_TRUE(SaveCheckpoint(run, TinyStore(1), {2, 1.0, {}}).ok());  // nanochat's flat layout
  ASSERT_TRUE(SaveStep(run, 5, TinyStore(2)).ok());
  EXPECT_EQ(*FindLastStep(run), 5);
  EXPECT_EQ(CheckpointFilesOf(run, 2).model_path, run + "/model_000002.safetensors");
  EXPECT_EQ(CheckpointFilesOf(run, 5).model_path, run + "/step_000005/model_000005.safetensors");
  EXPECT_EQ(LoadCheckpoint(run, 2)->params.Checksum(), TinyStore(1).Checksum());
  // A temp directory never counts; a newest step directory without its model (damaged, or made
  // by hand) is an error naming it, never skipped in silence.
  fs::create_directories(run + "/.step_000011.tmp.123");
  EXPECT_EQ(*FindLastStep(run), 5);
  fs::create_directories(run + "/step_000009");
  EXPECT_EQ(FindLastStep(run).status().code(), absl::StatusCode::kDataLoss);
}

TEST(StepDirectory, ResolveCheckpointFindsTheLatestStepOfAnSftRun) {
  const std::string base = FreshTestDir();
  const std::string run = base + "/chatsft_checkpoints/d2";
  fs::create_directories(run);
  ASSERT_TRUE(SaveStep(run, 4, TinyStore(1)).ok());
  ASSERT_TRUE(SaveStep(run, 8, TinyStore(2)).ok());
  ResolvedCheckpoint r = *ResolveCheckpoint(base, CheckpointSource::kSft, std::nullopt, std::nullopt);
  EXPECT_EQ(r.step, 8);
  EXPECT_EQ(r.model_tag, "d2");
  EXPECT_EQ(r.model_path, run + "/step_000008/model_000008.safetensors");
  EXPECT_EQ(LoadCheckpoint(r)->params.Checksum(), TinyStore(2).Checksum());
  r = *ResolveCheckpoint(base, CheckpointSource::kSft, "d2", 4);
  EXPECT_EQ(r.meta_path, run + "/step_000004/meta_000004.json");
}

TEST(StepDirectory, TempEntriesNameTheirWriter) {
  EXPECT_EQ(*TempEntryPid(".step_000004.tmp.1234"), 1234);
  EXPECT_EQ(*TempEntryPid("run_summary.json.tmp.77"), 77);
  EXPECT_FALSE(TempEntryPid("step_000004").has_value());
  EXPECT_FALSE(TempEntryPid("model.tmp.12x").has_value());
  EXPECT_FALSE(TempEntryPid("a.tmp.").has_value());
}

TEST(StepDirectory, RemovesOnlyTheTempEntriesOfDeadProcesses) {
  const std::string run = FreshTestDir();
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // now a pid that no process has
  fs::create_directories(absl::StrCat(run, "/.step_000001.tmp.", child));
  WriteBytes(absl::StrCat(run, "/.step_000001.tmp.", child, "/model_000001.safetensors"), "half");
  WriteBytes(absl::StrCat(run, "/run_summary.json.tmp.", child), "half");
  fs::create_directories(absl::StrCat(run, "/.step_000002.tmp.", getpid()));  // alive: ours
  fs::create_directories(run + "/step_000003");
  absl::StatusOr<std::vector<std::string>> removed = RemoveDeadTemps(run);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->size(), 2u);
  EXPECT_THAT(ListDir(run), ElementsAre(absl::StrCat(".step_000002.tmp.", getpid()), "step_000003"));
  EXPECT_THAT(RemoveDeadTemps(run + "/missing").status().message(), HasSubstr(run + "/missing"));
}

}  // namespace
}  // namespace gpt_sft::runtime
