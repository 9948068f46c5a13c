// The figures the report gives for one test, computed from its per-step records and its run
// summary: time/step and tokens/sec as median and spread over the steps after the warm-up
// (the first five by default, as the trainer's own [VALIDATION] lines), the batch shapes seen,
// the losses, the compile figures, the recompilation counts and the peak memory.
#ifndef GPT_SFT_TRAINER_VALIDATION_TEST_FIGURES_H_
#define GPT_SFT_TRAINER_VALIDATION_TEST_FIGURES_H_

#include <optional>
#include <vector>

#include "trainer/validation/trainer_outputs.h"
#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// Steps numbered below `warmup_steps` count for the shapes and losses but not for the
/// timings. A figure with no source (no summary, no step past the warm-up) stays nullopt.
/// Where the summary and the records both have a figure, the summary's wins (it is over every
/// rank), except the peak memory, which is the larger of the two.
TestFigures ComputeFigures(const std::vector<StepMetrics>& steps, const std::optional<RunSummary>& summary,
                           int warmup_steps);

/// The per-step mean loss when the records carry it, else the logged (last micro-batch) loss.
double StepLoss(const StepMetrics& m);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_TEST_FIGURES_H_
