// Tests only: a validation run made up in memory (four passing tests with plausible figures,
// their criteria and a full report), so the criteria, the JSON and the markdown can be tested
// without running the trainer. Each test case changes the one figure it is about.
#ifndef GPT_SFT_TRAINER_VALIDATION_SYNTHETIC_REPORT_H_
#define GPT_SFT_TRAINER_VALIDATION_SYNTHETIC_REPORT_H_

#include <vector>

#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// One test of `role`: `steps` records of shape [4, 512], `seconds` per step, losses falling
/// from 8 by `loss_slope` per step, a summary whose figures agree with the records.
TestRun SyntheticTest(TestRole role, int steps, double seconds, double loss_slope = 0.5);

/// Test 1 (eager, 0.3 s/step), Test 2 (compiled, 0.2 s/step, cold 0.5 s), Test 2b (one step,
/// warm 0.01 s), Test 3 (2 ranks), every figure computed (ComputeFigures, warm-up 5).
std::vector<TestRun> SyntheticTests();

/// A measured PyTorch eager baseline: torch 2.15.0, [4, 512], 0.45 s/step (2.25x Test 2's 0.2).
TorchEagerBaseline SyntheticTorchEager();

/// SyntheticTests with environment, config, criteria, plots and verdict filled in.
ValidationReport SyntheticReport();

/// Recomputes test.figures from test.steps and test.summary (after a test case changed them).
void Refigure(TestRun& test);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_SYNTHETIC_REPORT_H_
