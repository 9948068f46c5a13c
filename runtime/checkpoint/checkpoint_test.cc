#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_meta.h"

#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/params/tiny_param_store.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using base::testing::FreshTestDir;
using base::testing::ListDir;
using base::testing::ReadBytes;
using base::testing::WriteBytes;

using testing::Tiny;
using testing::TinyStore;

CheckpointRecord Record(int64_t step) { return {step, 2.5, {{"mmlu_acc", 0.25}, {"arc_easy_acc", 0.5}}}; }

void ExpectBitEqual(const ParamStore& a, const ParamStore& b) {
  ASSERT_EQ(a.config(), b.config());
  ASSERT_EQ(a.params().size(), b.params().size());
  for (size_t k = 0; k < a.params().size(); ++k) {
    const Param &x = a.params()[k], &y = b.params()[k];
    ASSERT_EQ(x.name, y.name);
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.numel() * sizeof(float)), 0) << x.name;
  }
}

TEST(Checkpoint, RoundTripIsBitExact) {
  const std::string dir = FreshTestDir() + "/d2";
  const ParamStore s = TinyStore(11);
  ResolvedCheckpoint w = *SaveCheckpoint(dir, s, Record(5));
  EXPECT_EQ(w.model_path, dir + "/model_000005.safetensors");
  EXPECT_EQ(w.meta_path, dir + "/meta_000005.json");
  EXPECT_THAT(ListDir(dir), ElementsAre("meta_000005.json", "model_000005.safetensors"));
  EXPECT_THAT(ReadBytes(w.meta_path), StartsWith("{\n  \"step\": 5,\n  \"val_loss\": 2.5,\n  \"mmlu_acc\": 0.25,"));

  LoadedCheckpoint c = *LoadCheckpoint(dir, 5);
  ExpectBitEqual(c.params, s);
  EXPECT_EQ(c.params.Checksum(), s.Checksum());
  EXPECT_EQ(c.meta.record.step, 5);
  EXPECT_EQ(c.meta.record.val_loss, 2.5);
  ASSERT_EQ(c.meta.record.metrics.size(), 2u);
  EXPECT_EQ(c.meta.record.metrics[1].first, "arc_easy_acc");
  EXPECT_EQ(c.meta.model_config, Tiny());
  EXPECT_EQ(c.meta.param_checksum, s.Checksum());
  EXPECT_EQ(c.meta.num_params, 1792);
  EXPECT_EQ(c.meta.dtype, "F32");
}

TEST(Checkpoint, SftCheckpointsGoUnderTheDepthTagAndResolve) {
  const std::string base = FreshTestDir();
  const ParamStore s = TinyStore(12);
  ASSERT_TRUE(SaveSftCheckpoint(base, TinyStore(1), Record(9)).ok());
  ResolvedCheckpoint w = *SaveSftCheckpoint(base, s, Record(10));
  EXPECT_EQ(w.model_path, base + "/chatsft_checkpoints/d2/model_000010.safetensors");
  ResolvedCheckpoint r = *ResolveCheckpoint(base, CheckpointSource::kSft, std::nullopt, std::nullopt);
  EXPECT_EQ(r.step, 10);
  EXPECT_EQ(r.model_tag, "d2");
  ExpectBitEqual(LoadCheckpoint(r)->params, s);
}

TEST(Checkpoint, BadRecordsWriteNothing) {
  const std::string dir = FreshTestDir();
  EXPECT_THAT(SaveCheckpoint(dir + "/d2", TinyStore(1), Record(-1)).status().message(), HasSubstr("step -1"));
  CheckpointRecord bad = Record(1);
  bad.metrics.push_back({"step", 1.0});
  EXPECT_FALSE(SaveCheckpoint(dir + "/d2", TinyStore(1), bad).ok());
  EXPECT_TRUE(ListDir(dir).empty());
}

// The fault hook is called at every step of a save (open, each write, fsync, rename, directory
// fsync, of both files). Failing each in turn must leave checkpoint A loadable, bit for bit,
// and the directory holding A's two files only: no temp file, no partial B.
TEST(Checkpoint, FailureAtEveryPointOfASaveLeavesThePreviousCheckpoint) {
  const std::string root = FreshTestDir(), dir = root + "/d2";
  const ParamStore a = TinyStore(21), b = TinyStore(22);
  ASSERT_TRUE(SaveCheckpoint(dir, a, Record(1)).ok());
  const std::vector<std::string> files_of_a = ListDir(dir);

  std::vector<std::string> points;
  SaveOptions record_points;
  record_points.fault_hook = [&](absl::string_view p) {
    points.emplace_back(p);
    return absl::OkStatus();
  };
  ASSERT_TRUE(SaveCheckpoint(root + "/probe", b, Record(2), record_points).ok());
  ASSERT_GT(points.size(), 10u);  // open + header + 14 tensors + fsync + ... of the model alone
  EXPECT_EQ(points.front(), "model_000002.safetensors:open");
  EXPECT_EQ(points.back(), "meta_000002.json:fsync directory");

  for (size_t fail_at = 0; fail_at < points.size(); ++fail_at) {
    size_t calls = 0;
    SaveOptions inject;
    inject.fault_hook = [&](absl::string_view) {
      return calls++ == fail_at ? absl::ResourceExhaustedError("injected fault") : absl::OkStatus();
    };
    absl::Status s = SaveCheckpoint(dir, b, Record(2), inject).status();
    EXPECT_THAT(s.message(), HasSubstr("injected fault")) << points[fail_at];
    if (points[fail_at] == "meta_000002.json:fsync directory") {
      // Both renames happened: B is complete and durable but for the last directory fsync.
      ExpectBitEqual(LoadCheckpoint(dir, 2)->params, b);
      fs::remove(dir + "/model_000002.safetensors");
      fs::remove(dir + "/meta_000002.json");
    }
    EXPECT_EQ(ListDir(dir), files_of_a) << "failed at " << points[fail_at];
    absl::StatusOr<LoadedCheckpoint> loaded = LoadCheckpoint(dir, 1);
    ASSERT_TRUE(loaded.ok()) << points[fail_at] << ": " << loaded.status();
    ExpectBitEqual(loaded->params, a);
  }
}

// The same with a real failure from the kernel: a file-size limit below B's size makes
// write() fail with EFBIG part-way through the model file, as a full disk would.
TEST(Checkpoint, DiskFullMidWriteLeavesThePreviousCheckpoint) {
  const std::string dir = FreshTestDir() + "/d2";
  const ParamStore a = TinyStore(31), b = TinyStore(32);
  ASSERT_TRUE(SaveCheckpoint(dir, a, Record(1)).ok());
  signal(SIGXFSZ, SIG_IGN);
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;  // the model file is ~8 KiB
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = SaveCheckpoint(dir, b, Record(2)).status();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_THAT(s.message(), HasSubstr("cannot write " + dir + "/model_000002.safetensors"));
  EXPECT_THAT(ListDir(dir), ElementsAre("meta_000001.json", "model_000001.safetensors"));
  ExpectBitEqual(LoadCheckpoint(dir, 1)->params, a);
}

TEST(Checkpoint, OverwritingAStepReplacesBothFiles) {
  const std::string dir = FreshTestDir() + "/d2";
  ASSERT_TRUE(SaveCheckpoint(dir, TinyStore(1), Record(3)).ok());
  const ParamStore b = TinyStore(2);
  ASSERT_TRUE(SaveCheckpoint(dir, b, Record(3)).ok());
  EXPECT_THAT(ListDir(dir), ElementsAre("meta_000003.json", "model_000003.safetensors"));
  ExpectBitEqual(LoadCheckpoint(dir, 3)->params, b);
}

TEST(Checkpoint, CorruptedDataIsCaughtByTheChecksum) {
  const std::string dir = FreshTestDir() + "/d2";
  ResolvedCheckpoint w = *SaveCheckpoint(dir, TinyStore(41), Record(1));
  std::string bytes = ReadBytes(w.model_path);
  bytes[bytes.size() - 10] ^= 0x01;  // one bit in lm_head
  WriteBytes(w.model_path, bytes);
  absl::Status s = LoadCheckpoint(dir, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr(w.meta_path));
  EXPECT_THAT(s.message(), HasSubstr(w.model_path));
  EXPECT_THAT(s.message(), HasSubstr("checksum"));
}

// What a crash between the two renames of an overwrite would leave: a model that is not its
// meta's. Simulated by copying another checkpoint's model file over this one.
TEST(Checkpoint, ModelThatDoesNotBelongToItsMetaIsRefused) {
  const std::string dir = FreshTestDir() + "/d2";
  ResolvedCheckpoint one = *SaveCheckpoint(dir, TinyStore(51), Record(1));
  ResolvedCheckpoint two = *SaveCheckpoint(dir, TinyStore(52), Record(2));
  fs::copy_file(two.model_path, one.model_path, fs::copy_options::overwrite_existing);
  EXPECT_THAT(LoadCheckpoint(dir, 1).status().message(), HasSubstr("does not belong to this meta"));
}

TEST(Checkpoint, MissingOrMismatchedFilesAreErrorsNamingThem) {
  const std::string dir = FreshTestDir() + "/d2";
  ResolvedCheckpoint w = *SaveCheckpoint(dir, TinyStore(61), Record(1));
  EXPECT_THAT(LoadCheckpoint(dir, 7).status().message(), HasSubstr(dir + "/meta_000007.json"));

  // A meta without its model.
  fs::copy_file(w.meta_path, dir + "/meta_000002.json");
  EXPECT_THAT(LoadCheckpoint(dir, 2).status().message(), HasSubstr("records step 1, its name says 2"));
  fs::rename(w.model_path, dir + "/model_000002.safetensors");
  EXPECT_THAT(LoadCheckpoint(dir, 1).status().message(), HasSubstr(w.model_path));

  // The meta names another model file (a meta written so, its checksum its own).
  CheckpointMeta other = *MetaFromJson(w.meta_path, ReadBytes(w.meta_path));
  other.model_file = "model_000009.safetensors";
  WriteBytes(w.meta_path, *MetaToJson(other));
  fs::rename(dir + "/model_000002.safetensors", w.model_path);
  EXPECT_THAT(LoadCheckpoint(dir, 1).status().message(), HasSubstr("belongs to model file model_000009.safetensors"));
}

TEST(Checkpoint, ForeignAndTruncatedModelFilesAreErrors) {
  const std::string dir = FreshTestDir() + "/d2";
  ResolvedCheckpoint w = *SaveCheckpoint(dir, TinyStore(71), Record(1));
  const std::string good = ReadBytes(w.model_path);
  WriteBytes(w.model_path, std::string("PK\x03\x04", 4) + std::string(500, 'x'));  // a torch .pt zip
  EXPECT_THAT(LoadCheckpoint(dir, 1).status().message(), HasSubstr(w.model_path + ": header length"));
  WriteBytes(w.model_path, good.substr(0, good.size() / 2));
  absl::Status s = LoadCheckpoint(dir, 1).status();
  EXPECT_THAT(s.message(), HasSubstr(w.model_path));
  EXPECT_THAT(s.message(), HasSubstr("truncated: tensor \"transformer.h."));
}

TEST(Checkpoint, AFailedLoadLeavesTheCallersWeightsAlone) {
  const std::string dir = FreshTestDir() + "/d2";
  ResolvedCheckpoint w = *SaveCheckpoint(dir, TinyStore(81), Record(1));
  LoadedCheckpoint current = *LoadCheckpoint(dir, 1);
  const uint64_t before = current.params.Checksum();
  std::string bytes = ReadBytes(w.model_path);
  WriteBytes(w.model_path, bytes.substr(0, bytes.size() - 4));
  absl::StatusOr<LoadedCheckpoint> again = LoadCheckpoint(dir, 1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(current.params.Checksum(), before);
}

}  // namespace
}  // namespace gpt_sft::runtime
