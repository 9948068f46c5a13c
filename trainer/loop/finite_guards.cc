#include "trainer/loop/finite_guards.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/non_finite_scan.h"
#include "trainer/loop/rank_reductions.h"

namespace gpt_sft::trainer {

std::string LastGoodState(const std::string& out_dir) {
  absl::StatusOr<int64_t> last = runtime::FindLastStep(out_dir);
  if (!last.ok()) {
    return absl::StrCat("No step of this run was saved in ", out_dir,
                        ": lower the learning rates (--matrix_lr, --embedding_lr, --unembedding_lr) and start again");
  }
  return absl::StrCat("The newest saved step, ", out_dir, "/", runtime::StepDirName(*last),
                      ", is the run's last good state: lower the learning rates (--matrix_lr, --embedding_lr, "
                      "--unembedding_lr) and --resume from it");
}

absl::Status CheckAllFinite(const runtime::ParamStore& params, const OptimizerState& optimizer, int64_t step,
                            const std::string& out_dir) {
  const auto bad = [&](const std::string& what, const float* data, int64_t n) -> absl::Status {
    const int64_t i = FirstNonFiniteIndex(data, n);
    if (i < 0) return absl::OkStatus();
    return absl::DataLossError(absl::StrFormat(
        "step %d: %s holds a non-finite value (element %d is %g) after the update; the step is not saved. %s", step,
        what, i, data[i], LastGoodState(out_dir)));
  };
  for (const runtime::Param& p : params.params()) {
    if (absl::Status s = bad("parameter " + p.name, p.data(), p.numel()); !s.ok()) return s;
  }
  for (const auto& [name, t] : optimizer.tensors) {
    if (absl::Status s = bad("optimizer state " + name, static_cast<const float*>(t.raw_data()), t.numel()); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGradientsFinite(TrainStep& training, runtime::collectives::Communicator& world, int64_t step,
                                  const std::string& out_dir) {
  absl::StatusOr<std::optional<NonFiniteValue>> bad = training.FirstNonFiniteGradient();
  if (!bad.ok()) return bad.status();
  absl::StatusOr<double> any =
      ReduceOverRanks(world, bad->has_value() ? 1.0 : 0.0, runtime::collectives::ReduceOp::kMax);
  if (!any.ok()) return any.status();
  if (*any == 0) return absl::OkStatus();
  const std::string where =
      bad->has_value() ? absl::StrFormat("the gradient of %s, element %d, is %g%s", (*bad)->tensor, (*bad)->element,
                                         (*bad)->value,
                                         world.world_size() > 1 ? absl::StrCat(" on rank ", world.rank()) : "")
                       : std::string("another rank's gradient is");
  return absl::DataLossError(absl::StrFormat(
      "step %d: a gradient is not finite (%s) though the loss is; the step's update was not applied and nothing of "
      "it saved. %s",
      step, where, LastGoodState(out_dir)));
}

}  // namespace gpt_sft::trainer
