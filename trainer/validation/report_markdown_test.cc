#include "trainer/validation/report_markdown.h"

#include "gtest/gtest.h"
#include "trainer/validation/criteria.h"
#include "trainer/validation/synthetic_report.h"

namespace gpt_sft::trainer::validation {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RenderMarkdown, PassingRunTicksEveryCriterion) {
  const std::string md = RenderMarkdown(SyntheticReport());
  EXPECT_TRUE(Has(md, "# Validation report")) << md;
  EXPECT_TRUE(Has(md, "**PASSED: ")) << md;
  EXPECT_TRUE(Has(md, "- [x] ✅ **Compiled step at least 1.3x faster than eager: our interpreter** (target, `speedup`): "
                      "1.50x"))
      << md;
  EXPECT_TRUE(Has(md, "- [x] ✅ **Compiled step at least 1.3x faster than eager: PyTorch eager, nanochat's model** "
                      "(target, optional, `speedup_vs_torch_eager`): 2.23x"))
      << md;
  EXPECT_TRUE(Has(md, "## Eager baselines")) << md;
  EXPECT_TRUE(Has(md, "| Time/step, median of 3 (after 1 warm-up) | 450.0 ms |")) << md;
  EXPECT_FALSE(Has(md, "- [ ]")) << md;
  EXPECT_TRUE(Has(md, "| Batch shapes | all [4, 512] | all [4, 512] |")) << md;
  EXPECT_TRUE(Has(md, "| Compile | n/a (eager) | 0.500 s, cold (compiled) | 0.010 s, warm (cache hit) |")) << md;
  EXPECT_TRUE(Has(md, "![Training loss per step](loss.png)")) << md;
  EXPECT_TRUE(Has(md, "`0123456789abcdef0123456789abcdef01234567`")) << md;
  EXPECT_TRUE(Has(md, "/bin/trainer --compile=false")) << md;
  EXPECT_TRUE(Has(md, "| CPU | Synthetic CPU @ 3 GHz |")) << md;
  EXPECT_TRUE(Has(md, "| llvm-19-dev | 1:19.1.7-3~deb12u1 |")) << md;
}

TEST(RenderMarkdown, FailedTestShowsItsErrorAndCrossesItsCriteria) {
  ValidationReport r = SyntheticReport();
  TestRun& t = r.tests[1];
  t.exit_code = 1;
  t.summary.reset();
  t.figures.compile_seconds.reset();
  t.figures.cache_hit.reset();
  t.figures.recompilations_evaluation.reset();
  t.error_tail = "trainer: error: boom";
  for (TestRun& test : r.tests) {
    test.failures.clear();
    JudgeTest(test, test.world_size);
  }
  r.criteria = EvaluateCriteria(r.tests, r.config.thresholds);
  r.exit_code = ExitCode(r.tests, r.criteria, false);
  r.verdict = Verdict(r.tests, r.criteria, false);
  r.plots = PlotSet{false, {}, "matplotlib is missing"};
  const std::string md = RenderMarkdown(r);
  EXPECT_TRUE(Has(md, "**FAILED: failed tests: test2")) << md;
  EXPECT_TRUE(Has(md, "- [ ] ❌ **Every test ran to the end** (check, `tests_completed`): FAILED: test2 exited 1"))
      << md;
  EXPECT_TRUE(Has(md, "- [ ] ❌ **Compile time at most 60 s** (target, `compile_time`): not measured: ")) << md;
  EXPECT_TRUE(Has(md, "| Status | ✅ passed | ❌ FAILED |")) << md;
  EXPECT_TRUE(Has(md, "Error (end of stderr):\n\n```\ntrainer: error: boom\n```")) << md;
  EXPECT_TRUE(Has(md, "- exited with status 1")) << md;
  EXPECT_TRUE(Has(md, "**No plots:** matplotlib is missing")) << md;
  EXPECT_TRUE(Has(md, "(exit status 1)")) << md;
}

TEST(RenderMarkdown, AnUnmeasuredTorchBaselineIsSaidAndCrossed) {
  ValidationReport r = SyntheticReport();
  r.torch_eager = TorchEagerBaseline{};
  r.torch_eager.why_not = "no PyTorch peer venv at /c/torch-peer-2.15.0";
  r.criteria = EvaluateCriteria(r.tests, r.config.thresholds, r.torch_eager);
  const std::string md = RenderMarkdown(r);
  EXPECT_TRUE(Has(md, "**PyTorch eager: not measured:** no PyTorch peer venv at /c/torch-peer-2.15.0")) << md;
  EXPECT_TRUE(Has(md, "- [ ] ❌ **Compiled step at least 1.3x faster than eager: PyTorch eager, nanochat's model** "
                      "(target, optional, `speedup_vs_torch_eager`): not measured: no PyTorch peer venv"))
      << md;
}

TEST(ShellLine, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellLine({"/a/trainer", "--max_iterations=8", "--prompt=it's here", "a|b"}),
            "/a/trainer --max_iterations=8 '--prompt=it'\\''s here' 'a|b'");
}

}  // namespace
}  // namespace gpt_sft::trainer::validation
