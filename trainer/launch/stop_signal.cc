// Implements the stop-signal handlers: async-signal-safe only (atomics, write, setitimer, _exit).
#include "trainer/launch/stop_signal.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "trainer/launch/signal_safe_write.h"

namespace gpt_sft::trainer {
namespace {

std::atomic<int> received{0};
std::atomic<int> teardown_signal{0};
std::atomic<int> my_rank{0};
std::atomic<int> my_world_size{1};
// The rank's parent when OpenMPI's mpirun (or its daemon) started it; 0 otherwise.
std::atomic<pid_t> mpirun_parent{0};

// Appends `value` in decimal at `out` (no allocation); returns the end.
char* AppendInt(char* out, int value) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 16);
  while (n > 0) *out++ = digits[--n];
  return out;
}

// Half a second after mpirun's teardown signal the process is still here (it was not waiting in
// a collective that could fail and say which rank is gone): say why, and go before SIGKILL.
void OnTeardownDeadline(int) {
  if (teardown_signal.load() == 0) return;  // a SIGALRM of someone else's (mpirun forwards it)
  char line[256] = "trainer: error: rank ";
  char* end = AppendInt(line + strlen(line), my_rank.load());
  std::memcpy(end, " of ", 4);
  end = AppendInt(end + 4, my_world_size.load());
  const char tail[] = ": mpirun is ending the job (it does so when another rank died or failed): stopping now, "
                      "without saving; the run directory keeps its last saved step\n";
  std::memcpy(end, tail, sizeof(tail));
  WriteToStderr(line);
  _exit(128 + teardown_signal.load());
}

bool FromMpirun(const siginfo_t* info) {
  const pid_t parent = mpirun_parent.load();
  return parent != 0 && info != nullptr && info->si_code == SI_USER && info->si_pid == parent;
}

void OnStopSignal(int sig, siginfo_t* info, void*) {
  if ((sig == SIGTERM || sig == SIGINT) && FromMpirun(info)) {
    int expected = 0;
    if (teardown_signal.compare_exchange_strong(expected, sig)) {
      struct itimerval deadline;
      std::memset(&deadline, 0, sizeof(deadline));
      deadline.it_value.tv_usec = 500000;
      setitimer(ITIMER_REAL, &deadline, nullptr);
    }
    return;
  }
  int expected = 0;
  if (!received.compare_exchange_strong(expected, sig)) {
    WriteToStderr("\ntrainer: a second stop signal: exiting now, without saving\n");
    _exit(128 + sig);
  }
  if (sig == SIGUSR2) {
    // The launching trainer already told the user what happens; only rank 0 says it again.
    if (my_rank.load() == 0) WriteToStderr("trainer: stop requested: every rank finishes the step in flight, then rank 0 saves it\n");
    return;
  }
  WriteToStderr(sig == SIGINT ? "\ntrainer: SIGINT: finishing the step in flight, then saving a checkpoint "
                        "(Ctrl-C again to exit at once, without saving)\n"
                      : "\ntrainer: SIGTERM: finishing the step in flight, then saving a checkpoint "
                        "(a second signal exits at once, without saving)\n");
}

}  // namespace

void InstallStopSignalHandlers() {
  // OpenMPI names the world size in every rank's environment; its mpirun (or orted) is the parent.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) mpirun_parent.store(getppid());
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR2, &action, nullptr);
  struct sigaction deadline;
  std::memset(&deadline, 0, sizeof(deadline));
  deadline.sa_handler = OnTeardownDeadline;
  sigemptyset(&deadline.sa_mask);
  sigaction(SIGALRM, &deadline, nullptr);
  // A file-size limit is a full disk to us: the write fails with EFBIG and its error names the
  // file, instead of the process dying of SIGXFSZ with a file half written.
  signal(SIGXFSZ, SIG_IGN);
}

void SetStopSignalRank(int rank, int world_size) {
  my_rank.store(rank);
  my_world_size.store(world_size);
}

int StopSignalReceived() { return received.load(); }

std::string LauncherTeardown() {
  const int sig = teardown_signal.load();
  if (sig == 0) return "";
  return absl::StrCat("mpirun is ending the job (", StopSignalName(sig),
                      " from it: it does so when another rank died or failed)");
}

std::string StopSignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR2: return "SIGUSR2 (a stop passed on by the launching trainer)";
    default: return absl::StrCat("signal ", sig);
  }
}

}  // namespace gpt_sft::trainer
