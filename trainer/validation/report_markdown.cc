#include "trainer/validation/report_markdown.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace gpt_sft::trainer::validation {
namespace {

constexpr char kNotMeasured[] = "not measured";

std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

std::string Bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / double(int64_t{1} << 30));
  return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
}

template <typename T, typename F>
std::string Or(const std::optional<T>& v, F format) {
  return v ? format(*v) : std::string(kNotMeasured);
}

std::string Loss(double v) { return absl::StrFormat("%.6f", v); }

// "412.3 ms (min 400.1, max 430.0; IQR 405.2–420.8; 95 steps)"
std::string SpreadText(const std::optional<Spread>& s, double scale, int decimals, const char* unit) {
  if (!s) return kNotMeasured;
  auto f = [&](double v) { return absl::StrFormat("%.*f", decimals, v * scale); };
  return absl::StrCat(f(s->median), unit, " (min ", f(s->min), ", max ", f(s->max), "; IQR ", f(s->p25), "–",
                      f(s->p75), "; ", s->count, " steps)");
}

std::string ShapesText(const TestFigures& f) {
  if (f.batch_shapes.empty()) return kNotMeasured;
  std::vector<std::string> shapes;
  for (const BatchShape& s : f.batch_shapes) shapes.push_back(absl::StrCat("[", s[0], ", ", s[1], "]"));
  return f.batch_shapes.size() == 1 ? absl::StrCat("all ", shapes[0])
                                    : absl::StrCat("NOT static: ", absl::StrJoin(shapes, ", "));
}

std::string CompileText(const TestRun& t) {
  if (t.role == TestRole::kEager) return "n/a (eager)";
  if (!t.figures.compile_seconds || !t.figures.cache_hit) return kNotMeasured;
  return absl::StrFormat("%.3f s, %s", *t.figures.compile_seconds,
                         *t.figures.cache_hit ? "warm (cache hit)" : "cold (compiled)");
}

std::string CheckpointText(const TestRun& t) {
  if (!t.summary || !t.summary->checkpoint) return kNotMeasured;
  const CheckpointSummary& k = *t.summary->checkpoint;
  const bool same = k.val_loss_saved && k.val_loss_reloaded && *k.val_loss_saved == *k.val_loss_reloaded;
  return absl::StrCat("step ", k.step, ", ", k.reload_bit_exact ? "reload bit-exact" : "reload NOT bit-exact", ", ",
                      same ? "same val loss" : "val loss differs");
}

void CriteriaSection(const ValidationReport& r, std::ostream& out) {
  out << "## Success criteria\n\n"
      << "Ticked only from measured figures; a criterion whose measurement is missing is crossed. "
      << "*check*: a correctness check (a failure fails the run); *target*: a performance target"
      << (r.exit_code == 0 ? " (crossed when missed; the exit status fails on it only with --strict_targets)" : "")
      << ".\n\n";
  for (const Criterion& c : r.criteria) {
    const bool pass = c.status == CriterionStatus::kPass;
    out << "- [" << (pass ? "x" : " ") << "] " << (pass ? "✅" : "❌") << " **" << c.title << "** ("
        << (c.kind == CriterionKind::kCorrectness ? "check" : "target") << (c.optional ? ", optional" : "") << ", `"
        << c.id << "`): "
        << (c.status == CriterionStatus::kNotMeasured ? "" : pass ? "" : "FAILED: ") << c.measured
        << ". Rule: " << c.threshold << ".\n";
  }
  out << "\n";
}

void EnvironmentSection(const ValidationReport& r, std::ostream& out) {
  const Environment& e = r.environment;
  const RunConfig& c = r.config;
  out << "## Environment and configuration\n\n| | |\n|---|---|\n"
      << "| Host | " << Cell(e.hostname) << " |\n"
      << "| CPU | " << Cell(e.cpu_model) << " |\n"
      << "| Cores | " << e.cpu_cores << " online, " << e.cpus_usable << " usable by this run |\n"
      << "| GPU | " << Cell(e.gpu) << " |\n"
      << "| OS | " << Cell(e.os) << " |\n"
      << "| C++ compiler | " << Cell(e.cxx_compiler) << " |\n"
      << "| Step compiler | " << Cell(e.gptc_version.empty() ? std::string(kNotMeasured) : e.gptc_version) << " |\n";
  for (const auto& [package, version] : e.packages) out << "| " << Cell(package) << " | " << Cell(version) << " |\n";
  out << "| dtype | " << Cell(c.dtype) << " |\n"
      << "| Model | " << Cell(c.model_config.is_null() ? std::string(kNotMeasured) : c.model_config.dump()) << " |\n"
      << "| Trainer flags (every test) | " << Cell(c.trainer_flags.empty() ? "(none)" : ShellLine(c.trainer_flags))
      << (c.demo ? " (with --demo: the embedded demo's settings, flags above override them)" : "") << " |\n"
      << "| Ranks in Test 3 | " << c.nproc_per_node << " (--nproc_per_node) on " << e.cpu_cores << " cores |\n"
      << "| Warm-up steps excluded from timings | " << c.warmup_steps << " |\n"
      << "| Base dir | " << Cell(c.base_dir) << " |\n"
      << "| Compile cache (fresh for this run) | " << Cell(c.compile_cache_dir) << " |\n";
  if (c.planted_recompile) {
    out << "| Planted fault | --test_only_plant_recompile: the compiled tests ran with "
           "--test_only_force_recompile, so a recompilation is expected to be caught |\n";
  }
  out << "\n";
}

void FiguresSection(const ValidationReport& r, std::ostream& out) {
  out << "## Figures per test\n\n| |";
  for (const TestRun& t : r.tests) out << " " << Cell(t.title) << " |";
  out << "\n|---|";
  for (size_t i = 0; i < r.tests.size(); ++i) out << "---|";
  out << "\n";
  auto row = [&](const char* name, auto text) {
    out << "| " << name << " |";
    for (const TestRun& t : r.tests) out << " " << Cell(text(t)) << " |";
    out << "\n";
  };
  row("Status", [](const TestRun& t) { return std::string(t.passed() ? "✅ passed" : "❌ FAILED"); });
  row("Mode, ranks", [](const TestRun& t) {
    return absl::StrCat(t.role == TestRole::kEager ? "eager" : "compiled", ", ", t.world_size);
  });
  row("Device", [](const TestRun& t) {
    if (!t.summary || !t.summary->device) return std::string(kNotMeasured);
    return *t.summary->device;
  });
  row("Configured batch, packing", [](const TestRun& t) {
    if (!t.summary || !t.summary->batch_shape) return std::string(kNotMeasured);
    return absl::StrCat("[", (*t.summary->batch_shape)[0], ", ", (*t.summary->batch_shape)[1], "], ",
                        t.summary->packing.value_or("?"));
  });
  row("Threads per rank, collectives", [](const TestRun& t) {
    if (!t.summary || !t.summary->num_threads) return std::string(kNotMeasured);
    return absl::StrCat(*t.summary->num_threads, ", ", t.summary->backend.value_or("?"));
  });
  row("Steps (measured)", [](const TestRun& t) {
    return absl::StrCat(t.figures.steps, " (", t.figures.measured_steps, ")");
  });
  row("Batch shapes", [](const TestRun& t) { return ShapesText(t.figures); });
  // Test 2b trains one step to time the warm start; it has no step past the warm-up by design.
  auto timing = [](const TestRun& t, const std::optional<Spread>& s, double scale, int decimals, const char* unit) {
    if (!s && t.role == TestRole::kCompiledWarm) return std::string("n/a (a warm-start check, not timed)");
    return SpreadText(s, scale, decimals, unit);
  };
  row("Time/step, median", [&](const TestRun& t) { return timing(t, t.figures.seconds_per_step, 1e3, 1, " ms"); });
  row("Tokens/sec, median", [&](const TestRun& t) { return timing(t, t.figures.tokens_per_second, 1, 0, ""); });
  row("Supervised tokens/sec, median",
      [&](const TestRun& t) { return timing(t, t.figures.supervised_tokens_per_second, 1, 0, ""); });
  row("Training loss, first → last", [](const TestRun& t) {
    return t.figures.first_loss && t.figures.final_loss
               ? absl::StrCat(Loss(*t.figures.first_loss), " → ", Loss(*t.figures.final_loss))
               : std::string(kNotMeasured);
  });
  row("Last step's mean loss", [](const TestRun& t) { return Or(t.figures.final_loss_mean, Loss); });
  row("Validation loss (final)", [](const TestRun& t) { return Or(t.figures.val_loss, Loss); });
  row("Compile", CompileText);
  row("Artifact (cache key)", [](const TestRun& t) {
    return t.role == TestRole::kEager ? std::string("n/a") : Or(t.figures.artifact_key, [](const std::string& k) {
      return k;
    });
  });
  row("Recompilations, training / evaluation", [](const TestRun& t) {
    auto n = [](std::optional<int64_t> v) { return v ? absl::StrCat(*v) : std::string(kNotMeasured); };
    return absl::StrCat(n(t.figures.recompilations_training), " / ", n(t.figures.recompilations_evaluation));
  });
  row("Peak memory (RSS, max over ranks)", [](const TestRun& t) { return Or(t.figures.peak_rss_bytes, Bytes); });
  row("Checkpoint", CheckpointText);
  row("Wall time", [](const TestRun& t) { return absl::StrFormat("%.1f s", t.wall_seconds); });
  out << "\n";
}

// The second eager baseline: PyTorch eager running nanochat's model at the tests' config.
void TorchEagerSection(const ValidationReport& r, std::ostream& out) {
  const TorchEagerBaseline& t = r.torch_eager;
  out << "## Eager baselines\n\n"
      << "The speedup target is stated against both eager baselines: our interpreter (Test 1) and PyTorch eager "
         "running nanochat's model (`trainer/bench/pytorch_peer.py`, the system this report validates).\n\n";
  if (!t.measured) {
    out << "**PyTorch eager: not measured:** " << t.why_not << "\n\n";
    return;
  }
  out << "| PyTorch eager | |\n|---|---|\n"
      << "| torch | " << Cell(t.torch_version) << " (" << Cell(t.source) << ") |\n"
      << "| Micro-batch, micro-batches per step, threads, dtype | [" << t.batch << ", " << t.seq << "], " << t.grad_accum
      << ", " << t.threads << ", " << Cell(t.dtype) << " |\n"
      << "| Attention, kernels | " << Cell(t.attention) << "; " << Cell(t.kernels) << " |\n"
      << "| Time/step, median of " << t.steps << " (after " << t.warmup << " warm-up) | "
      << Or(t.seconds_per_step, [](double v) { return absl::StrFormat("%.1f ms", 1e3 * v); }) << " |\n"
      << "| Peak memory (RSS) | " << Or(t.peak_rss_bytes, Bytes) << " |\n\n"
      << "```\n" << ShellLine(t.command) << "\n```\n\n";
}

void PlotsSection(const ValidationReport& r, std::ostream& out) {
  out << "## Plots\n\n";
  if (!r.plots.made) {
    out << "**No plots:** " << r.plots.error << "\n\n";
    return;
  }
  for (const auto& [title, file] : r.plots.files) out << "### " << title << "\n\n![" << title << "](" << file << ")\n\n";
}

void TestsSection(const ValidationReport& r, std::ostream& out) {
  out << "## Tests: commands, outputs, errors\n\n";
  for (const TestRun& t : r.tests) {
    out << "### " << t.title << ": " << (t.passed() ? "passed" : "FAILED") << "\n\n"
        << "```\n" << ShellLine(t.command) << "\n```\n\n"
        << "Output (checkpoint, metrics.jsonl, run_summary.json): `" << t.output_dir << "`; log: `" << t.log_path
        << "`; exit status " << (t.ran ? (t.term_signal ? absl::StrCat("signal ", t.term_signal) : absl::StrCat(t.exit_code)) : std::string("not started"))
        << ".\n\n";
    if (!t.failures.empty()) {
      out << "Failed because:\n\n";
      for (const std::string& f : t.failures) out << "- " << f << "\n";
      out << "\n";
    }
    if (!t.passed() && !t.error_tail.empty()) out << "Error (end of stderr):\n\n```\n" << t.error_tail << "\n```\n\n";
  }
}

void DefinitionsSection(const ValidationReport& r, std::ostream& out) {
  const Thresholds& t = r.config.thresholds;
  out << "## Definitions\n\n"
      << "- **Tests.** One invocation, same data, seed and flags: Test 1 trains with the interpreter "
         "(`--compile=false`); Test 2 with the compiled step, its compile cache a fresh folder, so the compile is "
         "cold; Test 2b reruns Test 2's flags for one optimizer step (`--max_iterations=2`, the smallest evaluation: the step IR "
         "and so the artifact key do not depend on it) with the same cache, so "
         "it loads Test 2's artifact: its compile figure is the **warm** start; Test 3 is Test 2 on "
      << r.config.nproc_per_node
      << " ranks (`--nproc_per_node`), the same global batch per step (fewer micro-batches per rank).\n"
      << "- **Time/step, tokens/sec**: per optimizer step from metrics.jsonl, steps 0-" << r.config.warmup_steps - 1
      << " excluded; median, min/max and interquartile range (linear interpolation). Tokens are positions "
         "(B×T per micro-batch), supervised tokens those with a target.\n"
      << "- **Speedup**: an eager baseline's median time/step ÷ Test 2's; the baselines are Test 1 (our "
         "interpreter) and PyTorch eager running nanochat's model at the same model config, micro-batch shape, "
         "micro-batches per step, threads and dtype (optional: where no PyTorch can run, the report says so and "
         "the exit status ignores it).\n"
      << "- **Peak memory**: the peak resident set (ru_maxrss) of the trainer process, the largest over ranks.\n"
      << "- **Recompilations**: compilations of the step after it was made, counted by the trainer in training "
         "and in evaluation (evaluation runs on the interpreter).\n"
      << "- **Loss at the last step**: the mean loss over the last optimizer step's micro-batches (all ranks).\n"
      << "- **N ranks vs one rank**: each rank packs its own shard of the conversations (`r, r+W, …`), so the "
         "rows differ from the one-rank run's and the losses are close, not equal. Tolerances, relative: the "
         "mean loss of every 10-step window within "
      << absl::StrFormat("%g%%", 100 * t.max_ranks_step_loss_rel_diff) << ", the final validation loss within "
      << absl::StrFormat("%g%%", 100 * t.max_ranks_val_loss_rel_diff) << ".\n"
      << "- **Checkpoint**: each trainer saves its final checkpoint, loads it again, compares every byte with the "
         "weights in memory and recomputes the validation loss from the loaded weights; equal means equal bits.\n\n";
}

}  // namespace

std::string ShellLine(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789-_=./:,+@%") == std::string::npos;
    words.push_back(plain ? a : "'" + absl::StrReplaceAll(a, {{"'", "'\\''"}}) + "'");
  }
  return absl::StrJoin(words, " ");
}

std::string RenderMarkdown(const ValidationReport& r) {
  std::ostringstream out;
  out << "# Validation report\n\n"
      << "**" << r.verdict << "** (exit status " << r.exit_code << ")\n\n"
      << "- Created: " << r.created << "\n"
      << "- Run dir: `" << r.run_dir << "` (this file, validation_report.json with the same data and every "
         "per-step record, the plots, and one folder per test)\n"
      << "- Git commit: `" << r.git_commit << "` (" << r.git_note << ")\n"
      << "- Command:\n\n```\n" << ShellLine(r.validate_command) << "\n```\n\n";
  CriteriaSection(r, out);
  FiguresSection(r, out);
  TorchEagerSection(r, out);
  PlotsSection(r, out);
  EnvironmentSection(r, out);
  TestsSection(r, out);
  DefinitionsSection(r, out);
  return out.str();
}

}  // namespace gpt_sft::trainer::validation
