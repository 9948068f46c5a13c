#include "runtime/checkpoint/checkpoint_paths.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::WriteBytes;

TEST(CheckpointPaths, FileNamesAreZeroPaddedToSixDigits) {
  EXPECT_EQ(ModelFileName(650), "model_000650.safetensors");
  EXPECT_EQ(MetaFileName(0), "meta_000000.json");
  EXPECT_EQ(ModelFileName(1234567), "model_1234567.safetensors");
}

TEST(CheckpointPaths, DirectoryNames) {
  EXPECT_EQ(CheckpointDirName(CheckpointSource::kBase), "base_checkpoints");
  EXPECT_EQ(CheckpointDirName(CheckpointSource::kMid), "mid_checkpoints");
  EXPECT_EQ(CheckpointDirName(CheckpointSource::kSft), "chatsft_checkpoints");
  EXPECT_EQ(CheckpointDirName(CheckpointSource::kRl), "chatrl_checkpoints");
}

TEST(CheckpointPaths, BaseDirFromEnvironment) {
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home ? old_home : "";
  setenv("NANOCHAT_BASE_DIR", "/data/nc", 1);
  EXPECT_EQ(*NanochatBaseDir(), "/data/nc");
  setenv("NANOCHAT_BASE_DIR", "", 1);  // set but empty: falls back, as nanochat does
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*NanochatBaseDir(), "/home/u/.cache/nanochat");
  unsetenv("NANOCHAT_BASE_DIR");
  EXPECT_EQ(*NanochatBaseDir(), "/home/u/.cache/nanochat");
  unsetenv("HOME");
  EXPECT_THAT(NanochatBaseDir().status().message(), HasSubstr("NANOCHAT_BASE_DIR"));
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

TEST(CheckpointPaths, LastStepIsTheNumericMaxOfExactNames) {
  const std::string dir = FreshTestDir();
  for (const char* name : {"model_999.safetensors", "model_1000.safetensors", "model_000050.safetensors",
                           "model_005000.safetensors.tmp.123", "model_9999.pt", "model_x.safetensors",
                           "model_.safetensors", "meta_777777.json", "model_-5.safetensors"}) {
    WriteBytes(dir + "/" + name, "");
  }
  // Numeric, as at HEAD: init's string max would pick "999" over "1000".
  EXPECT_EQ(*FindLastStep(dir), 1000);
  fs::create_directories(dir + "/empty");
  EXPECT_THAT(FindLastStep(dir + "/empty").status().message(), HasSubstr("--step"));
  // A newest step directory without its model file is damage, named, never skipped in silence.
  fs::create_directories(dir + "/step_001001");
  EXPECT_THAT(FindLastStep(dir).status().message(),
              AllOf(HasSubstr("step_001001/, has no model_001001.safetensors"), HasSubstr("--step=1000")));
  WriteBytes(dir + "/step_001001/model_001001.safetensors", "");
  EXPECT_EQ(*FindLastStep(dir), 1001);
  fs::create_directories(dir + "/step_000007");  // an older damaged one is not the newest
  EXPECT_EQ(*FindLastStep(dir), 1001);
  EXPECT_THAT(FindLastStep(dir + "/nope").status().message(), HasSubstr(dir + "/nope"));
}

TEST(CheckpointPaths, LargestDepthTagWins) {
  const std::string dir = FreshTestDir();
  for (const char* tag : {"d9", "d12", "d4_wide", "dx", "latest"}) fs::create_directories(dir + "/" + tag);
  WriteBytes(dir + "/d99", "");  // a file, not a directory
  EXPECT_EQ(*FindLargestModelTag(dir), "d12");
  fs::create_directories(dir + "/d20abc");  // re.match(r"d(\d+)") only needs the prefix
  EXPECT_EQ(*FindLargestModelTag(dir), "d20abc");
}

TEST(CheckpointPaths, WithoutDepthTagsTheNewestDirectoryWins) {
  const std::string dir = FreshTestDir();
  fs::create_directories(dir + "/old");
  fs::create_directories(dir + "/new");
  fs::last_write_time(dir + "/old", fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(dir + "/new", fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(*FindLargestModelTag(dir), "new");
  fs::create_directories(dir + "/new/empty");
  EXPECT_THAT(FindLargestModelTag(dir + "/new/empty").status().message(), HasSubstr("--model_tag"));
}

TEST(CheckpointPaths, ResolveAppliesDefaultsAndFlags) {
  const std::string base = FreshTestDir();
  const std::string d20 = base + "/base_checkpoints/d20", d12 = base + "/base_checkpoints/d12";
  fs::create_directories(d20);
  fs::create_directories(d12);
  WriteBytes(d20 + "/model_000765.safetensors", "");
  WriteBytes(d20 + "/model_000100.safetensors", "");
  WriteBytes(d12 + "/model_000001.safetensors", "");

  ResolvedCheckpoint r = *ResolveCheckpoint(base, CheckpointSource::kBase, std::nullopt, std::nullopt);
  EXPECT_EQ(r.model_tag, "d20");
  EXPECT_EQ(r.step, 765);
  EXPECT_EQ(r.dir, d20);
  EXPECT_EQ(r.model_path, d20 + "/model_000765.safetensors");
  EXPECT_EQ(r.meta_path, d20 + "/meta_000765.json");

  r = *ResolveCheckpoint(base, CheckpointSource::kBase, "d12", std::nullopt);
  EXPECT_EQ(r.step, 1);
  r = *ResolveCheckpoint(base, CheckpointSource::kBase, std::nullopt, 100);
  EXPECT_EQ(r.model_path, d20 + "/model_000100.safetensors");

  EXPECT_THAT(ResolveCheckpoint(base, CheckpointSource::kBase, "../x", 1).status().message(), HasSubstr("--model_tag"));
  EXPECT_THAT(ResolveCheckpoint(base, CheckpointSource::kBase, "d20", -1).status().message(), HasSubstr("--step=-1"));
  EXPECT_THAT(ResolveCheckpoint(base, CheckpointSource::kSft, std::nullopt, std::nullopt).status().message(),
              HasSubstr("chatsft_checkpoints"));
}

}  // namespace
}  // namespace gpt_sft::runtime
