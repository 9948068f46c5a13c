#include "runtime/collectives/communicator.h"

#include <cstring>

namespace gpt_sft::runtime::collectives {

int64_t SizeOf(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kFloat64: return 8;
    case DataType::kBFloat16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kUint64: return 8;
  }
  return 0;
}

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32: return "f32";
    case DataType::kFloat64: return "f64";
    case DataType::kBFloat16: return "bf16";
    case DataType::kInt32: return "i32";
    case DataType::kInt64: return "i64";
    case DataType::kUint64: return "u64";
  }
  return "?";
}

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAvg: return "avg";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

namespace {

class SingleRankCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string_view backend() const override { return "single"; }
  MemorySpace memory_space() const override { return MemorySpace::kHost; }

  absl::Status AllReduce(void*, int64_t, DataType, ReduceOp) override { return absl::OkStatus(); }
  absl::Status ReduceScatter(const void* send, void* recv, int64_t recv_count, DataType type, ReduceOp) override {
    Copy(send, recv, recv_count, type);
    return absl::OkStatus();
  }
  absl::Status AllGather(const void* send, void* recv, int64_t send_count, DataType type) override {
    Copy(send, recv, send_count, type);
    return absl::OkStatus();
  }
  absl::Status Broadcast(void*, int64_t, DataType, int root) override {
    if (root != 0) return absl::InvalidArgumentError("broadcast root must be 0 in a world of one rank");
    return absl::OkStatus();
  }
  absl::Status Barrier() override { return absl::OkStatus(); }

 private:
  static void Copy(const void* from, void* to, int64_t count, DataType type) {
    if (from != to) std::memmove(to, from, static_cast<size_t>(count * SizeOf(type)));
  }
};

}  // namespace

std::unique_ptr<Communicator> MakeSingleRankCommunicator() { return std::make_unique<SingleRankCommunicator>(); }

}  // namespace gpt_sft::runtime::collectives
