#include "trainer/validation/validation_report.h"

#include <tuple>

namespace gpt_sft::trainer::validation {

const char* RoleName(TestRole role) {
  switch (role) {
    case TestRole::kEager: return "eager";
    case TestRole::kCompiled: return "compiled";
    case TestRole::kCompiledWarm: return "compiled_warm";
    case TestRole::kCompiledRanks: return "compiled_ranks";
  }
  return "?";
}

std::optional<TestRole> RoleFromName(const std::string& name) {
  for (TestRole r : {TestRole::kEager, TestRole::kCompiled, TestRole::kCompiledWarm, TestRole::kCompiledRanks}) {
    if (name == RoleName(r)) return r;
  }
  return std::nullopt;
}

const char* KindName(CriterionKind kind) { return kind == CriterionKind::kCorrectness ? "correctness" : "target"; }

const char* StatusName(CriterionStatus status) {
  switch (status) {
    case CriterionStatus::kPass: return "pass";
    case CriterionStatus::kFail: return "fail";
    case CriterionStatus::kNotMeasured: return "not_measured";
  }
  return "?";
}

bool TestFigures::operator==(const TestFigures& o) const {
  return std::tie(steps, measured_steps, batch_shapes, seconds_per_step, tokens_per_second,
                  supervised_tokens_per_second, first_loss, final_loss, final_loss_mean, val_loss, cache_hit,
                  compile_seconds, artifact_key, recompilations_training, recompilations_evaluation,
                  peak_rss_bytes) ==
         std::tie(o.steps, o.measured_steps, o.batch_shapes, o.seconds_per_step, o.tokens_per_second,
                  o.supervised_tokens_per_second, o.first_loss, o.final_loss, o.final_loss_mean, o.val_loss,
                  o.cache_hit, o.compile_seconds, o.artifact_key, o.recompilations_training,
                  o.recompilations_evaluation, o.peak_rss_bytes);
}

bool TestRun::operator==(const TestRun& o) const {
  return std::tie(id, title, role, world_size, command, output_dir, log_path, ran, exit_code, term_signal,
                  wall_seconds, failures, error_tail, steps, summary, figures) ==
         std::tie(o.id, o.title, o.role, o.world_size, o.command, o.output_dir, o.log_path, o.ran, o.exit_code,
                  o.term_signal, o.wall_seconds, o.failures, o.error_tail, o.steps, o.summary, o.figures);
}

bool Criterion::operator==(const Criterion& o) const {
  return std::tie(id, title, kind, threshold, status, value, measured, tests, optional) ==
         std::tie(o.id, o.title, o.kind, o.threshold, o.status, o.value, o.measured, o.tests, o.optional);
}

bool TorchEagerBaseline::operator==(const TorchEagerBaseline& o) const {
  return std::tie(measured, why_not, python, source, torch_version, dtype, attention, kernels, command, batch, seq,
                  grad_accum, threads, warmup, steps, seconds_per_step, peak_rss_bytes) ==
         std::tie(o.measured, o.why_not, o.python, o.source, o.torch_version, o.dtype, o.attention, o.kernels,
                  o.command, o.batch, o.seq, o.grad_accum, o.threads, o.warmup, o.steps, o.seconds_per_step,
                  o.peak_rss_bytes);
}

bool Thresholds::operator==(const Thresholds& o) const {
  return std::tie(min_speedup, max_compile_seconds, max_memory_ratio, max_final_loss_rel_diff,
                  max_ranks_step_loss_rel_diff, max_ranks_val_loss_rel_diff) ==
         std::tie(o.min_speedup, o.max_compile_seconds, o.max_memory_ratio, o.max_final_loss_rel_diff,
                  o.max_ranks_step_loss_rel_diff, o.max_ranks_val_loss_rel_diff);
}

bool Environment::operator==(const Environment& o) const {
  return std::tie(hostname, cpu_model, cpu_cores, cpus_usable, gpu, os, cxx_compiler, gptc_version, packages) ==
         std::tie(o.hostname, o.cpu_model, o.cpu_cores, o.cpus_usable, o.gpu, o.os, o.cxx_compiler, o.gptc_version,
                  o.packages);
}

bool RunConfig::operator==(const RunConfig& o) const {
  return std::tie(trainer_flags, demo, nproc_per_node, warmup_steps, planted_recompile, base_dir,
                  compile_cache_dir, dtype, model_config, thresholds) ==
         std::tie(o.trainer_flags, o.demo, o.nproc_per_node, o.warmup_steps, o.planted_recompile, o.base_dir,
                  o.compile_cache_dir, o.dtype, o.model_config, o.thresholds);
}

bool PlotSet::operator==(const PlotSet& o) const {
  return std::tie(made, files, error) == std::tie(o.made, o.files, o.error);
}

const TestRun* ValidationReport::Find(TestRole role) const {
  for (const TestRun& t : tests) {
    if (t.role == role) return &t;
  }
  return nullptr;
}

bool ValidationReport::operator==(const ValidationReport& o) const {
  return std::tie(created, run_dir, validate_command, git_commit, git_note, environment, config, tests, torch_eager,
                  criteria, plots, exit_code, verdict) ==
         std::tie(o.created, o.run_dir, o.validate_command, o.git_commit, o.git_note, o.environment, o.config,
                  o.tests, o.torch_eager, o.criteria, o.plots, o.exit_code, o.verdict);
}

}  // namespace gpt_sft::trainer::validation
