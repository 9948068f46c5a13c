// The peer venv's state machine with the real `python3 -m venv` and stand-in install and check
// commands (no torch is downloaded): a complete venv is made once and reused; a failed, killed
// or wrong install leaves nothing under the final name; a dead install's partial directory is
// removed; an unmarked final directory is refused.
#include "trainer/bench/peer_venv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpt_sft::bench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kBasePython[] = "/usr/bin/python3";

class PeerVenvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kBasePython, X_OK) != 0) GTEST_SKIP() << "no " << kBasePython;
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/peer_venv_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    options_.root_dir = root_;
    options_.base_python = kBasePython;
    options_.torch_version = "9.9.9";
    options_.install_command = {"/bin/sh", "-c", "echo 'Downloading torch 100%'"};
    options_.check_command = {"{python}", "-c", "print('9.9.9+cpu')"};
    options_.progress = &progress_;
  }

  // Every entry of the root but the install log.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(root_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string root_;
  PeerVenvOptions options_;
  std::ostringstream progress_;
};

TEST_F(PeerVenvTest, MakesACompleteVenvOnceAndReusesIt) {
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_TRUE(python.ok()) << python.status();
  EXPECT_EQ(*python, root_ + "/torch-peer-9.9.9/bin/python");
  EXPECT_TRUE(fs::exists(*python));
  EXPECT_TRUE(fs::exists(root_ + "/torch-peer-9.9.9/" + kPeerVenvCompleteMarker));
  EXPECT_THAT(Entries(), ::testing::ElementsAre("torch-peer-9.9.9"));  // no partial, no log
  // The message, the numbered progress lines and the installer's own output reached the user.
  EXPECT_THAT(progress_.str(), HasSubstr("first use: creating a Python venv with torch 9.9.9"));
  EXPECT_THAT(progress_.str(), HasSubstr("[2/3]"));
  EXPECT_THAT(progress_.str(), HasSubstr("Downloading torch 100%"));
  EXPECT_THAT(progress_.str(), HasSubstr("ready"));

  // The second call finds it: an installer that would fail is never run.
  options_.install_command = {"/bin/sh", "-c", "exit 1"};
  progress_.str("");
  absl::StatusOr<std::string> again = EnsurePeerVenv(options_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *python);
  EXPECT_EQ(progress_.str(), "");
}

TEST_F(PeerVenvTest, FailedInstallNamesTheCommandAndLeavesNoVenv) {
  options_.install_command = {"/bin/sh", "-c", "echo 'ERROR: No matching distribution found for torch' >&2; exit 1"};
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_FALSE(python.ok());
  EXPECT_THAT(python.status().message(), HasSubstr("installing torch failed"));
  EXPECT_THAT(python.status().message(), HasSubstr("/bin/sh -c echo 'ERROR"));
  EXPECT_THAT(python.status().message(), HasSubstr("exited with status 1"));
  EXPECT_THAT(python.status().message(), HasSubstr("No matching distribution"));
  EXPECT_THAT(python.status().message(), HasSubstr(root_ + "/torch-peer-9.9.9.install.log"));
  EXPECT_THAT(Entries(), ::testing::ElementsAre("torch-peer-9.9.9.install.log"));
  EXPECT_FALSE(fs::exists(root_ + "/torch-peer-9.9.9"));
}

TEST_F(PeerVenvTest, KilledInstallLeavesNoVenv) {
  options_.install_command = {"/bin/sh", "-c", "echo 'Downloading torch 40%'; kill -9 $$"};
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_FALSE(python.ok());
  EXPECT_THAT(python.status().message(), HasSubstr("killed by signal 9"));
  EXPECT_FALSE(fs::exists(root_ + "/torch-peer-9.9.9"));
  EXPECT_THAT(Entries(), ::testing::ElementsAre("torch-peer-9.9.9.install.log"));
}

TEST_F(PeerVenvTest, TheWrongTorchIsRefused) {
  options_.check_command = {"{python}", "-c", "print('1.13.0a0')"};
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_FALSE(python.ok());
  EXPECT_THAT(python.status().message(), HasSubstr("reported torch '1.13.0a0', want 9.9.9"));
  EXPECT_FALSE(fs::exists(root_ + "/torch-peer-9.9.9"));
}

TEST_F(PeerVenvTest, TheCheckRunsTheNewVenvsPython) {
  // sys.prefix of the python the check ran is the partial venv, not the base interpreter.
  options_.check_command = {"{python}", "-c", "import sys; print('9.9.9 ' + sys.prefix)"};
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_TRUE(python.ok()) << python.status();
  EXPECT_THAT(progress_.str(), HasSubstr("torch 9.9.9 " + root_ + "/torch-peer-9.9.9.partial-"));
}

TEST_F(PeerVenvTest, AnInterruptedInstallsPartialIsRemoved) {
  // A pid above the kernel's limit belongs to no process: an install that died.
  const std::string dead = root_ + "/torch-peer-9.9.9.partial-2147483600";
  fs::create_directories(dead + "/bin");
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_TRUE(python.ok()) << python.status();
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_THAT(progress_.str(), HasSubstr("removing " + dead));
}

TEST_F(PeerVenvTest, AnUnmarkedFinalDirectoryIsRefused) {
  fs::create_directories(root_ + "/torch-peer-9.9.9/bin");
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_FALSE(python.ok());
  EXPECT_EQ(python.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(python.status().message(), HasSubstr("rm -rf " + root_ + "/torch-peer-9.9.9"));
}

TEST_F(PeerVenvTest, AMissingBasePythonIsNamed) {
  options_.base_python = "/nonexistent/python3";
  absl::StatusOr<std::string> python = EnsurePeerVenv(options_);
  ASSERT_FALSE(python.ok());
  EXPECT_THAT(python.status().message(), HasSubstr("/nonexistent/python3"));
  EXPECT_FALSE(fs::exists(root_ + "/torch-peer-9.9.9"));
}

TEST(DefaultBasePythonTest, TheFirstPython3OnThePath) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/path_with_python";
  fs::create_directories(dir);
  std::ofstream(dir + "/python3") << "#!/bin/sh\n";
  fs::permissions(dir + "/python3", fs::perms::owner_all);
  const std::string saved = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  setenv("PATH", ("/nonexistent:" + dir + ":/usr/bin").c_str(), 1);
  EXPECT_EQ(DefaultBasePython(), dir + "/python3");
  setenv("PATH", "/nonexistent", 1);
  EXPECT_EQ(DefaultBasePython(), "/usr/bin/python3");
  setenv("PATH", saved.c_str(), 1);
}

TEST(PeerVenvDirTest, DefaultsUnderTheUsersCache) {
  PeerVenvOptions o;
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(PeerVenvDir(o), std::string("/x/cache/gpt-sft/torch-peer-") + kPinnedTorchVersion);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(PeerVenvDir(o), std::string("/home/u/.cache/gpt-sft/torch-peer-") + kPinnedTorchVersion);
  o.root_dir = "/r";
  EXPECT_EQ(PeerVenvDir(o), std::string("/r/torch-peer-") + kPinnedTorchVersion);
}

}  // namespace
}  // namespace gpt_sft::bench
