#include "trainer/validation/criteria.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "trainer/validation/test_figures.h"

namespace gpt_sft::trainer::validation {
namespace {

std::string ShapeText(const BatchShape& s) { return absl::StrCat("[", s[0], ", ", s[1], "]"); }

double RelativeDifference(double value, double reference) {
  return std::fabs(value - reference) / std::max(std::fabs(reference), 1e-30);
}

std::string Percent(double fraction) { return absl::StrFormat("%.3g%%", 100 * fraction); }

Criterion Make(const char* id, std::string title, CriterionKind kind, std::string threshold) {
  Criterion c;
  c.id = id;
  c.title = std::move(title);
  c.kind = kind;
  c.threshold = std::move(threshold);
  return c;
}

void NotMeasured(Criterion& c, std::string why) {
  c.status = CriterionStatus::kNotMeasured;
  c.measured = "not measured: " + why;
}

void Decide(Criterion& c, bool pass, std::string measured, std::optional<double> value = std::nullopt) {
  c.status = pass ? CriterionStatus::kPass : CriterionStatus::kFail;
  c.measured = std::move(measured);
  c.value = value;
}

bool IsCompiled(TestRole r) { return r != TestRole::kEager; }

class Checklist {
 public:
  Checklist(const std::vector<TestRun>& tests, const Thresholds& t, const TorchEagerBaseline& torch)
      : tests_(tests), t_(t), torch_(torch) {
    for (const TestRun& test : tests) by_role_[test.role] = &test;
  }

  std::vector<Criterion> All() const {
    return {TestsCompleted(), StaticShapes(), NoRecompilation(), Speedup(), SpeedupVsTorchEager(), CompileTime(),
            WarmStart(),      Memory(),       FinalLoss(),       Checkpoint(), RanksMatch()};
  }

 private:
  const TestRun* Get(TestRole r) const {
    auto it = by_role_.find(r);
    return it == by_role_.end() ? nullptr : it->second;
  }

  Criterion TestsCompleted() const {
    Criterion c = Make("tests_completed", "Every test ran to the end", CriterionKind::kCorrectness,
                       "exit status 0 and a run summary, for every test");
    std::vector<std::string> bad;
    for (const TestRun& t : tests_) {
      c.tests.push_back(t.id);
      if (!t.ran) bad.push_back(t.id + " did not start");
      else if (t.term_signal != 0) bad.push_back(absl::StrCat(t.id, " killed by signal ", t.term_signal));
      else if (t.exit_code != 0) bad.push_back(absl::StrCat(t.id, " exited ", t.exit_code));
      else if (!t.summary) bad.push_back(t.id + " wrote no run summary");
    }
    if (tests_.empty()) {
      NotMeasured(c, "no test ran");
      return c;
    }
    Decide(c, bad.empty(),
           bad.empty() ? absl::StrCat(tests_.size(), " of ", tests_.size(), " tests exited 0 with a run summary")
                       : absl::StrJoin(bad, "; "),
           static_cast<double>(tests_.size() - bad.size()));
    return c;
  }

  Criterion StaticShapes() const {
    Criterion c = Make("static_shapes", "One static batch shape [B, T] in every test", CriterionKind::kCorrectness,
                       "the distinct micro-batch shapes over every step of every test: exactly one");
    std::vector<BatchShape> seen;
    std::vector<std::string> missing;
    int64_t steps = 0;
    for (const TestRun& t : tests_) {
      c.tests.push_back(t.id);
      if (t.figures.batch_shapes.empty()) {
        missing.push_back(t.id);
        continue;
      }
      steps += t.figures.steps;
      for (const BatchShape& s : t.figures.batch_shapes) {
        if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
      }
    }
    if (tests_.empty() || !missing.empty()) {
      NotMeasured(c, tests_.empty() ? "no test ran"
                                    : absl::StrCat("no batch shapes recorded by ", absl::StrJoin(missing, ", ")));
      return c;
    }
    std::vector<std::string> shapes, unconfigured;
    for (const BatchShape& s : seen) shapes.push_back(ShapeText(s));
    for (const TestRun& t : tests_) {
      // The shape seen must be the one the run was configured with, not merely one shape.
      if (seen.size() == 1 && t.summary && t.summary->batch_shape && *t.summary->batch_shape != seen[0]) {
        unconfigured.push_back(absl::StrCat(t.id, " was configured for ", ShapeText(*t.summary->batch_shape)));
      }
    }
    if (seen.size() != 1) {
      Decide(c, false, absl::StrCat(seen.size(), " shapes: ", absl::StrJoin(shapes, ", ")),
             static_cast<double>(seen.size()));
    } else if (!unconfigured.empty()) {
      Decide(c, false, absl::StrCat("every micro-batch was ", shapes[0], ", but ", absl::StrJoin(unconfigured, "; ")),
             1.0);
    } else {
      Decide(c, true,
             absl::StrCat("every micro-batch of ", steps, " steps in ", tests_.size(), " tests was ", shapes[0],
                          ", the configured static shape"),
             1.0);
    }
    return c;
  }

  Criterion NoRecompilation() const {
    Criterion c = Make("no_recompilation", "No recompilation in training or evaluation", CriterionKind::kCorrectness,
                       "compiled tests: recompilations == 0 in training and in evaluation");
    std::vector<std::string> parts, missing;
    bool pass = true;
    int64_t total = 0;
    int compiled = 0;
    for (const TestRun& t : tests_) {
      if (!IsCompiled(t.role)) continue;
      ++compiled;
      const auto& training = t.figures.recompilations_training;
      const auto& evaluation = t.figures.recompilations_evaluation;
      if (!training || !evaluation) {
        missing.push_back(t.id);
        continue;
      }
      total += *training + *evaluation;
      if (*training + *evaluation != 0) {
        pass = false;
        c.tests.push_back(t.id);
      }
      parts.push_back(absl::StrCat(t.id, ": ", *training, " training, ", *evaluation, " evaluation"));
    }
    if (compiled == 0 || (!missing.empty() && pass)) {
      NotMeasured(c, compiled == 0 ? "no compiled test ran"
                                   : absl::StrCat("no recompilation counts from ", absl::StrJoin(missing, ", ")));
      return c;
    }
    if (!missing.empty()) parts.push_back(absl::StrCat("no counts from ", absl::StrJoin(missing, ", ")));
    Decide(c, pass, absl::StrJoin(parts, "; "), static_cast<double>(total));
    return c;
  }

  Criterion Speedup() const {
    Criterion c = Make("speedup",
                       absl::StrFormat("Compiled step at least %.2gx faster than eager: our interpreter", t_.min_speedup),
                       CriterionKind::kTarget,
                       absl::StrFormat("median time/step (warm-up excluded), Test 1 / Test 2 >= %.2f", t_.min_speedup));
    const TestRun* eager = Get(TestRole::kEager);
    const TestRun* compiled = Get(TestRole::kCompiled);
    if (!eager || !compiled || !eager->figures.seconds_per_step || !compiled->figures.seconds_per_step) {
      NotMeasured(c, "needs time/step past the warm-up from Test 1 and Test 2");
      return c;
    }
    c.tests = {eager->id, compiled->id};
    const double e = eager->figures.seconds_per_step->median, k = compiled->figures.seconds_per_step->median;
    if (!(k > 0)) {
      NotMeasured(c, "Test 2's median time/step is 0");
      return c;
    }
    const double speedup = e / k;
    Decide(c, speedup >= t_.min_speedup,
           absl::StrFormat("%.2fx (eager %.1f ms / compiled %.1f ms per step, medians)", speedup, 1e3 * e, 1e3 * k),
           speedup);
    return c;
  }

  // The same >= min_speedup against the other eager baseline: PyTorch eager running nanochat's
  // model, the system the report validates.
  Criterion SpeedupVsTorchEager() const {
    Criterion c = Make("speedup_vs_torch_eager",
                       absl::StrFormat("Compiled step at least %.2gx faster than eager: PyTorch eager, nanochat's model",
                                       t_.min_speedup),
                       CriterionKind::kTarget,
                       absl::StrFormat("PyTorch eager median time/step (same model, micro-batch shape, micro-batches per "
                                       "step, threads and dtype) / Test 2 >= %.2f; optional: needs PyTorch",
                                       t_.min_speedup));
    c.optional = true;
    const TestRun* compiled = Get(TestRole::kCompiled);
    if (!torch_.measured || !torch_.seconds_per_step) {
      NotMeasured(c, torch_.why_not.empty() ? "no PyTorch eager baseline was run" : torch_.why_not);
      return c;
    }
    if (!compiled || !compiled->figures.seconds_per_step || !(compiled->figures.seconds_per_step->median > 0)) {
      NotMeasured(c, "needs Test 2's time/step past the warm-up");
      return c;
    }
    c.tests = {compiled->id};
    const double e = *torch_.seconds_per_step, k = compiled->figures.seconds_per_step->median;
    const double speedup = e / k;
    Decide(c, speedup >= t_.min_speedup,
           absl::StrFormat("%.2fx (torch %s eager %.1f ms / compiled %.1f ms per step, medians)", speedup,
                           torch_.torch_version, 1e3 * e, 1e3 * k),
           speedup);
    return c;
  }

  Criterion CompileTime() const {
    Criterion c = Make("compile_time", absl::StrFormat("Compile time at most %.0f s", t_.max_compile_seconds),
                       CriterionKind::kTarget,
                       absl::StrFormat("cold compile of the step (Test 2, fresh cache) <= %.0f s",
                                       t_.max_compile_seconds));
    const TestRun* compiled = Get(TestRole::kCompiled);
    if (!compiled || !compiled->figures.compile_seconds || !compiled->figures.cache_hit) {
      NotMeasured(c, "Test 2 reported no compile time");
      return c;
    }
    c.tests = {compiled->id};
    if (*compiled->figures.cache_hit) {
      NotMeasured(c, "Test 2 found its step in the compile cache, so no cold compile was timed");
      return c;
    }
    const double cold = *compiled->figures.compile_seconds;
    std::string warm = "warm start not measured";
    if (const TestRun* w = Get(TestRole::kCompiledWarm); w && w->figures.compile_seconds && w->figures.cache_hit) {
      warm = absl::StrFormat("warm %.3f s (%s, %s)", *w->figures.compile_seconds, w->id,
                             *w->figures.cache_hit ? "cache hit" : "compiled again");
    }
    Decide(c, cold <= t_.max_compile_seconds, absl::StrFormat("cold %.2f s (%s); %s", cold, compiled->id, warm), cold);
    return c;
  }

  Criterion WarmStart() const {
    Criterion c = Make("warm_start", "A warm start loads the compiled step from the cache",
                       CriterionKind::kCorrectness,
                       "Test 2b (Test 2's flags, same compile cache): cache hit of Test 2's artifact key");
    const TestRun* compiled = Get(TestRole::kCompiled);
    const TestRun* warm = Get(TestRole::kCompiledWarm);
    if (!compiled || !warm || !compiled->figures.artifact_key || !warm->figures.artifact_key ||
        !warm->figures.cache_hit || !warm->figures.compile_seconds) {
      NotMeasured(c, "needs the compile figures of Test 2 and Test 2b");
      return c;
    }
    c.tests = {warm->id};
    const bool same_key = *warm->figures.artifact_key == *compiled->figures.artifact_key;
    Decide(c, *warm->figures.cache_hit && same_key,
           absl::StrFormat("%s in %.3f s, artifact %s%s", *warm->figures.cache_hit ? "cache hit" : "no cache hit",
                           *warm->figures.compile_seconds, *warm->figures.artifact_key,
                           same_key ? " (Test 2's)" : absl::StrCat(" (Test 2's is ", *compiled->figures.artifact_key,
                                                                   ")")),
           *warm->figures.compile_seconds);
    return c;
  }

  Criterion Memory() const {
    Criterion c = Make("memory",
                       absl::StrFormat("Compiled peak memory within %.0f%% of eager (or below)",
                                       100 * (t_.max_memory_ratio - 1)),
                       CriterionKind::kTarget,
                       absl::StrFormat("peak RSS, Test 2 / Test 1 <= %.2f", t_.max_memory_ratio));
    const TestRun* eager = Get(TestRole::kEager);
    const TestRun* compiled = Get(TestRole::kCompiled);
    if (!eager || !compiled || !eager->figures.peak_rss_bytes || !compiled->figures.peak_rss_bytes ||
        *eager->figures.peak_rss_bytes <= 0) {
      NotMeasured(c, "needs the peak RSS of Test 1 and Test 2");
      return c;
    }
    c.tests = {compiled->id};
    const double ratio = double(*compiled->figures.peak_rss_bytes) / double(*eager->figures.peak_rss_bytes);
    Decide(c, ratio <= t_.max_memory_ratio,
           absl::StrFormat("%.3f (compiled %.1f MiB / eager %.1f MiB)", ratio,
                           *compiled->figures.peak_rss_bytes / 1048576.0, *eager->figures.peak_rss_bytes / 1048576.0),
           ratio);
    return c;
  }

  Criterion FinalLoss() const {
    Criterion c = Make("final_loss",
                       absl::StrFormat("Compiled loss at the last step within %.0f%% of eager",
                                       100 * t_.max_final_loss_rel_diff),
                       CriterionKind::kCorrectness,
                       absl::StrFormat("|Test 2 - Test 1| / Test 1, mean loss of the last step's micro-batches <= %g",
                                       t_.max_final_loss_rel_diff));
    const TestRun* eager = Get(TestRole::kEager);
    const TestRun* compiled = Get(TestRole::kCompiled);
    if (!eager || !compiled) {
      NotMeasured(c, "needs Test 1 and Test 2");
      return c;
    }
    // Like for like: both means when both runs have them, else both logged losses.
    const bool means = eager->figures.final_loss_mean && compiled->figures.final_loss_mean;
    const std::optional<double> e = means ? eager->figures.final_loss_mean : eager->figures.final_loss;
    const std::optional<double> k = means ? compiled->figures.final_loss_mean : compiled->figures.final_loss;
    if (!e || !k) {
      NotMeasured(c, "needs the last step's loss of Test 1 and Test 2");
      return c;
    }
    c.tests = {compiled->id};
    const double diff = RelativeDifference(*k, *e);
    Decide(c, diff <= t_.max_final_loss_rel_diff,
           absl::StrFormat("%s (compiled %.6f, eager %.6f; %s)", Percent(diff), *k, *e,
                           means ? "mean over the micro-batches" : "last micro-batch: no loss_mean recorded"),
           diff);
    return c;
  }

  Criterion Checkpoint() const {
    Criterion c = Make("checkpoint", "Checkpoint saved and reloaded bit-exactly, with the same validation loss",
                       CriterionKind::kCorrectness,
                       "every test: the saved weights reload bit-exactly and give the saved val loss exactly");
    std::vector<std::string> parts, bad, missing;
    for (const TestRun& t : tests_) {
      if (!t.summary || !t.summary->checkpoint) {
        missing.push_back(t.id);
        continue;
      }
      const CheckpointSummary& k = *t.summary->checkpoint;
      if (k.verified.has_value() && !*k.verified) {
        missing.push_back(t.id + " (not reloaded: --verify_checkpoint=false)");
        continue;
      }
      const bool same_loss = k.val_loss_saved && k.val_loss_reloaded && *k.val_loss_saved == *k.val_loss_reloaded;
      if (!k.reload_bit_exact || !same_loss) {
        bad.push_back(t.id);
        c.tests.push_back(t.id);
      }
      parts.push_back(absl::StrFormat(
          "%s: step %d, %s, val loss %s -> %s", t.id, k.step,
          k.reload_bit_exact ? "bit-exact"
                             : "NOT bit-exact" + (k.mismatch.empty() ? std::string() : " (" + k.mismatch + ")"),
          k.val_loss_saved ? absl::StrFormat("%.9g", *k.val_loss_saved) : std::string("?"),
          k.val_loss_reloaded ? absl::StrFormat("%.9g", *k.val_loss_reloaded) : std::string("?")));
    }
    if (tests_.empty() || (!missing.empty() && bad.empty())) {
      NotMeasured(c, tests_.empty() ? "no test ran"
                                    : absl::StrCat("no checkpoint summary from ", absl::StrJoin(missing, ", ")));
      return c;
    }
    if (!missing.empty()) parts.push_back(absl::StrCat("no checkpoint summary from ", absl::StrJoin(missing, ", ")));
    Decide(c, bad.empty(), absl::StrJoin(parts, "; "), static_cast<double>(bad.size()));
    return c;
  }

  Criterion RanksMatch() const {
    Criterion c = Make("ranks_match", "N ranks train like one rank", CriterionKind::kCorrectness,
                       absl::StrFormat("Test 3 vs Test 2, relative: the mean loss of every 10-step window <= %g, final val loss <= %g",
                                       t_.max_ranks_step_loss_rel_diff, t_.max_ranks_val_loss_rel_diff));
    const TestRun* one = Get(TestRole::kCompiled);
    const TestRun* many = Get(TestRole::kCompiledRanks);
    if (!one || !many || one->steps.empty() || many->steps.empty() || !one->figures.val_loss ||
        !many->figures.val_loss) {
      NotMeasured(c, "needs the per-step losses and the final val loss of Test 2 and Test 3");
      return c;
    }
    c.tests = {many->id};
    if (one->steps.size() != many->steps.size()) {
      Decide(c, false, absl::StrCat(many->id, " trained ", many->steps.size(), " steps, ", one->id, " ",
                                    one->steps.size()));
      return c;
    }
    // Per-step losses differ by more than training does: each rank packs its own shard, so a
    // step's rows are not the one-rank run's. Windows of kWindow steps average that out.
    constexpr size_t kWindow = 10;
    double worst = 0;
    int64_t worst_step = 0;
    bool means = true;
    for (size_t start = 0; start < one->steps.size(); start += kWindow) {
      double sum_one = 0, sum_many = 0;
      const size_t end = std::min(one->steps.size(), start + kWindow);
      for (size_t i = start; i < end; ++i) {
        means = means && one->steps[i].loss_mean && many->steps[i].loss_mean;
        sum_one += StepLoss(one->steps[i]);
        sum_many += StepLoss(many->steps[i]);
      }
      const double d = RelativeDifference(sum_many, sum_one);
      if (d > worst || start == 0) worst = d, worst_step = one->steps[start].step;
    }
    const double val = RelativeDifference(*many->figures.val_loss, *one->figures.val_loss);
    const int ranks = many->summary ? many->summary->world_size : many->world_size;
    Decide(c, worst <= t_.max_ranks_step_loss_rel_diff && val <= t_.max_ranks_val_loss_rel_diff,
           absl::StrFormat("%d ranks: worst 10-step window from step %d at %s (%s); final val loss %.6f vs %.6f (%s)", ranks, worst_step,
                           Percent(worst), means ? "mean loss" : "last micro-batch loss: no loss_mean recorded",
                           *many->figures.val_loss, *one->figures.val_loss, Percent(val)),
           worst);
    return c;
  }

  const std::vector<TestRun>& tests_;
  const Thresholds& t_;
  const TorchEagerBaseline& torch_;
  std::map<TestRole, const TestRun*> by_role_;
};

}  // namespace

void JudgeTest(TestRun& t, int expected_world_size) {
  if (!t.ran) {
    t.failures.push_back("did not start");
    return;
  }
  if (t.term_signal != 0) t.failures.push_back(absl::StrCat("killed by signal ", t.term_signal));
  else if (t.exit_code != 0) t.failures.push_back(absl::StrCat("exited with status ", t.exit_code));
  const bool exited_cleanly = t.term_signal == 0 && t.exit_code == 0;
  // After a crash, missing outputs are its consequence, not news.
  if (exited_cleanly && t.steps.empty()) t.failures.push_back("no metrics records in " + t.output_dir + "/metrics.jsonl");
  if (!t.summary) {
    if (exited_cleanly) t.failures.push_back("no run_summary.json in " + t.output_dir);
    return;
  }
  const std::string want_mode = t.role == TestRole::kEager ? "eager" : "compiled";
  if (t.summary->mode != want_mode) {
    t.failures.push_back(absl::StrCat("ran in mode \"", t.summary->mode, "\", expected \"", want_mode, "\""));
  }
  if (t.summary->world_size != expected_world_size) {
    t.failures.push_back(absl::StrCat("ran on ", t.summary->world_size, " rank(s), expected ", expected_world_size));
  }
}

std::vector<Criterion> EvaluateCriteria(const std::vector<TestRun>& tests, const Thresholds& thresholds,
                                        const TorchEagerBaseline& torch_eager) {
  return Checklist(tests, thresholds, torch_eager).All();
}

void ChargeFailures(const std::vector<Criterion>& criteria, std::vector<TestRun>& tests) {
  for (const Criterion& c : criteria) {
    if (c.kind != CriterionKind::kCorrectness || c.status != CriterionStatus::kFail) continue;
    if (c.id == "tests_completed") continue;  // JudgeTest already said why
    for (TestRun& t : tests) {
      if (std::find(c.tests.begin(), c.tests.end(), t.id) != c.tests.end()) {
        t.failures.push_back(absl::StrCat("criterion ", c.id, ": ", c.measured));
      }
    }
  }
}

int ExitCode(const std::vector<TestRun>& tests, const std::vector<Criterion>& criteria, bool strict_targets) {
  for (const TestRun& t : tests) {
    if (!t.passed()) return 1;
  }
  for (const Criterion& c : criteria) {
    if (c.status == CriterionStatus::kNotMeasured && !c.optional) return 1;
    if (c.status == CriterionStatus::kFail && (c.kind == CriterionKind::kCorrectness || strict_targets)) return 1;
  }
  return tests.empty() ? 1 : 0;
}

std::string Verdict(const std::vector<TestRun>& tests, const std::vector<Criterion>& criteria, bool strict_targets) {
  std::vector<std::string> failed_tests, failed_checks, unmeasured, missed_targets;
  int correctness = 0, targets = 0, targets_met = 0;
  for (const TestRun& t : tests) {
    if (!t.passed()) failed_tests.push_back(t.id);
  }
  for (const Criterion& c : criteria) {
    (c.kind == CriterionKind::kCorrectness ? correctness : targets) += 1;
    if (c.kind == CriterionKind::kTarget && c.status == CriterionStatus::kPass) ++targets_met;
    if (c.status == CriterionStatus::kNotMeasured) unmeasured.push_back(c.id);
    if (c.status != CriterionStatus::kFail) continue;
    (c.kind == CriterionKind::kCorrectness ? failed_checks : missed_targets).push_back(c.id);
  }
  const bool ok = ExitCode(tests, criteria, strict_targets) == 0;
  std::vector<std::string> parts;
  if (!failed_tests.empty()) parts.push_back("failed tests: " + absl::StrJoin(failed_tests, ", "));
  if (!failed_checks.empty()) parts.push_back("failed checks: " + absl::StrJoin(failed_checks, ", "));
  if (!unmeasured.empty()) parts.push_back("not measured: " + absl::StrJoin(unmeasured, ", "));
  if (ok) {
    parts.push_back(absl::StrCat(tests.size(), " tests passed, ", correctness, " correctness checks passed"));
  }
  parts.push_back(absl::StrCat("performance targets: ", targets_met, " of ", targets, " met",
                               missed_targets.empty() ? "" : " (missed: " + absl::StrJoin(missed_targets, ", ") + ")"));
  return absl::StrCat(ok ? "PASSED" : "FAILED", ": ", absl::StrJoin(parts, "; "));
}

}  // namespace gpt_sft::trainer::validation
