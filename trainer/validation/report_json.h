// validation_report.json: the ValidationReport as JSON, with every figure the markdown shows
// (and the per-step records the plots are drawn from). ReportFromJson(ReportToJson(r)) == r,
// so a report can be read back, compared or re-rendered. Missing figures are null.
#ifndef GPT_SFT_TRAINER_VALIDATION_REPORT_JSON_H_
#define GPT_SFT_TRAINER_VALIDATION_REPORT_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/json_file.h"
#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

inline constexpr char kReportSchema[] = "gpt-sft validation report 1";

base::Json ReportToJson(const ValidationReport& report);

/// DataLoss naming `where` and the field when a field is missing or of the wrong type, or the
/// schema is another one.
absl::StatusOr<ValidationReport> ReportFromJson(const base::Json& j, const std::string& where);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_REPORT_JSON_H_
