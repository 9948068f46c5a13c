// The report's plots: trainer/validation/plot_validation.py (a data dependency, found through
// the runfiles) run with Debian's python3 and matplotlib over validation_report.json. A
// missing python3, a missing matplotlib or a failing script is not fatal: the report is still
// written, without plots, and says why.
#ifndef GPT_SFT_TRAINER_VALIDATION_PLOTS_H_
#define GPT_SFT_TRAINER_VALIDATION_PLOTS_H_

#include <string>

#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// The script in the runfiles ("" with `error` set when it is not there).
std::string FindPlotScript(std::string& error);

/// Runs `script` with `python` over `report_json`, writing PNGs into `out_dir`. PlotSet.made
/// only when every PNG the script names exists; otherwise `error` says what to install or
/// what failed (with the end of the script's stderr).
PlotSet MakePlots(const std::string& python, const std::string& script, const std::string& report_json,
                  const std::string& out_dir);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_PLOTS_H_
