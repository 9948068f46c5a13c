// RunValidation: one `//trainer:validate` invocation from its options to its exit status.
//
//   1. Resolve the trainer binary (a runfile of validate), the base dir and the run dir
//      (<base_dir>/validation/<timestamp> unless --run_dir, which must be new or empty);
//      with --demo, set the demo model up once, so no two trainers ever create it at once.
//   2. Run the tests one after another, each into its own folder with a fresh compile cache
//      shared by the compiled ones: Test 1 eager, Test 2 compiled (cold), Test 2b warm start,
//      Test 3 on N ranks. A test that fails does not stop the others.
//   3. Read each test's metrics.jsonl and run_summary.json, compute its figures, judge it;
//      measure the PyTorch eager baseline at Test 2's config (--torch_eager; optional),
//      evaluate the criteria and charge failed checks to their tests.
//   4. Write validation_report.json, draw the plots from it, then write the final
//      validation_report.json and VALIDATION_REPORT.md (each atomically).
// Returns the exit status (criteria.h ExitCode); errors only when no report can be written.
#ifndef GPT_SFT_TRAINER_VALIDATION_VALIDATION_RUN_H_
#define GPT_SFT_TRAINER_VALIDATION_VALIDATION_RUN_H_

#include <ostream>

#include "absl/status/statusor.h"
#include "trainer/validation/validate_flags.h"

namespace gpt_sft::trainer::validation {

inline constexpr char kReportMarkdown[] = "VALIDATION_REPORT.md";
inline constexpr char kReportJson[] = "validation_report.json";

absl::StatusOr<int> RunValidation(const ValidateOptions& options, std::ostream& console);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_VALIDATION_RUN_H_
