#include "trainer/stop_signal.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

/// Runs `body` in a child; returns its exit status (or 1000 + the signal that ended it).
template <typename Body>
int InChild(Body body) {
  const pid_t child = fork();
  if (child == 0) _exit(body());
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

TEST(StopSignal, TheFirstSignalIsRecordedAndTheProcessGoesOn) {
  EXPECT_EQ(InChild([] {
              InstallStopSignalHandlers();
              if (StopSignalReceived() != 0) return 1;
              raise(SIGTERM);
              return StopSignalReceived() == SIGTERM ? 7 : 2;
            }),
            7);
}

TEST(StopSignal, ASecondSignalExitsAtOnceWith128PlusIt) {
  EXPECT_EQ(InChild([] {
              InstallStopSignalHandlers();
              raise(SIGINT);
              raise(SIGINT);
              return 3;  // not reached
            }),
            130);
}

}  // namespace
}  // namespace gpt_sft::trainer
