// How `trainer --nproc_per_node=N` becomes N ranks on this machine: the trainer replaces
// itself with OpenMPI's mpirun (through runtime/collectives/run_ranks.sh, the one place that
// knows the launch settings) running N copies of the same binary with the same flags; each
// copy sees it was launched by mpirun and joins the world instead of relaunching. Users on
// several machines call mpirun (or srun) themselves with their own host list.
#ifndef GPT_SFT_TRAINER_RANK_LAUNCHER_H_
#define GPT_SFT_TRAINER_RANK_LAUNCHER_H_

#include "absl/status/status.h"

namespace gpt_sft::trainer {

/// Execs `run_ranks.sh -np nproc <this binary> argv[1..]`, with RelaunchedByTrainer() true in
/// the ranks. Returns only when that cannot start: no mpirun ($MPIRUN or on PATH), no
/// run_ranks.sh among the runfiles, exec failed.
absl::Status RelaunchAsRanks(int nproc, int argc, char** argv);

/// True in ranks that RelaunchAsRanks started (an environment variable mpirun passes on), false
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

#endif  // GPT_SFT_TRAINER_RANK_LAUNCHER_H_
