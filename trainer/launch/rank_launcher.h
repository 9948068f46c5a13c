// How `trainer --nproc_per_node=N` becomes N ranks on this machine: the trainer starts OpenMPI's
// mpirun (through runtime/collectives/run_ranks.sh, the one place that knows the launch
// settings) running N copies of the same binary with the same flags, and stays as the job's
// supervisor; each copy sees it was launched by mpirun and joins the world instead of
// relaunching. Users on several machines call mpirun (or srun) themselves with their host list.
//
// Why the trainer stays rather than becoming mpirun: mpirun takes a SIGINT or SIGTERM as the
// job's end (SIGCONT, then SIGTERM and SIGKILL a second apart), which kills ranks in the middle
// of the step they were asked to finish and save. The supervisor owns the user's signals
// instead: mpirun runs in a process group of its own (Ctrl-C and a signal to the trainer's group
// never reach it), and the supervisor passes a stop on as SIGUSR2, which mpirun forwards to
// every rank (stop_signal.h). It also ends mpirun if it dies itself (parent-death signal).
#ifndef GPT_SFT_TRAINER_LAUNCH_RANK_LAUNCHER_H_
#define GPT_SFT_TRAINER_LAUNCH_RANK_LAUNCHER_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::trainer {

/// Runs `run_ranks.sh -np nproc <this binary> argv[1..]` (RelaunchedByTrainer() true in the
/// ranks) to its end and returns the job's exit status: 0, 128 + the signal after a stop the
/// user asked for (130, 143: the ranks stopped after one step and rank 0 saved it), or mpirun's
/// non-zero status after a message naming the job. An error when it cannot start: no mpirun
/// ($MPIRUN or on PATH), no run_ranks.sh among the runfiles, fork failed.
absl::StatusOr<int> RunAsRanks(int nproc, int argc, char** argv);

/// True in ranks that RunAsRanks started (an environment variable mpirun passes on), false
/// under a user's own mpirun: what the launching trainer already did and printed (the demo's
/// setup) is not printed again.
bool RelaunchedByTrainer();

/// The ranks of this job on this machine (the launcher's local size), 1 when not launched.
int LocalRankCount();

/// This process's rank among the job's ranks on this machine (the launcher's local rank:
/// OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID), 0 when not launched.
int LocalRank();

/// The device one rank opens for --device=`device`: a GPU driver named without an index
/// ("cuda") means one GPU per local rank, "cuda:<local_rank>"; an explicit index, the cpu, and
/// opencl (PoCL offers one device that every rank shares) are taken as given.
std::string DeviceForLocalRank(const std::string& device, int local_rank);

/// The --num_threads=0 meaning for one rank: this machine's cores shared among its ranks,
/// at least 1, so that N ranks on one machine do not oversubscribe its cores N times.
int ThreadsPerLocalRank();

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LAUNCH_RANK_LAUNCHER_H_
