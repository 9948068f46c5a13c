// SftValidation: the validation loss every world size computes over the same rows, and the
// check that the checkpoint a run saved reloads as trained (bit for bit, the same loss).
#ifndef GPT_SFT_TRAINER_LOOP_SFT_VALIDATION_H_
#define GPT_SFT_TRAINER_LOOP_SFT_VALIDATION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "data/collate/loader.h"
#include "runtime/collectives/communicator.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/params/param_store.h"
#include "trainer/eager_step.h"
#include "trainer/eval/evaluation_progress.h"
#include "trainer/report/run_summary.h"

namespace gpt_sft::trainer {

/// The validation loss over every rank's shard of the validation batches (their mean).
absl::StatusOr<double> GlobalValidationLoss(EagerStep& step, const data::ConversationSource& val,
                                            const data::LoaderOptions& options, int eval_steps,
                                            runtime::collectives::Communicator& world,
                                            const EvaluationProgress& progress = nullptr);

/// After rank 0 saved: every rank reloads the checkpoint from disk, compares it bit for bit
/// with its trained weights, and evaluates the reloaded weights on the same validation
/// batches.
absl::StatusOr<CheckpointSummary> VerifySavedCheckpoint(const std::string& dir, int64_t step,
                                                        const runtime::ParamStore& trained,
                                                        const compiler::StepConfig& config,
                                                        const runtime::InterpreterOptions& interpreter,
                                                        const data::ConversationSource& val,
                                                        const data::LoaderOptions& loader, int eval_steps,
                                                        double val_loss_saved,
                                                        runtime::collectives::Communicator& world);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_LOOP_SFT_VALIDATION_H_
