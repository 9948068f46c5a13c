#include "trainer/validation/synthetic_report.h"

#include "absl/strings/str_cat.h"
#include "trainer/validation/criteria.h"
#include "trainer/validation/test_figures.h"

namespace gpt_sft::trainer::validation {

void Refigure(TestRun& test) { test.figures = ComputeFigures(test.steps, test.summary, /*warmup_steps=*/5); }

TestRun SyntheticTest(TestRole role, int steps, double seconds, double loss_slope) {
  TestRun t;
  const bool compiled = role != TestRole::kEager;
  t.role = role;
  t.id = role == TestRole::kEager ? "test1" : role == TestRole::kCompiled ? "test2"
                                           : role == TestRole::kCompiledWarm ? "test2b" : "test3";
  t.title = absl::StrCat("Synthetic ", RoleName(role));
  t.world_size = role == TestRole::kCompiledRanks ? 2 : 1;
  t.command = {"/bin/trainer", absl::StrCat("--compile=", compiled ? "true" : "false")};
  t.output_dir = "/runs/" + t.id;
  t.log_path = t.output_dir + "/trainer.log";
  t.ran = true;
  t.exit_code = 0;
  t.wall_seconds = steps * seconds + 1;
  for (int i = 0; i < steps; ++i) {
    StepMetrics m;
    m.step = i;
    m.loss = 8 - loss_slope * i + 0.01 * (i % 2);
    m.loss_mean = 8 - loss_slope * i;
    m.step_seconds = seconds * (1 + 0.01 * (i % 3));
    m.tokens = 8192;
    m.supervised_tokens = 4096;
    m.tokens_per_second = m.tokens / m.step_seconds;
    m.supervised_tokens_per_second = m.supervised_tokens / m.step_seconds;
    m.peak_rss_bytes = (compiled ? 900 : 1000) * int64_t{1048576} + i;
    m.batch_shapes = {{4, 512}};
    m.world_size = t.world_size;
    m.mode = compiled ? "compiled" : "eager";
    if (compiled) m.recompilations = 0;
    t.steps.push_back(m);
  }
  RunSummary s;
  s.mode = compiled ? "compiled" : "eager";
  s.world_size = t.world_size;
  s.backend = t.world_size > 1 ? "mpi" : "single";
  s.num_threads = 1;
  s.batch_shape = BatchShape{4, 512};
  s.packing = "bestfit";
  s.steps_trained = steps;
  s.first_loss = t.steps.front().loss;
  s.final_loss = t.steps.back().loss;
  s.final_loss_mean = t.steps.back().loss_mean;
  s.val_loss = 8 - loss_slope * steps;
  if (compiled) {
    CompileSummary c;
    c.cache_hit = role == TestRole::kCompiledWarm;
    c.seconds = c.cache_hit ? 0.01 : 0.5;
    c.compile_seconds = 0.5;
    c.key = role == TestRole::kCompiledRanks ? "00000000000000b2" : "00000000000000a1";
    c.arena_bytes = 64 << 20;
    s.compile = c;
  }
  s.recompilations_training = 0;
  s.recompilations_evaluation = 0;
  s.peak_rss_bytes = t.steps.back().peak_rss_bytes;
  s.tokens_per_second = 8192 / seconds;
  s.seconds_per_step = seconds;
  CheckpointSummary k;
  k.model_path = absl::StrCat(t.output_dir, "/model_", steps, ".safetensors");
  k.step = steps;
  k.verified = true;
  k.reload_bit_exact = true;
  k.val_loss_saved = s.val_loss;
  k.val_loss_reloaded = s.val_loss;
  s.checkpoint = k;
  t.summary = s;
  Refigure(t);
  return t;
}

std::vector<TestRun> SyntheticTests() {
  return {SyntheticTest(TestRole::kEager, 8, 0.3), SyntheticTest(TestRole::kCompiled, 8, 0.2),
          SyntheticTest(TestRole::kCompiledWarm, 1, 0.2), SyntheticTest(TestRole::kCompiledRanks, 8, 0.15)};
}

TorchEagerBaseline SyntheticTorchEager() {
  TorchEagerBaseline t;
  t.measured = true;
  t.python = "/cache/torch-peer-2.15.0/bin/python";
  t.source = "torch 2.15.0 from PyPI";
  t.torch_version = "2.15.0+cu132";
  t.dtype = "float32";
  t.attention = "scaled_dot_product_attention";
  t.kernels = "matmul: MKL SGEMM (AMX)";
  t.command = {t.python, "pytorch_peer.py", "--batch=4", "--seq=512"};
  t.batch = 4;
  t.seq = 512;
  t.threads = 2;
  t.warmup = 1;
  t.steps = 3;
  t.seconds_per_step = 0.45;
  t.peak_rss_bytes = int64_t{900} << 20;
  return t;
}

ValidationReport SyntheticReport() {
  ValidationReport r;
  r.created = "2026-12-03T10:00:00";
  r.run_dir = "/runs";
  r.validate_command = {"/bin/validate", "--demo", "--max_iterations=9"};
  r.git_commit = "0123456789abcdef0123456789abcdef01234567";
  r.git_note = "git rev-parse HEAD in /src";
  r.environment.hostname = "box";
  r.environment.cpu_model = "Synthetic CPU @ 3 GHz";
  r.environment.cpu_cores = 2;
  r.environment.cpus_usable = 2;
  r.environment.gpu = "none";
  r.environment.os = "Debian GNU/Linux 12 (bookworm), Linux 6.1";
  r.environment.cxx_compiler = "gcc 12.2.0";
  r.environment.gptc_version = "gptc-5.1";
  r.environment.packages = {{"llvm-19-dev", "1:19.1.7-3~deb12u1"}, {"libopenblas0-pthread", "0.3.21+ds-4"}};
  r.config.trainer_flags = {"--max_iterations=9"};
  r.config.demo = true;
  r.config.base_dir = "/base";
  r.config.compile_cache_dir = "/runs/compile_cache";
  r.config.dtype = "float32";
  r.config.model_config = base::Json{{"n_layer", 2}, {"n_embd", 128}};
  r.tests = SyntheticTests();
  r.torch_eager = SyntheticTorchEager();
  r.criteria = EvaluateCriteria(r.tests, r.config.thresholds, r.torch_eager);
  ChargeFailures(r.criteria, r.tests);
  r.plots.made = true;
  r.plots.files = {{"Training loss per step", "loss.png"}};
  r.exit_code = ExitCode(r.tests, r.criteria, false);
  r.verdict = Verdict(r.tests, r.criteria, false);
  return r;
}

}  // namespace gpt_sft::trainer::validation
