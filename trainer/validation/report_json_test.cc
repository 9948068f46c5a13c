#include "trainer/validation/report_json.h"

#include "gtest/gtest.h"
#include "trainer/validation/synthetic_report.h"

namespace gpt_sft::trainer::validation {
namespace {

using base::Json;

TEST(ReportJson, RoundTripsThroughText) {
  const ValidationReport report = SyntheticReport();
  const std::string text = ReportToJson(report).dump(2);
  absl::StatusOr<ValidationReport> back = ReportFromJson(Json::parse(text), "report.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == report);
  EXPECT_EQ(ReportToJson(*back).dump(2), text);
}

TEST(ReportJson, RoundTripsAFailedRun) {
  ValidationReport report = SyntheticReport();
  TestRun& crashed = report.tests[1];
  crashed.exit_code = 1;
  crashed.summary.reset();
  crashed.failures = {"exited with status 1"};
  crashed.error_tail = "trainer: error: --max_seq_len=9: too short\n";
  crashed.figures.compile_seconds.reset();
  report.criteria[4].status = CriterionStatus::kNotMeasured;
  report.criteria[4].value.reset();
  report.plots = PlotSet{false, {}, "/usr/bin/python3: No module named 'matplotlib'"};
  report.config.model_config = nullptr;
  absl::StatusOr<ValidationReport> back = ReportFromJson(Json::parse(ReportToJson(report).dump()), "r");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == report);
}

TEST(ReportJson, CarriesStatusAndMissingFiguresAsNull) {
  ValidationReport report = SyntheticReport();
  report.tests[0].figures.seconds_per_step.reset();
  report.tests[1].failures = {"criterion no_recompilation: test2: 1 training, 0 evaluation"};
  const Json j = ReportToJson(report);
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_TRUE(j["tests"][0]["figures"]["seconds_per_step"].is_null());
  EXPECT_EQ(j["tests"][1]["status"], "failed");
  EXPECT_EQ(j["tests"][0]["status"], "passed");
  EXPECT_EQ(j["criteria"][3]["id"], "speedup");
  EXPECT_EQ(j["criteria"][3]["status"], "pass");
}

TEST(ReportJson, CarriesTheTorchEagerBaseline) {
  const Json j = ReportToJson(SyntheticReport());
  EXPECT_EQ(j["torch_eager"]["measured"], true);
  EXPECT_EQ(j["torch_eager"]["seconds_per_step"], 0.45);
  EXPECT_EQ(j["torch_eager"]["torch_version"], "2.15.0+cu132");
  EXPECT_EQ(j["criteria"][4]["id"], "speedup_vs_torch_eager");
  EXPECT_EQ(j["criteria"][4]["optional"], true);
  EXPECT_EQ(j["criteria"][3]["optional"], false);
}

TEST(ReportJson, ReadsAReportFromBeforeTheTorchBaseline) {
  Json j = ReportToJson(SyntheticReport());
  j.erase("torch_eager");
  for (Json& c : j["criteria"]) c.erase("optional");
  absl::StatusOr<ValidationReport> back = ReportFromJson(j, "old.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->torch_eager.measured);
  for (const Criterion& c : back->criteria) EXPECT_FALSE(c.optional) << c.id;
}

TEST(ReportJson, ErrorsNameTheField) {
  Json j = ReportToJson(SyntheticReport());
  j["tests"][2].erase("command");
  absl::StatusOr<ValidationReport> back = ReportFromJson(j, "r.json");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("r.json tests: no field \"command\""), std::string::npos) << back.status();
  j = ReportToJson(SyntheticReport());
  j["schema"] = "other";
  EXPECT_FALSE(ReportFromJson(j, "r.json").ok());
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
