// Runs under mpirun (run_ranks.sh): the last rank stops answering for twice the timeout; the
// others' call must fail with an error that names it, and the communicator stays failed.
//
// What mpirun does when a rank dies instead (OpenMPI 4.1.4 here, run_ranks.sh -np 2, the last
// rank leaving before an MPI_Iallreduce the other polls for 5 s; recorded because the trainer
// relies on it): mpirun kills the surviving ranks within about a second and exits non-zero:
//   _exit(0) without MPI_Finalize -> "mpirun has exited due to process rank 1 ... exiting
//                                    improperly", status 1;
//   _exit(3)                      -> "one or more processes exited with non-zero status", 3;
//   abort()                       -> "process rank 1 ... exited on signal 6 (Aborted)", 134.
// So with mpirun a dead peer ends the job; the timeout below is what catches a peer that
// hangs (a deadlock, a stuck filesystem, a stopped process), which would hang the job forever.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/collectives/mpi_communicator.h"

namespace gpt_sft::runtime::collectives {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<Communicator> MakeOrDie(milliseconds timeout) {
  auto made = MakeMpiCommunicator(MpiOptions{timeout});
  if (!made.ok()) {
    std::fprintf(stderr, "MakeMpiCommunicator: %s\n", made.status().ToString().c_str());
    std::abort();
  }
  return *std::move(made);
}

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

TEST(MpiFault, AHungRankIsNamedWithinTheTimeout) {
  const milliseconds timeout(3000);
  std::unique_ptr<Communicator> spare = MakeOrDie(milliseconds(60000));  // to end the test in step
  std::unique_ptr<Communicator> world = MakeOrDie(timeout);
  const int hung = world->world_size() - 1;
  ASSERT_GT(world->world_size(), 1);
  ASSERT_TRUE(world->Barrier().ok());  // call #1: everyone is here

  // MPI may still write this after the call timed out (see the header): never freed.
  auto* buffer = new std::vector<float>(1000, 1.0f);
  if (world->rank() == hung) {
    std::this_thread::sleep_for(2 * timeout);
    // The others gave up on call #2 but it is still posted: joining it now completes it.
    EXPECT_TRUE(world->AllReduce(buffer->data(), 1000, DataType::kFloat32, ReduceOp::kSum).ok());
  } else {
    const auto start = std::chrono::steady_clock::now();
    const absl::Status status = world->AllReduce(buffer->data(), 1000, DataType::kFloat32, ReduceOp::kSum);
    const auto waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    std::printf("rank %d: failed after %lld ms: %s\n", world->rank(), static_cast<long long>(waited.count()),
                status.ToString().c_str());
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_TRUE(Contains(status, "rank " + std::to_string(hung) + " never reached it")) << status;
    EXPECT_TRUE(Contains(status, "mpi all_reduce #2 (count 1000, f32, sum) on rank " +
                                     std::to_string(world->rank()) + " of " + std::to_string(world->world_size())))
        << status;
    EXPECT_GE(waited, timeout);

    // Poisoned: the next call fails at once, quoting the first failure.
    const absl::Status later = world->Barrier();
    EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition) << later;
    EXPECT_TRUE(Contains(later, "mpi barrier #3")) << later;
    EXPECT_TRUE(Contains(later, "never reached it")) << later;
  }
  EXPECT_TRUE(spare->Barrier().ok());
}

TEST(MpiFault, AnAbandonedWaitEndsAtOnceNamingTheMissingRank) {
  // The trainer abandons waits when mpirun tears the job down (a rank died): well inside the
  // timeout, the waiting ranks fail naming the rank that never came.
  std::unique_ptr<Communicator> spare = MakeOrDie(milliseconds(60000));
  const auto start = std::chrono::steady_clock::now();
  MpiOptions options{milliseconds(60000)};
  options.abandon_reason = [start]() -> std::string {
    return std::chrono::steady_clock::now() - start > milliseconds(1500) ? "the test ends the job" : "";
  };
  auto made = MakeMpiCommunicator(options);
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<Communicator> world = *std::move(made);
  const int absent = world->world_size() - 1;
  ASSERT_GT(world->world_size(), 1);
  if (world->rank() != absent) {
    auto* buffer = new std::vector<float>(10, 1.0f);  // MPI may write it later: never freed
    const absl::Status status = world->AllReduce(buffer->data(), 10, DataType::kFloat32, ReduceOp::kSum);
    const auto waited = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
    EXPECT_TRUE(Contains(status, "abandoned: the test ends the job: rank " + std::to_string(absent) +
                                     " never reached it"))
        << status;
    EXPECT_LT(waited, milliseconds(30000));  // not the 60 s deadline
    EXPECT_EQ(world->Barrier().code(), absl::StatusCode::kFailedPrecondition);
  }
  // The absent rank never calls `world` again; the spare world ends the test in step.
  EXPECT_TRUE(spare->Barrier().ok());
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives
