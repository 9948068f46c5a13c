#include "runtime/collectives/mpi_communicator.h"

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::runtime::collectives {
namespace {

using Clock = std::chrono::steady_clock;

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return absl::StrCat("MPI error ", code);
  return std::string(text, static_cast<size_t>(length));
}

void FinalizeMpiAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Initialises MPI once per process (see the header: thread level and finalisation).
absl::Status EnsureMpiInitialised() {
  static std::once_flag once;
  static absl::Status status;
  std::call_once(once, [] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
      status = absl::FailedPreconditionError("MPI was already finalised in this process");
      return;
    }
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) return;  // the program owns MPI's lifetime
    int provided = MPI_THREAD_SINGLE;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
      status = absl::UnavailableError(absl::StrCat("MPI_Init_thread failed: ", MpiErrorString(rc)));
      return;
    }
    std::atexit(FinalizeMpiAtExit);
  });
  return status;
}

// --- bf16: MPI has no bfloat16, so a user-defined op reduces raw 16-bit words. ----------

float Bf16ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

uint16_t FloatToBf16(float value) {  // round to nearest even; NaN stays a quiet NaN
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  if ((word & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((word >> 16) | 0x40u);
  word += 0x7fffu + ((word >> 16) & 1u);
  return static_cast<uint16_t>(word >> 16);
}

template <typename Combine>
void ReduceBf16(void* in, void* inout, int* length, Combine combine) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = FloatToBf16(combine(Bf16ToFloat(a[i]), Bf16ToFloat(b[i])));
}

void SumBf16(void* in, void* inout, int* length, MPI_Datatype*) {
  ReduceBf16(in, inout, length, [](float a, float b) { return a + b; });
}
void MaxBf16(void* in, void* inout, int* length, MPI_Datatype*) {
  ReduceBf16(in, inout, length, [](float a, float b) { return a > b ? a : b; });
}
void MinBf16(void* in, void* inout, int* length, MPI_Datatype*) {
  ReduceBf16(in, inout, length, [](float a, float b) { return a < b ? a : b; });
}

struct Bf16Ops {
  MPI_Op sum, max, min;
};

const Bf16Ops& GetBf16Ops() {  // after MPI_Init; never freed (they live until MPI_Finalize)
  static const Bf16Ops ops = [] {
    Bf16Ops made;
    MPI_Op_create(&SumBf16, /*commute=*/1, &made.sum);
    MPI_Op_create(&MaxBf16, /*commute=*/1, &made.max);
    MPI_Op_create(&MinBf16, /*commute=*/1, &made.min);
    return made;
  }();
  return ops;
}

MPI_Datatype ToMpiType(DataType type) {
  switch (type) {
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kBFloat16: return MPI_UINT16_T;  // reduced by the Bf16Ops
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUint64: return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op ToMpiOp(ReduceOp op, DataType type) {
  if (type == DataType::kBFloat16) {
    const Bf16Ops& ops = GetBf16Ops();
    return op == ReduceOp::kMax ? ops.max : op == ReduceOp::kMin ? ops.min : ops.sum;
  }
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return MPI_SUM;  // kAvg: MPI has no average; sum, then divide
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  return MPI_OP_NULL;
}

template <typename T>
void DivideEach(void* buffer, int64_t count, int divisor) {
  T* values = static_cast<T*>(buffer);
  for (int64_t i = 0; i < count; ++i) values[i] = static_cast<T>(values[i] / static_cast<T>(divisor));
}

// kAvg's second half, in the element type (integers truncate toward zero).
void DivideBy(void* buffer, int64_t count, DataType type, int divisor) {
  switch (type) {
    case DataType::kFloat32: return DivideEach<float>(buffer, count, divisor);
    case DataType::kFloat64: return DivideEach<double>(buffer, count, divisor);
    case DataType::kInt32: return DivideEach<int32_t>(buffer, count, divisor);
    case DataType::kInt64: return DivideEach<int64_t>(buffer, count, divisor);
    case DataType::kUint64: return DivideEach<uint64_t>(buffer, count, divisor);
    case DataType::kBFloat16: {
      auto* words = static_cast<uint16_t*>(buffer);
      for (int64_t i = 0; i < count; ++i) words[i] = FloatToBf16(Bf16ToFloat(words[i]) / divisor);
      return;
    }
  }
}

// What a call is, for its error messages: "all_reduce #12 (count 7, f32, sum)".
struct CallInfo {
  const char* name = "";
  int64_t count = 0;
  DataType type = DataType::kFloat32;
  std::string detail;  // "sum", "root 1", ...
};

// Who reached call #n. Why this side channel: a nonblocking collective that never completes
// says nothing about which rank is missing, and an MPI_Ibarrier would only say "not everyone".
// So each rank sends its 8-byte sequence number to every other rank with a nonblocking send
// before posting the collective, and posts a receive from every other rank. On a timeout the
// receives still pending name the ranks that never reached the call, on every surviving rank
// (also when rank 0 is the one missing, which a report-to-rank-0 scheme could not tell).
// Cost: 2(p-1) tiny eager messages per call, negligible next to the gradients for the few CPU
// ranks MPI serves here. Point-to-point traffic never matches a collective's (MPI standard),
// so the messages share the communicator.
struct Arrivals {
  explicit Arrivals(int world_size) : received(static_cast<size_t>(world_size), -1) {}
  int64_t sent = 0;
  std::vector<int64_t> received;       // [peer] = the sequence number peer announced
  std::vector<int> receive_peer;       // request index -> peer
  std::vector<MPI_Request> requests;   // receives, then sends, then the collective (last)
};

constexpr int kArrivalTag = 0x6770;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, MpiOptions options) : comm_(comm), options_(options) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A poisoned communicator may have requests that never end; leave it to the job's end.
    if (!finalized && poisoned_.ok()) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string_view backend() const override { return "mpi"; }
  MemorySpace memory_space() const override { return MemorySpace::kHost; }

  absl::Status AllReduce(void* buffer, int64_t count, DataType type, ReduceOp op) override {
    const CallInfo call{"all_reduce", count, type, std::string(ReduceOpName(op))};
    absl::Status status = Run(call, [&](MPI_Request* request) {
      return MPI_Iallreduce(MPI_IN_PLACE, buffer, static_cast<int>(count), ToMpiType(type), ToMpiOp(op, type),
                            comm_, request);
    });
    if (status.ok() && op == ReduceOp::kAvg) DivideBy(buffer, count, type, world_size_);
    return status;
  }

  absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, DataType type,
                             ReduceOp op) override {
    const CallInfo call{"reduce_scatter", recv_count, type, std::string(ReduceOpName(op))};
    if (static_cast<int64_t>(world_size_) * recv_count > INT_MAX) return TooLarge(call);
    absl::Status status = Run(call, [&](MPI_Request* request) {
      return MPI_Ireduce_scatter_block(send, recv, static_cast<int>(recv_count), ToMpiType(type),
                                       ToMpiOp(op, type), comm_, request);
    });
    if (status.ok() && op == ReduceOp::kAvg) DivideBy(recv, recv_count, type, world_size_);
    return status;
  }

  absl::Status AllGather(const void* send, void* recv, int64_t send_count, DataType type) override {
    const CallInfo call{"all_gather", send_count, type, ""};
    if (static_cast<int64_t>(world_size_) * send_count > INT_MAX) return TooLarge(call);
    return Run(call, [&](MPI_Request* request) {
      const MPI_Datatype mpi_type = ToMpiType(type);
      return MPI_Iallgather(send, static_cast<int>(send_count), mpi_type, recv, static_cast<int>(send_count),
                            mpi_type, comm_, request);
    });
  }

  absl::Status Broadcast(void* buffer, int64_t count, DataType type, int root) override {
    const CallInfo call{"broadcast", count, type, absl::StrCat("root ", root)};
    if (root < 0 || root >= world_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("mpi broadcast: root ", root, " is not a rank of a world of ", world_size_));
    }
    return Run(call, [&](MPI_Request* request) {
      return MPI_Ibcast(buffer, static_cast<int>(count), ToMpiType(type), root, comm_, request);
    });
  }

  absl::Status Barrier() override {
    return Run(CallInfo{"barrier", 0, DataType::kInt32, ""},
               [&](MPI_Request* request) { return MPI_Ibarrier(comm_, request); });
  }

 private:
  std::string Describe(const CallInfo& call, int64_t sequence) const {
    std::string text = absl::StrCat("mpi ", call.name, " #", sequence);
    if (std::string_view(call.name) != "barrier") {
      absl::StrAppend(&text, " (count ", call.count, ", ", std::string(DataTypeName(call.type)));
      if (!call.detail.empty()) absl::StrAppend(&text, ", ", call.detail);
      absl::StrAppend(&text, ")");
    }
    absl::StrAppend(&text, " on rank ", rank_, " of ", world_size_);
    return text;
  }

  absl::Status TooLarge(const CallInfo& call) const {
    return absl::InvalidArgumentError(absl::StrCat(Describe(call, sequence_ + 1), ": more than ", INT_MAX,
                                                   " elements in one MPI call; split the buffer"));
  }

  absl::Status MpiFailure(const CallInfo& call, int64_t sequence, const char* what, int code) {
    poisoned_ = absl::InternalError(absl::StrCat(Describe(call, sequence), ": ", what, ": ", MpiErrorString(code)));
    return poisoned_;
  }

  // Posts the arrival messages and the collective (`post`), then polls until all complete or
  // the deadline passes. Every call of every backend method goes through here.
  template <typename Post>
  absl::Status Run(const CallInfo& call, Post post) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!poisoned_.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(Describe(call, sequence_ + 1),
                                                        ": the communicator failed earlier: ", poisoned_.message()));
    }
    if (call.count < 0 || call.count > INT_MAX) return TooLarge(call);
    const int64_t sequence = ++sequence_;

    auto arrivals = std::make_unique<Arrivals>(world_size_);
    arrivals->sent = sequence;
    arrivals->requests.reserve(static_cast<size_t>(2 * world_size_));
    for (int peer = 0; peer < world_size_; ++peer) {
      if (peer == rank_) continue;
      arrivals->requests.emplace_back();
      arrivals->receive_peer.push_back(peer);
      const int rc = MPI_Irecv(&arrivals->received[static_cast<size_t>(peer)], 1, MPI_INT64_T, peer, kArrivalTag,
                               comm_, &arrivals->requests.back());
      if (rc != MPI_SUCCESS) return MpiFailure(call, sequence, "MPI_Irecv", rc);
    }
    for (int peer = 0; peer < world_size_; ++peer) {
      if (peer == rank_) continue;
      arrivals->requests.emplace_back();
      const int rc = MPI_Isend(&arrivals->sent, 1, MPI_INT64_T, peer, kArrivalTag, comm_, &arrivals->requests.back());
      if (rc != MPI_SUCCESS) return MpiFailure(call, sequence, "MPI_Isend", rc);
    }
    arrivals->requests.emplace_back();
    const int rc = post(&arrivals->requests.back());
    if (rc != MPI_SUCCESS) return MpiFailure(call, sequence, "posting the collective", rc);

    absl::Status status = WaitAll(call, sequence, *arrivals);
    // A call that did not complete leaves requests MPI may still write through (our receive
    // buffers): those stay allocated until the process ends.
    if (!status.ok()) arrivals.release();
    return status;
  }

  absl::Status WaitAll(const CallInfo& call, int64_t sequence, Arrivals& arrivals) {
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    std::vector<MPI_Status> statuses(arrivals.requests.size());
    for (int polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Testall(static_cast<int>(arrivals.requests.size()), arrivals.requests.data(), &done,
                                 statuses.data());
      if (rc != MPI_SUCCESS) return MpiFailure(call, sequence, "MPI_Testall", FirstError(rc, statuses));
      if (done) break;
      if (Clock::now() >= deadline) {
        return Unfinished(call, sequence, arrivals,
                          absl::DeadlineExceededError(absl::StrCat("timed out after ", options_.timeout.count(), " ms")));
      }
      if (options_.abandon_reason) {
        if (std::string why = options_.abandon_reason(); !why.empty()) {
          return Unfinished(call, sequence, arrivals, absl::AbortedError(absl::StrCat("abandoned: ", why)));
        }
      }
      // Spin (yielding the core to other ranks) for small messages' latency, then sleep so a
      // long wait does not burn a core.
      if (polls < 2000) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    for (int peer = 0; peer < world_size_; ++peer) {
      const int64_t announced = arrivals.received[static_cast<size_t>(peer)];
      if (peer != rank_ && announced != sequence) {
        poisoned_ = absl::InternalError(absl::StrCat(Describe(call, sequence), ": rank ", peer, " was at call #",
                                                     announced, " (ranks called collectives in different orders)"));
        return poisoned_;
      }
    }
    return absl::OkStatus();
  }

  static int FirstError(int rc, const std::vector<MPI_Status>& statuses) {
    if (rc != MPI_ERR_IN_STATUS) return rc;
    for (const MPI_Status& s : statuses) {
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) return s.MPI_ERROR;
    }
    return rc;
  }

  // The call stopped waiting (`why`: its code and first words): which ranks never reached it.
  absl::Status Unfinished(const CallInfo& call, int64_t sequence, Arrivals& arrivals, const absl::Status& why) {
    std::vector<int> missing;
    for (size_t i = 0; i < arrivals.receive_peer.size(); ++i) {
      int arrived = 0;
      MPI_Test(&arrivals.requests[i], &arrived, MPI_STATUS_IGNORE);
      if (!arrived) missing.push_back(arrivals.receive_peer[i]);
    }
    std::string text = absl::StrCat(Describe(call, sequence), ": ", why.message(), ": ");
    if (missing.empty()) {
      absl::StrAppend(&text, "every rank reached it but it did not complete (ranks passed different counts or "
                             "types, or a link failed)");
    } else {
      absl::StrAppend(&text, missing.size() == 1 ? "rank " : "ranks ", absl::StrJoin(missing, ", "),
                      missing.size() == 1 ? " never reached it" : " never reached it (dead or hung)");
    }
    poisoned_ = absl::Status(why.code(), text);
    return poisoned_;
  }

  MPI_Comm comm_;
  const MpiOptions options_;
  int rank_ = 0;
  int world_size_ = 1;
  std::mutex mu_;
  int64_t sequence_ = 0;     // calls made so far (guarded by mu_)
  absl::Status poisoned_;    // the first failure; OK while usable (guarded by mu_)
};

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(MpiOptions options) {
  if (absl::Status status = EnsureMpiInitialised(); !status.ok()) return status;
  // MPI_Comm_idup, not MPI_Comm_dup: creating the communicator is collective too, and a rank
  // that never calls MakeMpiCommunicator must not hang the others past the timeout.
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
  const Clock::time_point deadline = Clock::now() + options.timeout;
  for (int done = 0; rc == MPI_SUCCESS;) {
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("MakeMpiCommunicator: not every rank of MPI_COMM_WORLD ",
                                                      "joined within ", options.timeout.count(), " ms"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (rc != MPI_SUCCESS) {
    return absl::InternalError(absl::StrCat("MakeMpiCommunicator: MPI_Comm_idup: ", MpiErrorString(rc)));
  }
  rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc != MPI_SUCCESS) {
    return absl::InternalError(absl::StrCat("MakeMpiCommunicator: MPI_Comm_set_errhandler: ", MpiErrorString(rc)));
  }
  return std::unique_ptr<Communicator>(new MpiCommunicator(comm, options));
}

bool LaunchedByMpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

void AbortMpiWorld(int exit_code) {
  int initialised = 0;
  int finalized = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalized);
  if (initialised && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace gpt_sft::runtime::collectives
