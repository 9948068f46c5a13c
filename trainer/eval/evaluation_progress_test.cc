#include "trainer/eval/evaluation_progress.h"

#include <sstream>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

TEST(EvaluationProgressLogTest, IntervalZeroPrintsEveryReportWithItsPhase) {
  std::ostringstream out;
  EvaluationProgressLog log(out, std::chrono::seconds(0));
  EvaluationProgress progress = log.AsCallback();
  progress("validation loss", 1, 2);
  progress("validation loss", 2, 2);
  progress("SpellingBee", 1, 1);
  const std::string text = out.str();
  EXPECT_NE(text.find("[eval] validation loss: 1/2 ("), std::string::npos) << text;
  EXPECT_NE(text.find("[eval] validation loss: 2/2 ("), std::string::npos) << text;
  EXPECT_NE(text.find("[eval] SpellingBee: 1/1 ("), std::string::npos) << text;
}

// A quick phase (done within the interval) prints nothing at all.
TEST(EvaluationProgressLogTest, AQuickPhaseIsSilent) {
  std::ostringstream out;
  EvaluationProgressLog log(out, std::chrono::hours(1));
  for (int i = 1; i <= 100; ++i) log.Report("validation loss", i, 100);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace gpt_sft::trainer
