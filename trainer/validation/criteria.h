// The report's judgements. Per test: did it run to the end as the test it was meant to be
// (exit status, signal, run summary, records, mode, ranks). Across tests: the success
// criteria as a checklist, each decided from measured figures only; a criterion whose
// figures are missing is kNotMeasured (crossed), never passed.
//
// The criteria, in report order (T: a performance target, C: a correctness check):
//   tests_completed  C  every test exited 0 and wrote its run summary
//   static_shapes    C  every micro-batch of every test had the one shape [B, T]
//   no_recompilation C  compiled tests: 0 recompilations in training and in evaluation
//   speedup          T  our eager (the interpreter, Test 1) median time/step / compiled >= min_speedup
//   speedup_vs_torch_eager  T (optional)  PyTorch eager running nanochat's model, same config,
//                       median time/step / compiled >= min_speedup; not measured where no torch
//                       can run, which is stated and does not fail the exit status
//   compile_time     T  the cold compile (Test 2, fresh cache) <= max_compile_seconds
//   warm_start       C  Test 2b loaded Test 2's artifact from the cache (hit, same key)
//   memory           T  compiled peak RSS <= max_memory_ratio x eager peak RSS
//   final_loss       C  compiled loss at the last step within max_final_loss_rel_diff of eager
//   checkpoint       C  every test's checkpoint saved, reloaded bit-exactly, same val loss
//   ranks_match      C  N ranks vs one rank: per-step mean loss and final val loss within tolerance
#ifndef GPT_SFT_TRAINER_VALIDATION_CRITERIA_H_
#define GPT_SFT_TRAINER_VALIDATION_CRITERIA_H_

#include <string>
#include <vector>

#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// Appends to `test.failures` what is wrong with the run itself: not started, killed by a
/// signal, a non-zero exit, no run summary, no metrics records, a mode or rank count other
/// than its role's (`expected_world_size`).
void JudgeTest(TestRun& test, int expected_world_size);

/// The checklist over `tests` (looked up by role; a missing test leaves its criteria not
/// measured).
/// `torch_eager`: the PyTorch eager baseline (unmeasured by default: its criterion is then
/// not measured).
std::vector<Criterion> EvaluateCriteria(const std::vector<TestRun>& tests, const Thresholds& thresholds,
                                        const TorchEagerBaseline& torch_eager = {});

/// A correctness criterion that failed is a failure of the tests it names.
void ChargeFailures(const std::vector<Criterion>& criteria, std::vector<TestRun>& tests);

/// 0 when every test passed and every correctness criterion passed and no criterion went
/// unmeasured (optional ones may); a missed target fails only with `strict_targets`. 1 otherwise.
int ExitCode(const std::vector<TestRun>& tests, const std::vector<Criterion>& criteria, bool strict_targets);

/// One line for the top of the report and the console: PASSED/FAILED and what decided it.
std::string Verdict(const std::vector<TestRun>& tests, const std::vector<Criterion>& criteria, bool strict_targets);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_CRITERIA_H_
