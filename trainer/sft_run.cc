#include "trainer/sft_run.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "data/collate/loader.h"
#include "data/pipeline/sft_mixture.h"
#include "data/pipeline/task_source.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/batch_tensors.h"
#include "trainer/demo_setup.h"
#include "trainer/eval/validation_loss.h"
#include "trainer/sft_evaluation.h"
#include "trainer/compiled_step.h"
#include "trainer/eager_step.h"
#include "compiler/codegen/step_compiler.h"
#include "trainer/metrics_log.h"
#include "trainer/runfiles.h"
#include "trainer/throughput_meter.h"

namespace gpt_sft::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

/// 1234567 -> "1,234,567" (Python's {:,}).
std::string WithCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

struct Setup {
  std::string base_dir;
  std::shared_ptr<const data::Tokenizer> tokenizer;
  runtime::ResolvedCheckpoint source;
  std::unique_ptr<runtime::ParamStore> params;
  std::shared_ptr<const data::TaskMixture> train, val;
  std::string words_path;
};

absl::StatusOr<Setup> Load(const TrainerOptions& o, std::ostream& log) {
  Setup s;
  if (o.base_dir.empty()) {
    absl::StatusOr<std::string> dir = runtime::NanochatBaseDir();
    if (!dir.ok()) return dir.status();
    s.base_dir = *dir;
  } else {
    s.base_dir = o.base_dir;
  }
  const std::string tokenizer_path = TokenizerPath(s.base_dir);
  absl::StatusOr<data::Tokenizer> tok = data::Tokenizer::Load(tokenizer_path);
  if (!tok.ok()) {
    return absl::Status(tok.status().code(),
                        absl::StrCat("--base_dir=", s.base_dir, ": no usable tokenizer (", tok.status().message(),
                                     "); run `./bazelw run //trainer` with no flags once to set up the demo, or "
                                     "train one with //data:tok_train --output=",
                                     tokenizer_path));
  }
  s.tokenizer = std::make_shared<const data::Tokenizer>(*std::move(tok));
  const runtime::CheckpointSource source =
      o.model_source == "mid" ? runtime::CheckpointSource::kMid : runtime::CheckpointSource::kBase;
  absl::StatusOr<runtime::ResolvedCheckpoint> where = runtime::ResolveCheckpoint(s.base_dir, source, o.model_tag, o.step);
  if (!where.ok()) {
    return absl::Status(where.status().code(), absl::StrCat("--model_source=", o.model_source, ": ",
                                                            where.status().message()));
  }
  s.source = *where;
  log << "Loading the " << o.model_source << " model from " << s.source.model_path << std::endl;
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(s.source);
  if (!loaded.ok()) return loaded.status();
  s.params = std::make_unique<runtime::ParamStore>(std::move(loaded->params));
  if (s.params->config().vocab_size != s.tokenizer->vocab_size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tokenizer at ", tokenizer_path, " has ", s.tokenizer->vocab_size(), " tokens but the model at ",
        s.source.model_path, " has vocab_size ", s.params->config().vocab_size, "; they must match"));
  }
  absl::StatusOr<std::string> words = FindRunfile("external/wordlist/words");
  if (!words.ok()) return words.status();
  s.words_path = *words;
  data::SftMixtureOptions train;
  train.words_path = *words;
  train.seed = o.seed;
  absl::StatusOr<std::shared_ptr<const data::TaskMixture>> mix = data::BuildSftMixture(train);
  if (!mix.ok()) return mix.status();
  s.train = *mix;
  data::SftMixtureOptions val = train;
  val.test_split = true;  // the spelling tasks' test seeds, synthetic problems from seed + 1
  mix = data::BuildSftMixture(val);
  if (!mix.ok()) return mix.status();
  s.val = *mix;
  return s;
}

compiler::StepConfig StepConfigFor(const TrainerOptions& o, const compiler::ModelConfig& model) {
  compiler::StepConfig c;
  c.model = model;
  c.batch_size = o.device_batch_size;
  c.seq_len = o.max_seq_len;
  c.packed = o.packing == "bestfit";
  c.grad_accum_steps = o.GradAccumSteps();
  c.optimizer.unembedding_lr = o.unembedding_lr;
  c.optimizer.embedding_lr = o.embedding_lr;
  c.optimizer.matrix_lr = o.matrix_lr;
  c.optimizer.weight_decay = o.weight_decay;
  c.optimizer.init_lr_frac = o.init_lr_frac;
  return c;
}

data::LoaderOptions LoaderOptionsFor(const TrainerOptions& o, const data::Tokenizer& tok) {
  data::LoaderOptions l;
  l.B = o.device_batch_size;
  l.T = o.max_seq_len;
  l.packing = o.packing == "bestfit" ? data::Packing::kBestFit : data::Packing::kPad;
  l.rank = o.rank;
  l.world_size = o.world_size;
  l.pad_id = tok.SpecialId(data::SpecialToken::kAssistantEnd);
  return l;
}

/// nanochat rebuilds the validation loader at every evaluation, so it always sees the same
/// first batches.
absl::StatusOr<double> MeanValidationLoss(EagerStep& step, const data::ConversationSource& val,
                                          const data::LoaderOptions& options, int eval_steps) {
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> loader = data::BatchLoader::Create(&val, options);
  if (!loader.ok()) return loader.status();
  absl::StatusOr<ValidationLossResult> result = ValidationLoss(step, LoaderSource(loader->get()), eval_steps);
  if (!result.ok()) return result.status();
  return result->mean_loss;
}

}  // namespace

absl::StatusOr<SftResult> RunSft(const TrainerOptions& o, std::ostream& log) {
  const bool leader = o.rank == 0;
  absl::StatusOr<Setup> setup = Load(o, log);
  if (!setup.ok()) return setup.status();
  const compiler::ModelConfig& model = setup->params->config();
  const compiler::StepConfig config = StepConfigFor(o, model);
  if (absl::Status s = config.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--max_seq_len=", o.max_seq_len, ": ", s.message()));
  }
  const int accum = o.GradAccumSteps();
  if (leader) {
    log << "Target examples per step: " << o.target_examples_per_step << "\n"
        << "Device batch size: " << o.device_batch_size << "\n"
        << "Examples per step is device_batch_size * ddp_world_size: " << o.device_batch_size * o.world_size << "\n"
        << "=> Setting grad accum steps: " << accum << "\n"
        << absl::StrFormat("Scaling the LR for the AdamW parameters ∝1/√(%d/768) = %.6f\n", model.n_embd,
                           std::pow(model.n_embd / 768.0, -0.5));
  }

  // The interpreter's step: training with --compile=false, and evaluation always (nanochat
  // evaluates orig_model, the uncompiled view of the same weights).
  runtime::InterpreterOptions interpreter;
  interpreter.num_threads = o.num_threads;
  const auto build_start = Clock::now();
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, setup->params.get(), interpreter);
  if (!step.ok()) return step.status();
  double build_seconds = Seconds(build_start);
  std::unique_ptr<CompiledStep> compiled;
  int64_t compilations_at_start = 0;
  if (o.compile) {
    CompiledStepOptions options;
    options.cache_dir = setup->base_dir + "/compile_cache";
    options.num_threads = o.num_threads;
    absl::StatusOr<std::unique_ptr<CompiledStep>> made = CompiledStep::Create(config, setup->params.get(), options);
    if (!made.ok()) return made.status();
    compiled = *std::move(made);
    compilations_at_start = compiler::StepCompilations();
    const CompileReport& r = compiled->compile_report();
    build_seconds = r.seconds;
    if (leader) {
      log << "[VALIDATION] ✓ Model is compiled (static batch [" << config.batch_size << ", " << config.seq_len
          << "]; artifact " << r.key << ", "
          << (r.cache_hit ? absl::StrFormat("loaded from the compile cache in %.3f s (compiled earlier in %.2f s)",
                                            r.seconds, r.compile_seconds)
                          : absl::StrFormat("compiled in %.2f s", r.seconds))
          << "; arena " << absl::StrFormat("%.1f MiB", r.arena_bytes / 1048576.0) << ", " << r.launches
          << " launches per micro-step, " << r.kernels << " fusion kernels)" << std::endl;
      if (!r.cache_note.empty()) log << "compile cache: " << r.cache_note << std::endl;
    }
  } else if (leader) {
    log << "[VALIDATION] ✗ Model is NOT compiled (running in eager mode)" << std::endl;
  }
  auto micro_step = [&](const StepBatch& batch) {
    return compiled ? compiled->MicroStep(batch) : (*step)->MicroStep(batch);
  };
  auto optimizer_step = [&](double lrm) {
    return compiled ? compiled->OptimizerStep(lrm) : (*step)->OptimizerStep(lrm);
  };

  data::TaskSource train_source(setup->train, setup->tokenizer, 4 * (o.max_seq_len + 1));
  data::TaskSource val_source(setup->val, setup->tokenizer, 4 * (o.max_seq_len + 1));
  const data::LoaderOptions loader_options = LoaderOptionsFor(o, *setup->tokenizer);
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> train = data::BatchLoader::Create(&train_source, loader_options);
  if (!train.ok()) return train.status();
  int64_t num_iterations = setup->train->size() / o.target_examples_per_step;
  if (o.max_iterations >= 0 && o.max_iterations < num_iterations) num_iterations = o.max_iterations;
  if (num_iterations < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max_iterations=", o.max_iterations,
                                                   " leaves no step to run (at least 1 is needed)"));
  }
  if (leader) {
    log << "Training rows: " << setup->train->size() << "; number of iterations: " << num_iterations
        << "; step IR built and differentiated in " << absl::StrFormat("%.2f", build_seconds) << " s" << std::endl;
  }

  std::string out_dir = absl::StrCat(setup->base_dir, "/", runtime::CheckpointDirName(runtime::CheckpointSource::kSft),
                                     "/d", model.n_layer);
  std::unique_ptr<MetricsLog> metrics;
  if (leader) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return absl::UnavailableError("cannot create the run directory " + out_dir + ": " + ec.message());
    absl::StatusOr<std::unique_ptr<MetricsLog>> opened = MetricsLog::Open(out_dir + "/metrics.jsonl");
    if (!opened.ok()) return opened.status();
    metrics = std::move(*opened);
  }

  absl::StatusOr<std::unique_ptr<SftEvaluation>> evaluation =
      SftEvaluation::Create(setup->params.get(), setup->tokenizer.get(), setup->words_path, o.eval_metrics_max_problems,
                            o.seed, o.num_threads);
  if (!evaluation.ok()) return evaluation.status();
  std::vector<std::pair<std::string, double>> metrics_now;

  SftResult result;
  ThroughputMeter meter;
  const int64_t run_id = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  double val_loss = std::nan("");
  for (int64_t it = 0; it < num_iterations; ++it) {
    const bool last_step = it == num_iterations - 1;
    if (last_step || it % o.eval_every == 0) {
      absl::StatusOr<double> v = MeanValidationLoss(**step, val_source, loader_options, o.eval_steps);
      if (!v.ok()) return v.status();
      val_loss = *v;
      if (leader) log << absl::StrFormat("Step %05d | Validation loss: %.6f", it, val_loss) << std::endl;
    }
    if (last_step || (it > 0 && it % o.eval_metrics_every == 0)) {
      absl::StatusOr<std::vector<std::pair<std::string, double>>> m = (*evaluation)->Run();
      if (!m.ok()) return m.status();
      metrics_now = *m;
      if (leader) log << FormatMetricsLine(it, metrics_now) << std::endl;
    }
    if (last_step) break;  // nanochat evaluates at the last iteration but does not train on it

    const auto start = Clock::now();
    double loss = 0;
    int64_t supervised = 0, positions = 0;
    for (int m = 0; m < accum; ++m) {
      absl::StatusOr<data::Batch> batch = (*train)->Next();
      if (!batch.ok()) return batch.status();
      if (leader && it < 3 && m == 0) {
        log << "[VALIDATION] Step " << it << " batch shape: inputs [" << batch->B << ", " << batch->T << "], targets ["
            << batch->B << ", " << batch->T << "] (static: every micro-batch is [" << o.device_batch_size << ", "
            << o.max_seq_len << "])" << std::endl;
      }
      absl::StatusOr<double> micro = micro_step(ToStepBatch(*batch, config.packed));
      if (!micro.ok()) return micro.status();
      loss = *micro;  // nanochat logs the last micro-batch's loss
      supervised += batch->supervised_tokens;
      positions += batch->NumPositions();
    }
    const double lrm = 1.0 - double(it) / num_iterations;
    if (absl::Status s = optimizer_step(lrm); !s.ok()) return s;
    const double seconds = Seconds(start);
    meter.AddStep(seconds, positions, supervised);
    if (it == 0) result.first_loss = loss;
    result.final_loss = loss;
    ++result.steps_trained;
    if (!leader) continue;
    log << absl::StrFormat("Step %05d/%05d | Training loss: %.6f| lrm: %.6f| num_tokens: %s", it, num_iterations,
                           loss, lrm, WithCommas(supervised))
        << std::endl;
    if ((it + 1) % 10 == 0 && meter.measured_steps() > 0) {
      log << absl::StrFormat("[VALIDATION] Step %d | avg time/step: %.1f ms | tokens/sec: %.0f | supervised "
                             "tokens/sec: %.0f (steps 0-4 excluded)",
                             it, 1e3 * meter.SecondsPerStep(), meter.TokensPerSecond(),
                             meter.SupervisedTokensPerSecond())
          << std::endl;
    }
    StepRecord record;
    record.run = run_id;
    record.step = it;
    record.loss = loss;
    record.lr_multiplier = lrm;
    record.tokens = positions;
    record.supervised_tokens = supervised;
    record.padding_fraction = positions ? 1.0 - double(supervised) / positions : 0;
    record.step_seconds = seconds;
    record.tokens_per_second = positions / seconds;
    record.supervised_tokens_per_second = supervised / seconds;
    record.peak_rss_bytes = ThroughputMeter::PeakRssBytes();
    if (absl::Status s = metrics->Append(record); !s.ok()) return s;
  }
  result.val_loss = val_loss;
  // Anything compiled after the step was made is a recompilation (the executable refuses
  // other shapes instead, so this stays 0; the report checks it rather than assuming it).
  const int64_t recompilations = compiled ? compiler::StepCompilations() - compilations_at_start : 0;
  result.recompilations = recompilations;

  if (leader) {
    runtime::CheckpointRecord record;
    record.step = num_iterations - 1;
    if (std::isfinite(val_loss)) record.val_loss = val_loss;
    record.metrics = metrics_now;
    absl::StatusOr<runtime::ResolvedCheckpoint> saved = runtime::SaveCheckpoint(out_dir, *setup->params, record);
    if (!saved.ok()) return saved.status();
    result.checkpoint_dir = out_dir;
    result.checkpoint_step = record.step;
    log << "Saved the model to " << saved->model_path << " and " << saved->meta_path << "\n";
    log << "[VALIDATION] Summary: " << (o.compile ? "compiled" : "eager (interpreter)") << " | steps "
        << result.steps_trained << " | tokens/sec "
        << absl::StrFormat("%.0f", meter.TokensPerSecond()) << " | supervised tokens/sec "
        << absl::StrFormat("%.0f", meter.SupervisedTokensPerSecond()) << " | time/step "
        << absl::StrFormat("%.1f ms", 1e3 * meter.SecondsPerStep()) << " (steps 0-4 excluded"
        << (meter.measured_steps() == 0 ? "; fewer than 6 steps ran, so none measured" : "") << ") | final loss "
        << absl::StrFormat("%.6f", result.final_loss) << " | compile time "
        << (o.compile ? absl::StrFormat("%.2f s", build_seconds) : std::string("n/a (eager)"))
        << " | recompilations " << recompilations << " (training), 0 (evaluation: the interpreter) | peak memory " << absl::StrFormat("%.2f GB RSS", ThroughputMeter::PeakRssBytes() / 1e9)
        << std::endl;
  }
  return result;
}

}  // namespace gpt_sft::trainer
