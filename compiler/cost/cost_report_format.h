// Renders a CostReport (cost_report.h): as text, one row per launch and totals per entry point
// then the training step (gptc --emit=cost), or as one JSON object (gptc --emit=cost_json).
// Both state the constants and assumptions they were priced with, so a printed figure carries
// its own caveats.
#ifndef GPT_SFT_COMPILER_COST_COST_REPORT_FORMAT_H_
#define GPT_SFT_COMPILER_COST_COST_REPORT_FORMAT_H_

#include <string>
#include <vector>

#include "compiler/cost/cost_report.h"

namespace gpt_sft::compiler::cost {

/// Launches predicted faster than this are counted in the summary: their launch overhead,
/// which the model does not price, is likely to be their real cost.
inline constexpr double kShortLaunchSeconds = 2e-6;
/// How many launch classes the step's "where the time goes" table lists.
inline constexpr int kTopClasses = 10;

/// The assumptions behind the figures, one sentence each (both renderings print them).
std::vector<std::string> CostAssumptions(const CostReport& report);

std::string CostReportText(const CostReport& report);
std::string CostReportJson(const CostReport& report);

}  // namespace gpt_sft::compiler::cost

#endif  // GPT_SFT_COMPILER_COST_COST_REPORT_FORMAT_H_
