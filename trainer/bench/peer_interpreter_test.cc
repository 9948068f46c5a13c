#include "trainer/bench/peer_interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "trainer/bench/pytorch_peer.h"

namespace gpt_sft::bench {
namespace {

using ::testing::HasSubstr;

PeerVenvOptions TestVenv(const std::string& name, std::vector<std::string> install) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  PeerVenvOptions o;
  o.root_dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/peer_interpreter_" + name;
  std::filesystem::remove_all(o.root_dir);
  o.torch_version = "9.9.9";
  o.install_command = std::move(install);
  o.check_command = {"{python}", "-c", "print('9.9.9')"};
  static std::ostringstream sink;
  o.progress = &sink;
  return o;
}

TEST(ChoosePeerInterpreterTest, DebianIsLabelled) {
  absl::StatusOr<PeerInterpreter> p = ChoosePeerInterpreter("torch-debian", "", TestVenv("debian", {"/bin/false"}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->python, kDebianPython);
  EXPECT_THAT(p->source, HasSubstr("--peer=torch-debian"));
  EXPECT_EQ(p->fallback_reason, "");
}

TEST(ChoosePeerInterpreterTest, AnExplicitPythonIsUsedAsIs) {
  absl::StatusOr<PeerInterpreter> p =
      ChoosePeerInterpreter("torch", "/opt/py/bin/python", TestVenv("explicit", {"/bin/false"}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->python, "/opt/py/bin/python");
  EXPECT_EQ(p->fallback_reason, "");
}

TEST(ChoosePeerInterpreterTest, TheVenvWhenItCanBeMade) {
  if (access(kDebianPython, X_OK) != 0) GTEST_SKIP() << "no " << kDebianPython;
  PeerVenvOptions venv = TestVenv("venv", {"/bin/true"});
  absl::StatusOr<PeerInterpreter> p = ChoosePeerInterpreter("torch", "", venv);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->python, PeerVenvDir(venv) + "/bin/python");
  EXPECT_THAT(p->source, HasSubstr("torch 9.9.9 from PyPI"));
  EXPECT_EQ(p->fallback_reason, "");
}

TEST(ChoosePeerInterpreterTest, AFailedInstallFallsBackToDebianAndSaysWhy) {
  if (access(kDebianPython, X_OK) != 0) GTEST_SKIP() << "no " << kDebianPython;
  absl::StatusOr<PeerInterpreter> p =
      ChoosePeerInterpreter("torch", "", TestVenv("fallback", {"/bin/sh", "-c", "echo 'network unreachable'; exit 1"}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->python, kDebianPython);
  EXPECT_THAT(p->source, HasSubstr("FALLBACK"));
  EXPECT_THAT(p->fallback_reason, HasSubstr("the pinned torch 9.9.9 could not be installed"));
  EXPECT_THAT(p->fallback_reason, HasSubstr("network unreachable"));
}

TEST(ChoosePeerInterpreterTest, AnUnknownPeerIsAnError) {
  absl::StatusOr<PeerInterpreter> p = ChoosePeerInterpreter("jax", "", TestVenv("unknown", {"/bin/false"}));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("'jax'"));
}

}  // namespace
}  // namespace gpt_sft::bench
