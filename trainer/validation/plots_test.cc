#include "trainer/validation/plots.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "trainer/validation/report_json.h"
#include "trainer/validation/synthetic_report.h"

namespace gpt_sft::trainer::validation {
namespace {

std::string WriteReport(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/validation_report.json";
  std::ofstream(path) << ReportToJson(SyntheticReport()).dump(2);
  return path;
}

TEST(MakePlots, DrawsThreePngs) {
  std::string error;
  const std::string script = FindPlotScript(error);
  ASSERT_FALSE(script.empty()) << error;
  const std::string dir = ::testing::TempDir() + "/plots";
  PlotSet plots = MakePlots("/usr/bin/python3", script, WriteReport(dir), dir);
  ASSERT_TRUE(plots.made) << plots.error;
  ASSERT_EQ(plots.files.size(), 3u);
  EXPECT_EQ(plots.files[0], (std::pair<std::string, std::string>{"Training loss per step", "loss.png"}));
  for (const auto& [title, file] : plots.files) {
    std::ifstream png(dir + "/" + file, std::ios::binary);
    char magic[8] = {};
    png.read(magic, 8);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << file;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/.matplotlib"));
}

TEST(MakePlots, MissingPythonSaysWhatToInstall) {
  std::string error;
  const std::string script = FindPlotScript(error);
  const std::string dir = ::testing::TempDir() + "/noplots";
  PlotSet plots = MakePlots("/nonexistent/python3", script, WriteReport(dir), dir);
  EXPECT_FALSE(plots.made);
  EXPECT_TRUE(plots.files.empty());
  EXPECT_NE(plots.error.find("python3 not found at /nonexistent/python3"), std::string::npos) << plots.error;
  EXPECT_NE(plots.error.find("python3-matplotlib"), std::string::npos) << plots.error;
}

TEST(MakePlots, MissingMatplotlibSaysWhatToInstall) {
  // A python3 without matplotlib: a wrapper runs the real script with Debian's dist-packages
  // (where python3-matplotlib lives) taken off sys.path.
  std::string error;
  const std::string script = FindPlotScript(error);
  const std::string dir = ::testing::TempDir() + "/nompl";
  const std::string python = dir + "/python3-without-matplotlib";
  std::filesystem::create_directories(dir);
  std::ofstream(python) << "#!/bin/sh\nexec /usr/bin/python3 -S -c 'import sys; sys.path = [p for p in sys.path "
                           "if \"dist-packages\" not in p]; sys.argv = sys.argv[1:]; exec(open(sys.argv[0]).read())' "
                           "\"$@\"\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  PlotSet plots = MakePlots(python, script, WriteReport(dir), dir);
  EXPECT_FALSE(plots.made);
  EXPECT_NE(plots.error.find("matplotlib is missing"), std::string::npos) << plots.error;
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
