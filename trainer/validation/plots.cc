#include "trainer/validation/plots.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/json_file.h"
#include "trainer/bench/subprocess.h"
#include "base/runfiles.h"
#include "trainer/validation/logged_process.h"

namespace gpt_sft::trainer::validation {
namespace {

constexpr int kExitNoMatplotlib = 3;  // plot_validation.py's
constexpr char kInstall[] =
    "install Debian's python3-matplotlib (it is in third_party/debian_packages.lock, so ./bazelw installs it)";

}  // namespace

std::string FindPlotScript(std::string& error) {
  absl::StatusOr<std::string> script = base::FindRunfile("trainer/validation/plot_validation.py");
  if (!script.ok()) {
    error = std::string(script.status().message());
    return "";
  }
  return *script;
}

PlotSet MakePlots(const std::string& python, const std::string& script, const std::string& report_json,
                  const std::string& out_dir) {
  PlotSet plots;
  if (access(python.c_str(), X_OK) != 0) {
    plots.error = absl::StrCat("python3 not found at ", python, " (--python); ", kInstall);
    return plots;
  }
  // matplotlib writes a font cache under MPLCONFIGDIR; keep it out of $HOME (tests have none).
  std::map<std::string, std::string> env = bench::CurrentEnvironment();
  const std::string config_dir = out_dir + "/.matplotlib";
  std::error_code ec;
  std::filesystem::create_directories(config_dir, ec);
  env["MPLCONFIGDIR"] = config_dir;
  env["MPLBACKEND"] = "Agg";
  absl::StatusOr<bench::ProcessResult> r =
      bench::RunProcess({python, script, "--report=" + report_json, "--out_dir=" + out_dir}, env);
  std::filesystem::remove_all(config_dir, ec);
  if (!r.ok()) {
    plots.error = std::string(r.status().message());
    return plots;
  }
  if (r->exit_code == kExitNoMatplotlib) {
    plots.error = absl::StrCat("matplotlib is missing for ", python, ": ", kInstall);
    return plots;
  }
  if (r->exit_code != 0) {
    plots.error = absl::StrCat(script, " failed (exit ", r->exit_code, ", signal ", r->term_signal,
                               "): ", LastLines(r->stderr_text, 10));
    return plots;
  }
  std::istringstream lines(r->stdout_text);
  for (std::string line; std::getline(lines, line);) {
    base::Json j = base::Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("file") || !j.contains("title")) continue;
    const std::string file = j["file"].get<std::string>();
    if (!std::filesystem::exists(out_dir + "/" + file, ec)) {
      plots.error = absl::StrCat(script, " named ", file, " but did not write it in ", out_dir);
      plots.files.clear();
      return plots;
    }
    plots.files.push_back({j["title"].get<std::string>(), file});
  }
  if (plots.files.empty()) {
    plots.error = absl::StrCat(script, " wrote no plot");
    return plots;
  }
  plots.made = true;
  return plots;
}

}  // namespace gpt_sft::trainer::validation
