#include "trainer/loop/rank_reductions.h"

#include "trainer/launch/stop_signal.h"

namespace gpt_sft::trainer {

absl::Status SumOverRanks(runtime::collectives::Communicator& world, std::vector<double>& values) {
  return world.AllReduce(values.data(), int64_t(values.size()), runtime::collectives::DataType::kFloat64,
                         runtime::collectives::ReduceOp::kSum);
}

absl::StatusOr<double> ReduceOverRanks(runtime::collectives::Communicator& world, double value,
                                       runtime::collectives::ReduceOp op) {
  if (absl::Status s = world.AllReduce(&value, 1, runtime::collectives::DataType::kFloat64, op); !s.ok()) return s;
  return value;
}

absl::StatusOr<int> StopSignalOnAnyRank(runtime::collectives::Communicator& world) {
  if (world.world_size() == 1) return StopSignalReceived();
  absl::StatusOr<double> any = ReduceOverRanks(world, StopSignalReceived(), runtime::collectives::ReduceOp::kMax);
  if (!any.ok()) return any.status();
  return int(*any);
}

}  // namespace gpt_sft::trainer
