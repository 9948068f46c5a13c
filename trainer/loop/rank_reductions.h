// RankReductions: what every rank of a run agrees on through one small all-reduce: sums of the
// step's figures, a value reduced over the ranks, and the stop signal any rank received (so
// that every rank stops after the same step).
#ifndef GPT_SFT_TRAINER_LOOP_RANK_REDUCTIONS_H_
#define GPT_SFT_TRAINER_LOOP_RANK_REDUCTIONS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"

namespace gpt_sft::trainer {

/// Sums `values` over every rank, in place (f64: token counts stay exact).
absl::Status SumOverRanks(runtime::collectives::Communicator& world, std::vector<double>& values);

/// `value` reduced over every rank with `op`.
absl::StatusOr<double> ReduceOverRanks(runtime::collectives::Communicator& world, double value,
                                       runtime::collectives::ReduceOp op);

/// The stop signal this rank or any other received (0: none), so that every rank stops after
/// the same step.
absl::StatusOr<int> StopSignalOnAnyRank(runtime::collectives::Communicator& world);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_RANK_REDUCTIONS_H_
