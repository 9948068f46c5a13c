#include "base/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FreshTestDir;
using testing::ListDir;
using testing::ReadBytes;

TEST(AtomicFile, WritesAndReplaces) {
  const std::string dir = FreshTestDir(), path = dir + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(ReadBytes(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  EXPECT_EQ(ReadBytes(path), "second, longer");
  EXPECT_THAT(ListDir(dir), ElementsAre("f.txt"));
}

TEST(AtomicFile, NothingVisibleUntilPublish) {
  const std::string dir = FreshTestDir(), path = dir + "/f.txt";
  auto f = *AtomicFile::Open(path);
  ASSERT_TRUE(f->Append("abc", 3).ok());
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(f->temp_path()));
  ASSERT_TRUE(f->Publish().ok());
  EXPECT_EQ(ReadBytes(path), "abc");
  EXPECT_THAT(ListDir(dir), ElementsAre("f.txt"));
}

TEST(AtomicFile, AbandonedWriteLeavesNoTempFile) {
  const std::string dir = FreshTestDir(), path = dir + "/f.txt";
  {
    auto f = *AtomicFile::Open(path);
    ASSERT_TRUE(f->Append("abc", 3).ok());
  }
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST(AtomicFile, MisuseIsAnError) {
  const std::string dir = FreshTestDir();
  auto f = *AtomicFile::Open(dir + "/f.txt");
  EXPECT_FALSE(f->Publish().ok());  // before Sync
  ASSERT_TRUE(f->Sync().ok());
  EXPECT_FALSE(f->Append("x", 1).ok());
  EXPECT_FALSE(f->Sync().ok());
}

TEST(AtomicFile, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = FreshTestDir() + "/no/such/dir/f.txt";
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_THAT(s.message(), HasSubstr(path));
}

// Every step can fail; each failure keeps the old contents and removes the temp file.
TEST(AtomicFile, FailureAtEveryStepKeepsTheOldFile) {
  const std::string dir = FreshTestDir(), path = dir + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  for (const char* step : {"f.txt:open", "f.txt:write", "f.txt:fsync", "f.txt:rename"}) {
    absl::Status s = WriteFileAtomically(path, "new", [&](absl::string_view point) {
      return point == step ? absl::ResourceExhaustedError("injected") : absl::OkStatus();
    });
    EXPECT_THAT(s.message(), HasSubstr("injected")) << step;
    EXPECT_THAT(s.message(), HasSubstr(path)) << step;
    EXPECT_EQ(ReadBytes(path), "old") << step;
    EXPECT_THAT(ListDir(dir), ElementsAre("f.txt")) << step;
  }
  // After the rename the new file is complete; a failed directory fsync is still reported.
  absl::Status s = WriteFileAtomically(path, "new", [](absl::string_view point) {
    return point == "f.txt:fsync directory" ? absl::InternalError("injected") : absl::OkStatus();
  });
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(ReadBytes(path), "new");
  EXPECT_THAT(ListDir(dir), ElementsAre("f.txt"));
}

// A real failure from the kernel: a file-size limit makes write() fail with EFBIG, as a full
// disk would with ENOSPC.
TEST(AtomicFile, RealWriteFailureKeepsTheOldFile) {
  const std::string dir = FreshTestDir(), path = dir + "/f.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  signal(SIGXFSZ, SIG_IGN);
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFileAtomically(path, std::string(1 << 16, 'x'));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_THAT(s.message(), HasSubstr("cannot write"));
  EXPECT_EQ(ReadBytes(path), "old");
  EXPECT_THAT(ListDir(dir), ElementsAre("f.txt"));
}

}  // namespace
}  // namespace gpt_sft::base
