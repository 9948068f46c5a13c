// StopSignal: how a trainer process takes the signals that stop it.
//
// * SIGINT and SIGTERM ask the trainer to stop cleanly. The first one is recorded (and a line
//   on stderr says what will happen); the loop finishes the step in flight, every rank agrees
//   on stopping after that same step, rank 0 saves it, and the process exits 128 + the signal
//   (130, 143). A second one ends the process at once with that status, without saving (for a
//   save that takes too long, or a stuck run).
// * SIGUSR2 is the same stop, passed on by the trainer that launched the ranks
//   (`--nproc_per_node`): it receives the user's SIGINT/SIGTERM and has mpirun forward SIGUSR2
//   to every rank (mpirun forwards SIGUSR2, while a SIGINT/SIGTERM to mpirun itself kills the
//   job). A user's own mpirun can be sent SIGUSR2 for the same clean stop.
// * Under OpenMPI's mpirun, a SIGTERM or SIGINT sent by mpirun itself (the rank's parent) is not
//   a request: mpirun is tearing the job down, which it does when a rank died or failed (or when
//   mpirun itself was signalled), and a SIGKILL follows within odls_base_sigkill_timeout. The
//   rank gives up: LauncherTeardown() turns non-empty, so a collective waiting for the dead rank
//   fails at once naming it; if the process is still alive half a second later, the handler
//   itself prints `trainer: error: rank r of W: ...` and exits 128 + the signal. Nothing is
//   saved then; the run directory keeps its last whole step.
#ifndef GPT_SFT_TRAINER_LAUNCH_STOP_SIGNAL_H_
#define GPT_SFT_TRAINER_LAUNCH_STOP_SIGNAL_H_

#include <string>

namespace gpt_sft::trainer {

/// Installs the handlers (idempotent).
void InstallStopSignalHandlers();

/// This process's place in the job, for the messages the handlers write (default: 0 of 1).
void SetStopSignalRank(int rank, int world_size);

/// 0, or the first stop signal received (SIGINT, SIGTERM, SIGUSR2).
int StopSignalReceived();

/// Empty, or why the launcher is tearing the job down (mpirun's own SIGTERM/SIGINT).
std::string LauncherTeardown();

/// "SIGINT", "SIGTERM", "SIGUSR2 (a stop passed on by the launching trainer)", ...
std::string StopSignalName(int sig);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LAUNCH_STOP_SIGNAL_H_
