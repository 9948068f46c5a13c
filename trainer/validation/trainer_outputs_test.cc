#include "trainer/validation/trainer_outputs.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace gpt_sft::trainer::validation {
namespace {

// A record as the trainer writes it (trainer/report/metrics_log.cc), with the validation fields.
constexpr char kRecord[] =
    R"({"run":1,"step":3,"loss":2.5,"lr_multiplier":0.9,"tokens":8192,"supervised_tokens":4000,)"
    R"("padding_fraction":0.5,"step_seconds":0.25,"tokens_per_second":32768,"supervised_tokens_per_second":16000,)"
    R"("peak_rss_bytes":1000000,"batch_shapes":[[4,512]],"loss_mean":2.4,"world_size":2,"mode":"compiled",)"
    R"("recompilations":0})";

constexpr char kSummary[] = R"({
  "mode": "compiled", "world_size": 1, "backend": "single", "num_threads": 2, "batch_shape": [4, 512],
  "packing": "bestfit", "steps_trained": 7, "first_loss": 8.3, "final_loss": 4.1,
  "final_loss_mean": 4.0, "val_loss": 4.2,
  "compile": {"cache_hit": false, "seconds": 0.2, "compile_seconds": 0.19, "key": "0123456789abcdef",
              "arena_bytes": 1048576},
  "recompilations_training": 0, "recompilations_evaluation": 0, "peak_rss_bytes": 2000000,
  "tokens_per_second": 30000.5, "seconds_per_step": 0.27,
  "checkpoint": {"model_path": "/x/model_000007.safetensors", "step": 7, "verified": true, "reload_bit_exact": true, "mismatch": "",
                 "val_loss_saved": 4.2, "val_loss_reloaded": 4.2}})";

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ParseStepMetrics, ReadsEveryField) {
  absl::StatusOr<StepMetrics> m = ParseStepMetrics(kRecord, "m:1");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->step, 3);
  EXPECT_DOUBLE_EQ(m->loss, 2.5);
  EXPECT_EQ(m->loss_mean, 2.4);
  EXPECT_DOUBLE_EQ(m->step_seconds, 0.25);
  EXPECT_EQ(m->tokens, 8192);
  EXPECT_EQ(m->peak_rss_bytes, 1000000);
  ASSERT_EQ(m->batch_shapes.size(), 1u);
  EXPECT_EQ(m->batch_shapes[0], (BatchShape{4, 512}));
  EXPECT_EQ(m->world_size, 2);
  EXPECT_EQ(m->mode, "compiled");
  EXPECT_EQ(m->recompilations, 0);
}

TEST(ParseStepMetrics, ValidationFieldsAreOptional) {
  // A record of a trainer before the validation fields: they are missing, not zero.
  absl::StatusOr<StepMetrics> m = ParseStepMetrics(
      R"({"step":0,"loss":1,"tokens":1,"supervised_tokens":1,"step_seconds":1,"tokens_per_second":1,)"
      R"("supervised_tokens_per_second":1,"peak_rss_bytes":1})",
      "m:1");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->loss_mean.has_value());
  EXPECT_FALSE(m->recompilations.has_value());
  EXPECT_TRUE(m->batch_shapes.empty());
}

TEST(ReadMetricsJsonl, ErrorNamesFileLineAndField) {
  std::string bad = kRecord;
  bad.replace(bad.find("\"step_seconds\""), 14, "\"step_secondz\"");
  const std::string path = WriteTemp("metrics.jsonl", std::string(kRecord) + "\n" + bad + "\n");
  absl::StatusOr<std::vector<StepMetrics>> r = ReadMetricsJsonl(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path + ":2: no field \"step_seconds\""), std::string::npos) << r.status();
}

TEST(ReadMetricsJsonl, BadShapeIsAnError) {
  std::string bad = kRecord;
  bad.replace(bad.find("[[4,512]]"), 9, "[[4,512,1]]");
  absl::StatusOr<StepMetrics> m = ParseStepMetrics(bad, "m:9");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("m:9: field \"batch_shapes\": [4,512,1] is not [B, T]"), std::string::npos)
      << m.status();
}

TEST(ReadRunSummary, ReadsTheSummary) {
  absl::StatusOr<RunSummary> s = ReadRunSummary(WriteTemp("run_summary.json", kSummary));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->mode, "compiled");
  EXPECT_EQ(s->steps_trained, 7);
  EXPECT_EQ(s->final_loss_mean, 4.0);
  EXPECT_EQ(s->batch_shape, (BatchShape{4, 512}));
  EXPECT_EQ(s->backend, "single");
  EXPECT_EQ(s->num_threads, 2);
  ASSERT_TRUE(s->compile.has_value());
  EXPECT_FALSE(s->compile->cache_hit);
  EXPECT_EQ(s->compile->key, "0123456789abcdef");
  ASSERT_TRUE(s->checkpoint.has_value());
  EXPECT_TRUE(s->checkpoint->reload_bit_exact);
  EXPECT_EQ(s->checkpoint->verified, true);
  EXPECT_EQ(s->checkpoint->val_loss_reloaded, 4.2);
}

TEST(ReadRunSummary, MissingFileIsNotFound) {
  absl::StatusOr<RunSummary> s = ReadRunSummary(::testing::TempDir() + "/nowhere/run_summary.json");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadRunSummary, WrongTypeNamesTheField) {
  std::string bad = kSummary;
  bad.replace(bad.find("\"cache_hit\": false"), 18, "\"cache_hit\": \"no\"");
  absl::StatusOr<RunSummary> s = ParseRunSummary(bad, "s.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("s.json compile: field \"cache_hit\""), std::string::npos) << s.status();
}

TEST(TrainerOutputsJson, RoundTrips) {
  absl::StatusOr<StepMetrics> m = ParseStepMetrics(kRecord, "m");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<StepMetrics> m2 = StepMetricsFromJson(ToJson(*m), "again");
  ASSERT_TRUE(m2.ok()) << m2.status();
  EXPECT_EQ(*m, *m2);
  absl::StatusOr<RunSummary> s = ParseRunSummary(kSummary, "s");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<RunSummary> s2 = RunSummaryFromJson(ToJson(*s), "again");
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(*s, *s2);
  RunSummary eager = *s;
  eager.compile.reset();
  eager.checkpoint.reset();
  eager.val_loss.reset();
  eager.batch_shape.reset();
  absl::StatusOr<RunSummary> e2 = RunSummaryFromJson(ToJson(eager), "eager");
  ASSERT_TRUE(e2.ok()) << e2.status();
  EXPECT_EQ(eager, *e2);
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
