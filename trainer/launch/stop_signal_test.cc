#include "trainer/launch/stop_signal.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

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

TEST(StopSignal, SigUsr2IsTheLaunchersStop) {
  EXPECT_EQ(InChild([] {
              InstallStopSignalHandlers();
              raise(SIGUSR2);
              if (!LauncherTeardown().empty()) return 1;
              return StopSignalReceived() == SIGUSR2 ? 9 : 2;
            }),
            9);
}

/// A child that sends SIGTERM to itself from a process of its own (`sender` kChild) or waits for
/// this test, its parent, to send it (kParent); `under_openmpi` sets the variable mpirun sets.
/// The child exits 11 when it took the signal for a clean stop, 6 when it took it for mpirun's
/// teardown and is still alive after 3 s, 143 when the teardown deadline ended it.
enum class Sender { kParent, kChild };
int SigtermChild(Sender sender, bool under_openmpi) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    if (under_openmpi) setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    InstallStopSignalHandlers();
    SetStopSignalRank(1, 2);
    if (sender == Sender::kChild) {
      const pid_t self = getpid();
      if (fork() == 0) _exit(kill(self, SIGTERM) == 0 ? 0 : 1);
    } else {
      char go = 1;
      if (write(ready[1], &go, 1) != 1) _exit(3);
    }
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(3)) {
      if (StopSignalReceived() == SIGTERM) _exit(LauncherTeardown().empty() ? 11 : 4);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    _exit(LauncherTeardown().empty() ? 7 : 6);
  }
  if (sender == Sender::kParent) {
    char go = 0;
    if (read(ready[0], &go, 1) != 1) return -2;
    kill(child, SIGTERM);
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(ready[0]);
  close(ready[1]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

TEST(StopSignal, MpirunsOwnSigtermEndsTheRankWithinHalfASecond) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(SigtermChild(Sender::kParent, /*under_openmpi=*/true), 143);
  // Well before the child's own 3 s: the deadline ended it, not the end of its wait.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));
}

TEST(StopSignal, AnotherProcesssSigtermToARankIsACleanStop) {
  EXPECT_EQ(SigtermChild(Sender::kChild, /*under_openmpi=*/true), 11);
}

TEST(StopSignal, WithoutMpirunTheParentsSigtermIsACleanStop) {
  // `timeout 60 trainer ...` or a job scheduler: the parent asks for a stop, nothing tears down.
  EXPECT_EQ(SigtermChild(Sender::kParent, /*under_openmpi=*/false), 11);
}

}  // namespace
}  // namespace gpt_sft::trainer
