#include "trainer/launch/rank_launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/runfiles.h"
#include "trainer/launch/signal_safe_write.h"

namespace gpt_sft::trainer {
namespace {

constexpr char kRelaunchedVariable[] = "GPT_SFT_RANKS_STARTED_BY_TRAINER";

/// $MPIRUN, else "mpirun" when one is on $PATH; empty when neither. The bare name, not the
/// path found: OpenMPI started by an absolute path takes its parent directory as --prefix, and
/// with /bin/mpirun (merged /usr) that prefix is "/", which it refuses.
std::string FindMpirun() {
  if (const char* explicit_path = std::getenv("MPIRUN"); explicit_path && *explicit_path) return explicit_path;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(std::string(dir), "/mpirun");
    if (::access(candidate.c_str(), X_OK) == 0) return "mpirun";
  }
  return "";
}

int EnvInt(const char* name) {
  int value = 0;
  const char* text = std::getenv(name);
  return text && absl::SimpleAtoi(text, &value) ? value : 0;
}

// The supervisor's state, shared with its signal handler.
volatile sig_atomic_t mpirun_pid = 0;
volatile sig_atomic_t stop_signal = 0;

// The user's SIGINT/SIGTERM (or SIGHUP): passed on to every rank as SIGUSR2; a second one too,
// which the ranks take as "exit at once".
void OnSupervisorSignal(int sig) {
  if (stop_signal == 0) {
    stop_signal = sig;
    // One write per message: the ranks write to the same stream meanwhile.
    WriteToStderr(sig == SIGINT    ? "\ntrainer: SIGINT: every rank finishes the step in flight, then rank 0 saves "
                                     "it (Ctrl-C again to stop at once, without saving)\n"
                  : sig == SIGTERM ? "\ntrainer: SIGTERM: every rank finishes the step in flight, then rank 0 saves "
                                     "it (a second signal stops at once, without saving)\n"
                                   : "\ntrainer: SIGHUP: every rank finishes the step in flight, then rank 0 saves "
                                     "it (a second signal stops at once, without saving)\n");
  } else {
    WriteToStderr("\ntrainer: a second stop signal: the ranks exit now, without saving\n");
  }
  if (mpirun_pid > 0) kill(mpirun_pid, SIGUSR2);
}

constexpr int kSupervisedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// In the child, before exec: mpirun gets its own process group, the default dispositions, and
// SIGTERM (a teardown) if the supervisor dies.
[[noreturn]] void ExecMpirun(std::vector<char*>& c_args, pid_t supervisor, const sigset_t& old_mask) {
  setpgid(0, 0);
  for (int sig : kSupervisedSignals) signal(sig, SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != supervisor) _exit(1);  // the supervisor died before the line above
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  ::execv(c_args[0], c_args.data());
  const std::string message = absl::StrCat("trainer: error: cannot start ", c_args[1], ": ", std::strerror(errno), "\n");
  WriteToStderr(message.c_str());
  _exit(127);
}

int ExitStatusOf(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace

bool RelaunchedByTrainer() { return EnvInt(kRelaunchedVariable) == 1; }

absl::StatusOr<int> RunAsRanks(int nproc, int argc, char** argv) {
  const std::string mpirun = FindMpirun();
  if (mpirun.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--nproc_per_node=", nproc, " starts the ranks with OpenMPI's mpirun, which is not on PATH (install "
        "openmpi-bin, or name it with $MPIRUN)"));
  }
  absl::StatusOr<std::string> script = base::FindRunfile("gpt_sft/runtime/collectives/run_ranks.sh");
  if (!script.ok()) return script.status();
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return absl::InternalError("cannot read /proc/self/exe: " + ec.message());

  std::vector<std::string> args = {"/bin/bash", *script, "--mpirun", mpirun, "-np", std::to_string(nproc), self};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  std::vector<char*> c_args;
  for (std::string& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  ::setenv(kRelaunchedVariable, "1", /*overwrite=*/1);

  // The handlers go in before the fork and the signals stay blocked until mpirun_pid is known,
  // so a Ctrl-C at any instant reaches the ranks.
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnSupervisorSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigset_t supervised, old_mask;
  sigemptyset(&supervised);
  for (int sig : kSupervisedSignals) {
    sigaction(sig, &action, nullptr);
    sigaddset(&supervised, sig);
  }
  sigprocmask(SIG_BLOCK, &supervised, &old_mask);
  const pid_t supervisor = getpid();
  const pid_t child = fork();
  if (child < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return absl::InternalError(absl::StrCat("cannot start ", *script, ": fork: ", std::strerror(errno)));
  }
  if (child == 0) ExecMpirun(c_args, supervisor, old_mask);
  setpgid(child, child);  // also here: no signal may reach mpirun through our group meanwhile
  mpirun_pid = child;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);

  int wait_status = 0;
  while (waitpid(child, &wait_status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid(mpirun): ", std::strerror(errno)));
  }
  mpirun_pid = 0;
  const int status = ExitStatusOf(wait_status);
  // Stopped as asked: the ranks exit 0 after a passed-on stop (128 + SIGUSR2 after a second).
  if (stop_signal != 0 && (status == 0 || status == 128 + SIGUSR2)) return 128 + stop_signal;
  // 130/143: a rank was sent the stop itself; the ranks' [stop] lines said where they stopped.
  if (status != 0 && status != 128 + SIGINT && status != 128 + SIGTERM) {
    std::cerr << absl::StrFormat("trainer: error: the job of %d ranks ended with status %d (mpirun's; the lines "
                                 "above say which rank failed and why)\n",
                                 nproc, status)
              << std::flush;
  }
  return status;
}

int LocalRankCount() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    if (int n = EnvInt(name); n > 0) return n;
  }
  return 1;
}

int LocalRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (std::getenv(name) != nullptr) return std::max(0, EnvInt(name));
  }
  return 0;
}

std::string DeviceForLocalRank(const std::string& device, int local_rank) {
  return device == "cuda" ? absl::StrCat("cuda:", local_rank) : device;
}

int ThreadsPerLocalRank() {
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, cores / LocalRankCount());
}

}  // namespace gpt_sft::trainer
