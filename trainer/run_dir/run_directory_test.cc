#include "trainer/run_dir/run_directory.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/report/metrics_log.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::ListDir;
using base::testing::ReadBytes;
using base::testing::WriteBytes;

TEST(RunDirectory, CreatesLocksAndNamesTheHolder) {
  const std::string dir = FreshTestDir() + "/out/d2";
  absl::StatusOr<std::unique_ptr<RunDirectory>> first = RunDirectory::Open(dir, "--output_dir=" + dir);
  ASSERT_TRUE(first.ok()) << first.status();
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(ReadBytes(dir + "/.lock"), absl::StrCat(getpid(), " ", host, "\n"));
  // A second open file description, as a second process would have, is refused.
  absl::Status second = RunDirectory::Open(dir, "--output_dir=" + dir).status();
  EXPECT_THAT(second.message(), HasSubstr(absl::StrCat("--output_dir=", dir, " is in use by another run: pid ",
                                                       getpid(), " on host ", host)));
  first->reset();
  EXPECT_TRUE(RunDirectory::Open(dir, "--output_dir=" + dir).ok());  // released with the first
}

TEST(RunDirectory, AnotherProcessHoldingTheLockIsNamed) {
  const std::string dir = FreshTestDir();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    auto held = RunDirectory::Open(dir, "--output_dir=" + dir);
    char ok = held.ok() ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  EXPECT_THAT(RunDirectory::Open(dir, "--output_dir=" + dir).status().message(), HasSubstr(absl::StrCat("pid ", child)));
  kill(child, SIGKILL);  // the kernel drops a dead process's lock: no stale lock
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(RunDirectory::Open(dir, "--output_dir=" + dir).ok());
}

TEST(RunDirectory, AFileOrAPathThroughAFileIsRefusedAndNothingIsCreated) {
  const std::string root = FreshTestDir();
  WriteBytes(root + "/afile", "keep");
  EXPECT_THAT(RunDirectory::Open(root + "/afile", "--output_dir=" + root + "/afile").status().message(),
              HasSubstr("--output_dir=" + root + "/afile is a file, not a directory"));
  EXPECT_THAT(RunDirectory::Open(root + "/afile/run", "--output_dir=" + root + "/afile/run").status().message(),
              HasSubstr("--output_dir=" + root + "/afile/run: cannot"));
  EXPECT_EQ(ReadBytes(root + "/afile"), "keep");
  EXPECT_THAT(RunDirectory::Open("/proc/gpt_sft_run", "--output_dir=/proc/gpt_sft_run").status().message(),
              HasSubstr("--output_dir=/proc/gpt_sft_run: cannot create the run directory"));
}

TEST(RunDirectory, RemovesOnlyDeadWritersTemps) {
  const std::string dir = FreshTestDir();
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  fs::create_directories(absl::StrCat(dir, "/.step_000002.tmp.", child));
  WriteBytes(absl::StrCat(dir, "/metrics.jsonl"), "{}\n");
  absl::StatusOr<std::unique_ptr<RunDirectory>> opened = RunDirectory::Open(dir, "--output_dir=" + dir);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ((*opened)->removed_temps().size(), 1u);
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{".lock", "metrics.jsonl"}));
}

TEST(TruncateFileTo, CutsBackAndReportsAShorterFile) {
  const std::string path = FreshTestDir() + "/metrics.jsonl";
  WriteBytes(path, "a\nb\nc\n");
  ASSERT_TRUE(TruncateFileTo(path, 4).ok());
  EXPECT_EQ(ReadBytes(path), "a\nb\n");
  EXPECT_THAT(TruncateFileTo(path, 10).message(), HasSubstr(path + " has 4 bytes, fewer than the 10"));
  EXPECT_EQ(ReadBytes(path), "a\nb\n");
}

TEST(MetricsLog, AFullDiskNeverLeavesATornLine) {
  const std::string path = FreshTestDir() + "/metrics.jsonl";
  StepRecord record;
  record.mode = "eager";
  {
    auto log = *MetricsLog::Open(path);
    for (int i = 0; i < 3; ++i) {
      record.step = i;
      ASSERT_TRUE(log->Append(record).ok());
    }
  }
  const std::string before = ReadBytes(path);
  const pid_t child = fork();
  if (child == 0) {
    // A file-size limit a little past the end: the next record fits only in part.
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {rlim_t(before.size() + 40), RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &limit);
    auto log = *MetricsLog::Open(path);
    record.step = 3;
    absl::Status s = log->Append(record);
    const bool named = !s.ok() && s.message().find("cannot append to the metrics file " + path) != std::string::npos &&
                       s.message().find("keeps its whole records") != std::string::npos;
    _exit(named ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the error does not name the file";
  EXPECT_EQ(ReadBytes(path), before);  // every whole record kept, no part of the fourth
  auto log = *MetricsLog::Open(path);
  record.step = 3;
  ASSERT_TRUE(log->Append(record).ok());  // and the log goes on with whole lines
  std::vector<std::string> lines = absl::StrSplit(ReadBytes(path), '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), 4u);
}

}  // namespace
}  // namespace gpt_sft::trainer
