#include "trainer/validation/logged_process.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace gpt_sft::trainer::validation {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> Env() { return {{"PATH", "/usr/bin:/bin"}}; }

TEST(RunLogged, KeepsBothStreamsInTheLogAndEchoesWithAPrefix) {
  const std::string log = ::testing::TempDir() + "/both.log";
  std::ostringstream console;
  absl::StatusOr<LoggedRun> r =
      RunLogged({"/bin/sh", "-c", "echo out1; echo err1 >&2; sleep 0.1; echo out2; exit 3"}, Env(),
                {log, "[t] ", &console, 0});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->term_signal, 0);
  EXPECT_EQ(r->stderr_tail, "err1");
  const std::string text = Read(log);
  EXPECT_NE(text.find("out1\n"), std::string::npos);
  EXPECT_NE(text.find("err1\n"), std::string::npos);
  EXPECT_NE(text.find("out2\n"), std::string::npos);
  EXPECT_NE(console.str().find("[t] out2\n"), std::string::npos) << console.str();
  EXPECT_NE(console.str().find("[t] err1\n"), std::string::npos) << console.str();
  EXPECT_NE(r->log_tail.find("out2"), std::string::npos);
}

TEST(RunLogged, ReportsTheSignalAndTheTimeout) {
  const std::string log = ::testing::TempDir() + "/slow.log";
  absl::StatusOr<LoggedRun> r = RunLogged({"/bin/sh", "-c", "exec sleep 30"}, Env(), {log, "", nullptr, 0.5});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGTERM);
  EXPECT_EQ(r->exit_code, -1);
}

TEST(RunLogged, MissingProgramIsAnErrorNamingIt) {
  absl::StatusOr<LoggedRun> r =
      RunLogged({"/nonexistent/trainer"}, Env(), {::testing::TempDir() + "/x.log", "", nullptr, 0});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/trainer"), std::string::npos);
}

TEST(LastLines, CutsAtLineStarts) {
  EXPECT_EQ(LastLines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(LastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(LastLines("", 3), "");
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
