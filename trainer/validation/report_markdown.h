// VALIDATION_REPORT.md: the ValidationReport as a document a person reads top to bottom:
// the verdict, the success criteria as a checklist (ticked or crossed, each with its measured
// figure and its rule), the environment and configuration, one table of every test's figures,
// the plots, each test's command line, output and (when it failed) its error, and the
// definitions behind the figures. Missing figures read "not measured".
#ifndef GPT_SFT_TRAINER_VALIDATION_REPORT_MARKDOWN_H_
#define GPT_SFT_TRAINER_VALIDATION_REPORT_MARKDOWN_H_

#include <string>
#include <vector>

#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

std::string RenderMarkdown(const ValidationReport& report);

/// argv as one shell line, each word quoted only when it needs it ('...' with ' escaped).
std::string ShellLine(const std::vector<std::string>& argv);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_REPORT_MARKDOWN_H_
