#include "trainer/rank_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/runfiles.h"

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

}  // namespace

bool RelaunchedByTrainer() { return EnvInt(kRelaunchedVariable) == 1; }

absl::Status RelaunchAsRanks(int nproc, int argc, char** argv) {
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
  ::execv(c_args[0], c_args.data());
  return absl::InternalError(absl::StrCat("cannot start ", *script, " with ", mpirun, ": ", std::strerror(errno)));
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
