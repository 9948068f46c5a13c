#include "trainer/loop/sft_run.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/cpu_isa.h"
#include "base/with_commas.h"
#include "data/collate/loader.h"
#include "data/pipeline/task_source.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/interpreter/communicator_collectives.h"
#include "trainer/batch_tensors.h"
#include "trainer/eval/evaluation_progress.h"
#include "trainer/generation/chat_model.h"
#include "trainer/loop/sft_evaluation.h"
#include "trainer/train_step.h"
#include "trainer/eager_step.h"
#include "trainer/loop/finite_guards.h"
#include "trainer/loop/rank_reductions.h"
#include "trainer/loop/sft_setup.h"
#include "trainer/loop/sft_steps.h"
#include "trainer/loop/sft_validation.h"
#include "trainer/report/metrics_log.h"
#include "trainer/run_dir/param_checksum.h"
#include "trainer/report/run_summary.h"
#include "trainer/run_dir/resume_state.h"
#include "trainer/run_dir/run_directory.h"
#include "trainer/launch/stop_signal.h"
#include "trainer/report/throughput_meter.h"

namespace gpt_sft::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

/// One chat-SFT run, from its options to its result: the phases RunSft calls in order, each
/// leaving what the later ones use. Rank 0 logs and writes; every rank runs every phase.
class SftRun {
 public:
  SftRun(const TrainerOptions& o, std::ostream& log, runtime::collectives::Communicator& world)
      : o_(o), log_(log), world_(world), leader_(o.rank == 0) {}

  /// The base model, tokenizer and data; the run's length; flags that cannot work (before any file).
  absl::Status Load();
  /// The locked run directory: --resume takes its latest step, a fresh run refuses another
  /// run's directory (or moves it aside: --overwrite).
  absl::Status OpenRunDirectory();
  /// The interpreter's step (evaluation, and training with --compile=false) and the compiled one.
  absl::Status MakeSteps();
  /// The training loader (at the resumed position), the metrics log, the evaluations.
  absl::Status OpenData();

  /// 0, or the stop signal every rank agreed on: the step is saved and the run ends (result()).
  absl::StatusOr<int> StopIfAsked(int64_t it);
  /// The validation loss and the metrics, when due at `it`.
  absl::Status Evaluate(int64_t it);
  /// The step directory of `it` every --save_every steps.
  absl::Status SaveIfDue(int64_t it);
  /// Step `it`: the micro-batches, the finite checks, the update, the log line and record.
  absl::Status Train(int64_t it);
  /// The final checkpoint (verified), the run summary and its [VALIDATION] line.
  absl::StatusOr<SftResult> Finish();

  int64_t first_iteration() const { return first_iteration_; }
  int64_t num_iterations() const { return num_iterations_; }
  const SftResult& result() const { return result_; }

 private:
  /// A step of the run as a step directory (see SaveStep's body).
  absl::StatusOr<runtime::ResolvedCheckpoint> SaveStep(int64_t step,
                                                       const std::vector<std::pair<std::string, double>>& step_metrics);
  /// Evaluation runs on the interpreter while a compiled step sits idle, so one working set is
  /// resident at a time, not two: the step gives its scratch back before (and brings its
  /// weights home), the interpreter its cached blocks after. An eager run keeps its cache: it
  /// is the training step's own working set.
  void EndEvaluation();

  const TrainerOptions& o_;
  std::ostream& log_;
  runtime::collectives::Communicator& world_;
  const bool leader_;

  std::optional<SftSetup> setup_;
  int64_t num_iterations_ = 0;
  int eval_steps_per_rank_ = 1;
  std::string out_dir_;
  RunShape run_shape_;
  std::unique_ptr<RunDirectory> run_dir_;
  std::optional<LoadedRunStep> resumed_;

  compiler::StepConfig config_;
  int accum_ = 1;
  runtime::InterpreterOptions interpreter_;
  std::unique_ptr<EagerStep> eager_;
  std::unique_ptr<TrainStep> compiled_;
  TrainStep* training_ = nullptr;  // compiled_ or eager_
  RunSummary summary_;
  double build_seconds_ = 0;
  int64_t first_iteration_ = 0;

  std::unique_ptr<data::TaskSource> train_source_, val_source_;
  data::LoaderOptions loader_options_;
  std::unique_ptr<data::BatchLoader> train_;
  int64_t micro_batches_ = 0;  // this rank's micro-batches drawn so far
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<SftEvaluation> evaluation_;
  std::unique_ptr<EvaluationProgressLog> eval_progress_log_;
  EvaluationProgress eval_progress_;

  SftResult result_;
  ThroughputMeter meter_;
  int64_t run_id_ = 0;
  double val_loss_ = std::nan("");
  int64_t val_loss_step_ = -1;
  double final_loss_mean_ = 0;
  std::vector<std::pair<std::string, double>> metrics_now_;
  bool evaluated_metrics_ = false;  // at the current iteration
};

absl::Status SftRun::Load() {
  absl::StatusOr<SftSetup> loaded = LoadSftSetup(o_, log_);
  if (!loaded.ok()) return loaded.status();
  setup_.emplace(*std::move(loaded));
  // Every rank loaded the same file; a rank that read other bytes would train a different
  // model and average gradients that do not belong together.
  if (absl::Status s = VerifyParamsIdenticalAcrossRanks(*setup_->params, world_); !s.ok()) return s;
  num_iterations_ = setup_->train->size() / o_.target_examples_per_step;
  if (o_.max_iterations >= 0 && o_.max_iterations < num_iterations_) num_iterations_ = o_.max_iterations;
  // The last iteration only evaluates (as nanochat's): fewer than 2 would save an untrained model.
  if (num_iterations_ < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run would take no optimizer step: the training data has ", setup_->train->size(),
        " rows for --target_examples_per_step=", o_.target_examples_per_step, " per step, ", num_iterations_,
        " iteration(s), and the last one only evaluates (more data, --jsonl_repeat or a smaller "
        "--target_examples_per_step make steps)"));
  }
  eval_steps_per_rank_ = std::max(1, o_.eval_steps / o_.world_size);
  // (A resumed run passed this when it started; a changed --max_seq_len is the resume's error.)
  if (!o_.resume) {
    if (absl::Status s = CheckSequencesHoldTargets(o_, *setup_, num_iterations_, eval_steps_per_rank_); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SftRun::OpenRunDirectory() {
  // The run directory: checked, created and locked by rank 0 before any work, so a bad path or a
  // second run into it fails now, not after compiling. --resume takes its latest step's weights.
  out_dir_ =
      !o_.output_dir.empty()
          ? o_.output_dir
          : absl::StrCat(setup_->base_dir, "/", runtime::CheckpointDirName(runtime::CheckpointSource::kSft), "/d",
                         setup_->params->config().n_layer);
  run_shape_ = RunShapeOf(o_, setup_->params->config(), num_iterations_, setup_->train->size());
  if (leader_) {
    absl::StatusOr<std::unique_ptr<RunDirectory>> opened = RunDirectory::Open(
        out_dir_, o_.output_dir.empty() ? absl::StrCat("--base_dir=", setup_->base_dir, ": the run directory ", out_dir_)
                                      : "--output_dir=" + out_dir_);
    if (!opened.ok()) return opened.status();
    run_dir_ = *std::move(opened);
    for (const std::string& name : run_dir_->removed_temps()) {
      log_ << "[run dir] removed " << out_dir_ << "/" << name << ", left by a process that is gone" << std::endl;
    }
  }
  if (o_.resume) {
    absl::StatusOr<LoadedRunStep> loaded = LoadStepToResume(out_dir_, run_shape_);
    if (!loaded.ok()) return loaded.status();
    // A finished run has nothing left to train (--max_iterations is part of its shape): resuming
    // it would only rewrite its summary, so it is refused and nothing changes.
    if (loaded->resume.step >= num_iterations_ - 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--resume: the run in ", out_dir_, " is finished: ", loaded->dir, " is its last step (", num_iterations_,
          " iterations, the last of which only evaluates); nothing is left to train and nothing was changed. "
          "Start a new run in another --output_dir, or here with --overwrite"));
    }
    setup_->params = std::make_unique<runtime::ParamStore>(std::move(loaded->params));
    resumed_ = *std::move(loaded);
    if (absl::Status s = VerifyParamsIdenticalAcrossRanks(*setup_->params, world_); !s.ok()) return s;
    if (leader_) log_ << "[resume] continuing the run from " << resumed_->dir << std::endl;
  } else if (leader_) {
    // A directory belongs to one run: a fresh start beside another run's steps or records would
    // replace some of its steps and mix the two in metrics.jsonl.
    if (const std::optional<RunDirectory::EarlierRun> earlier = run_dir_->FindEarlierRun()) {
      const std::string what = absl::StrCat(
          earlier->run_id ? absl::StrCat("run ", *earlier->run_id) : std::string("a run"),
          earlier->last_step ? absl::StrCat(", saved up to step ", *earlier->last_step) : std::string(", no step saved"),
          ", ", earlier->records, " metrics record(s)");
      if (!o_.overwrite) {
        return absl::FailedPreconditionError(absl::StrCat(
            o_.output_dir.empty() ? absl::StrCat("--base_dir=", setup_->base_dir, ": the run directory ", out_dir_)
                                 : "--output_dir=" + out_dir_,
            " holds another run (", what, "). Continue it with --resume, or start this run in a new --output_dir; "
            "--overwrite starts afresh here after moving that run's files aside (nothing is deleted)"));
      }
      absl::StatusOr<std::string> aside = run_dir_->MoveEntriesAside();
      if (!aside.ok()) return aside.status();
      log_ << "[run dir] --overwrite: moved the earlier run (" << what << ") to " << *aside << std::endl;
    }
  }
  return absl::OkStatus();
}

absl::Status SftRun::MakeSteps() {
  const compiler::ModelConfig& model = setup_->params->config();
  config_ = StepConfigFor(o_, model);
  if (absl::Status s = config_.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--max_seq_len=", o_.max_seq_len, ": ", s.message()));
  }
  accum_ = o_.GradAccumSteps();
  // --eval_steps counts batches over all ranks (each rank takes its share of them), so the
  // validation loss is over the same rows whatever the world size and N-rank runs compare
  // with one-rank runs. nanochat's chat_sft runs eval_steps of its own shard on every rank.
  if (leader_) {
    log_ << "Target examples per step: " << o_.target_examples_per_step << "\n"
        << "Device batch size: " << o_.device_batch_size << "\n"
        << "Examples per step is device_batch_size * ddp_world_size: " << o_.device_batch_size * o_.world_size << "\n"
        << "=> Setting grad accum steps: " << accum_ << "\n"
        << absl::StrFormat("Scaling the LR for the AdamW parameters ∝1/√(%d/768) = %.6f\n", model.n_embd,
                           std::pow(model.n_embd / 768.0, -0.5));
    if (o_.world_size > 1) {
      log_ << "[ranks] " << o_.world_size << " data-parallel ranks (" << world_.backend() << "), "
          << (o_.num_threads > 0 ? std::to_string(o_.num_threads) : std::string("every")) << " thread(s) each" << std::endl;
    }
  }

  // The interpreter's step: training with --compile=false, and evaluation always (nanochat
  // evaluates orig_model, the uncompiled view of the same weights).
  interpreter_.num_threads = o_.num_threads;
  if (o_.world_size > 1) interpreter_.collectives = std::make_shared<runtime::CommunicatorCollectives>(world_);
  const auto build_start = Clock::now();
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config_, setup_->params.get(), interpreter_);
  if (!step.ok()) return step.status();
  eager_ = *std::move(step);
  build_seconds_ = Seconds(build_start);
  // The training step: the interpreter's own (eager) or the step compiled for --device. The
  // loop below runs either through TrainStep alone.
  if (o_.compile) {
    absl::StatusOr<std::unique_ptr<TrainStep>> made =
        MakeCompiledStep(o_, config_, setup_->params.get(), world_, setup_->base_dir);
    if (!made.ok()) return made.status();
    compiled_ = *std::move(made);
    summary_.compile = compiled_->Compilation();
    build_seconds_ = summary_.compile->seconds;
  }
  training_ = compiled_ ? compiled_.get() : static_cast<TrainStep*>(eager_.get());
  first_iteration_ = resumed_ ? resumed_->resume.step : 0;
  if (resumed_) {
    if (absl::Status s = training_->ImportOptimizerState(resumed_->optimizer); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(resumed_->dir, ": ", s.message()));
    }
  }
  if (leader_) log_ << training_->ValidationLine() << std::endl;
  return absl::OkStatus();
}

absl::Status SftRun::OpenData() {
  train_source_ = std::make_unique<data::TaskSource>(setup_->train, setup_->tokenizer, 4 * (o_.max_seq_len + 1));
  val_source_ = std::make_unique<data::TaskSource>(setup_->val, setup_->tokenizer, 4 * (o_.max_seq_len + 1));
  loader_options_ = LoaderOptionsFor(o_, *setup_->tokenizer);
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> loader = data::BatchLoader::Create(train_source_.get(), loader_options_);
  if (!loader.ok()) return loader.status();
  train_ = *std::move(loader);
  // The data position: the pipeline is deterministic, so the resumed loader regenerates the
  // micro-batches this rank had used and discards them.
  if (resumed_) {
    const auto skip_start = Clock::now();
    for (; micro_batches_ < resumed_->resume.micro_batches; ++micro_batches_) {
      if (absl::StatusOr<data::Batch> skipped = train_->Next(); !skipped.ok()) return skipped.status();
    }
    if (leader_) {
      log_ << absl::StrFormat("[resume] step %d: skipped the %d micro-batches each rank had trained on in %.2f s",
                             first_iteration_, micro_batches_, Seconds(skip_start))
          << std::endl;
    }
  }
  if (leader_) {
    log_ << "Training rows: " << setup_->train->size() << "; number of iterations: " << num_iterations_
        << "; step IR built and differentiated in " << absl::StrFormat("%.2f", build_seconds_) << " s" << std::endl;
  }

  if (leader_) {
    const std::string metrics_path = out_dir_ + "/metrics.jsonl";
    // A resumed run's log holds the records of the steps before its checkpoint, no later ones.
    if (resumed_) {
      if (absl::Status s = TruncateFileTo(metrics_path, resumed_->resume.metrics_bytes); !s.ok()) {
        log_ << "[resume] warning: " << s.message() << "; the log goes on from here" << std::endl;
      }
    }
    absl::StatusOr<std::unique_ptr<MetricsLog>> opened = MetricsLog::Open(metrics_path);
    if (!opened.ok()) return opened.status();
    metrics_ = std::move(*opened);
    // The run directory is self-contained: //trainer:chat finds the tokenizer beside the
    // checkpoints whatever base dir a later shell has.
    if (absl::Status s = setup_->tokenizer->Save(out_dir_ + "/" + std::string(kRunDirTokenizerFile)); !s.ok()) return s;
  }

  // The multiple-choice and generation metrics: each rank scores its share of the problems.
  absl::StatusOr<std::unique_ptr<SftEvaluation>> evaluation =
      SftEvaluation::Create(setup_->params.get(), setup_->tokenizer.get(), setup_->words_path, o_.eval_metrics_max_problems,
                            o_.seed, o_.num_threads, &world_, config_.dtype);
  if (!evaluation.ok()) return evaluation.status();
  evaluation_ = *std::move(evaluation);
  // An evaluation that runs long (the final one scores every problem) prints where it is.
  eval_progress_log_ = std::make_unique<EvaluationProgressLog>(log_, std::chrono::seconds(10));
  eval_progress_ = leader_ ? eval_progress_log_->AsCallback() : nullptr;

  run_id_ = resumed_ ? resumed_->resume.run
                     : std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  return absl::OkStatus();
}

void SftRun::EndEvaluation() {
  if (training_ == eager_.get()) return;
  eager_->allocator().ReleaseCache();
  malloc_trim(0);
}

// A step of the run as a step directory: the ParamStore's weights, the optimizer's state and
// where the data stands. Every rank brings its weights home; rank 0 writes.
absl::StatusOr<runtime::ResolvedCheckpoint> SftRun::SaveStep(
    int64_t step, const std::vector<std::pair<std::string, double>>& step_metrics) {

  if (absl::Status s = training_->SyncParamsToHost(); !s.ok()) return s;
  if (!leader_) return runtime::ResolvedCheckpoint{};
  absl::StatusOr<OptimizerState> optimizer = training_->ExportOptimizerState();
  if (!optimizer.ok()) return optimizer.status();
  // Nothing non-finite is ever saved: an update that overflowed ends the run here, the last
  // saved step staying the newest (the loss check above catches it one step later).
  if (absl::Status s = CheckAllFinite(*setup_->params, *optimizer, step, out_dir_); !s.ok()) return s;
  runtime::CheckpointRecord record;
  record.step = step;
  if (val_loss_step_ == step && std::isfinite(val_loss_)) record.val_loss = val_loss_;
  record.metrics = step_metrics;
  return SaveRunStep(out_dir_, *setup_->params, record, *optimizer,
                     {step, micro_batches_, run_id_, metrics_->bytes(), run_shape_});
}

absl::StatusOr<int> SftRun::StopIfAsked(int64_t it) {
  // SIGINT/SIGTERM arrived during the step before: save where the run stands and stop
  // (before the first step there is nothing new to save).
  absl::StatusOr<int> stop = StopSignalOnAnyRank(world_);
  if (!stop.ok()) return stop.status();
  if (*stop != 0) {
    const std::string signal = StopSignalName(*stop);
    if (it != first_iteration_) {
      absl::StatusOr<runtime::ResolvedCheckpoint> saved = SaveStep(it, {});
      if (!saved.ok()) return saved.status();
      if (leader_) {
        log_ << "[stop] " << signal << ": saved step " << it << " to " << out_dir_ << "/" << runtime::StepDirName(it)
            << "; continue the run with the same flags and --resume" << std::endl;
      }
    } else if (leader_) {
      log_ << "[stop] " << signal << " before step " << it << " was trained: nothing new to save" << std::endl;
    }
    if (world_.world_size() > 1) {
      // No rank leaves before rank 0 has saved: mpirun ends the others when one exits non-zero.
      if (absl::Status s = world_.Barrier(); !s.ok()) return s;
      std::cerr << absl::StrCat("[stop] rank ", world_.rank(), " of ", world_.world_size(), ": stopped before step ",
                                it, "\n")
                << std::flush;
    }
    result_.checkpoint_dir = out_dir_;
    result_.checkpoint_step = it;
    result_.stopped_by_signal = *stop;
    return *stop;
  }
  return 0;
}

absl::Status SftRun::Evaluate(int64_t it) {
  const bool last_step = it == num_iterations_ - 1;
  const bool evaluate_loss = last_step || it % o_.eval_every == 0;
  const bool evaluate_metrics = last_step || (it > 0 && it % o_.eval_metrics_every == 0);
  if (evaluate_loss || evaluate_metrics) {
    if (absl::Status s = training_->BeginEvaluation(); !s.ok()) return s;
  }
  if (evaluate_loss) {
    absl::StatusOr<double> v =
        GlobalValidationLoss(*eager_, *val_source_, loader_options_, eval_steps_per_rank_, world_, eval_progress_);
    if (!v.ok()) return v.status();
    val_loss_ = *v;
    val_loss_step_ = it;
    if (leader_) log_ << absl::StrFormat("Step %05d | Validation loss: %.6f", it, val_loss_) << std::endl;
  }
  if (evaluate_metrics) {
    absl::StatusOr<std::vector<std::pair<std::string, double>>> m = evaluation_->Run(eval_progress_);
    if (!m.ok()) return m.status();
    metrics_now_ = *m;
    if (leader_) log_ << FormatMetricsLine(it, metrics_now_) << std::endl;
  }
  if (evaluate_loss || evaluate_metrics) EndEvaluation();
  evaluated_metrics_ = evaluate_metrics;
  return absl::OkStatus();
}

absl::Status SftRun::SaveIfDue(int64_t it) {
  if (it != first_iteration_ && o_.save_every > 0 && it % o_.save_every == 0) {
    absl::StatusOr<runtime::ResolvedCheckpoint> saved =
        SaveStep(it, evaluated_metrics_ ? metrics_now_ : std::vector<std::pair<std::string, double>>{});
    if (!saved.ok()) return saved.status();
    if (leader_) log_ << "Saved step " << it << " to " << out_dir_ << "/" << runtime::StepDirName(it) << std::endl;
  }
  if (it == 1 && compiled_ && o_.test_only_force_recompile) {
    if (absl::Status s = CompileAgainForTest(o_, config_); !s.ok()) return s;
    if (leader_) log_ << "[test-only] compiled the step a second time (--test_only_force_recompile)" << std::endl;
  }
  return absl::OkStatus();
}

absl::Status SftRun::Train(int64_t it) {
  const auto start = Clock::now();
  double loss = 0, loss_sum = 0;
  int64_t supervised = 0, positions = 0;
  int first_bad_micro = -1;  // this rank's first micro-batch whose loss is not finite, and its loss
  double first_bad_loss = 0;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int m = 0; m < accum_; ++m) {
    absl::StatusOr<data::Batch> batch = train_->Next();
    if (!batch.ok()) return batch.status();
    ++micro_batches_;
    if (leader_ && it < 3 && m == 0) {
      log_ << "[VALIDATION] Step " << it << " batch shape: inputs [" << batch->B << ", " << batch->T << "], targets ["
          << batch->B << ", " << batch->T << "] (static: every micro-batch is [" << o_.device_batch_size << ", "
          << o_.max_seq_len << "])" << std::endl;
    }
    const std::pair<int64_t, int64_t> shape{batch->B, batch->T};
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
    absl::StatusOr<double> micro = training_->MicroStep(ToStepBatch(*batch, config_.packed));
    if (!micro.ok()) return micro.status();
    if (!std::isfinite(*micro) && first_bad_micro < 0) {
      first_bad_micro = m;
      first_bad_loss = *micro;
    }
    loss = *micro;  // nanochat logs the last micro-batch's loss
    loss_sum += *micro;
    supervised += batch->supervised_tokens;
    positions += batch->NumPositions();
  }
  // The step's figures over every rank (nanochat all-reduces num_tokens the same way), before
  // the update: a loss that is not finite on any rank makes the sum so on every rank, so all
  // stop here together, the update not applied and nothing of this step saved.
  std::vector<double> totals = {loss_sum, double(supervised), double(positions)};
  if (absl::Status s = SumOverRanks(world_, totals); !s.ok()) return s;
  if (!std::isfinite(totals[0])) {
    const std::string where =
        first_bad_micro >= 0 ? absl::StrFormat("this rank's micro-batch %d of %d gave %g", first_bad_micro, accum_, first_bad_loss)
                             : std::string("another rank's");
    return absl::DataLossError(absl::StrFormat(
        "step %d: the training loss is not finite (%s); the step's update was not applied and nothing of it "
        "saved. %s",
        it, where, LastGoodState(out_dir_)));
  }
  if (absl::Status s = CheckGradientsFinite(*training_, world_, it, out_dir_); !s.ok()) return s;
  const double lrm = 1.0 - double(it) / num_iterations_;
  if (absl::Status s = training_->OptimizerStep(lrm); !s.ok()) return s;
  const double loss_mean = totals[0] / (double(accum_) * o_.world_size);
  supervised = int64_t(totals[1]);
  positions = int64_t(totals[2]);
  const double seconds = Seconds(start);
  meter_.AddStep(seconds, positions, supervised);
  if (it == first_iteration_) result_.first_loss = loss;
  result_.final_loss = loss;
  final_loss_mean_ = loss_mean;
  ++result_.steps_trained;
  if (!leader_) return absl::OkStatus();
  log_ << absl::StrFormat("Step %05d/%05d | Training loss: %.6f| lrm: %.6f| num_tokens: %s", it, num_iterations_,
                         loss, lrm, base::WithCommas(supervised))
      << std::endl;
  if ((it + 1) % 10 == 0 && meter_.measured_steps() > 0) {
    log_ << absl::StrFormat("[VALIDATION] Step %d | avg time/step: %.1f ms | tokens/sec: %.0f | supervised "
                           "tokens/sec: %.0f (steps 0-4 excluded)",
                           it, 1e3 * meter_.SecondsPerStep(), meter_.TokensPerSecond(),
                           meter_.SupervisedTokensPerSecond())
        << std::endl;
  }
  StepRecord record;
  record.run = run_id_;
  record.mode = training_->mode();
  record.world_size = o_.world_size;
  record.step = it;
  record.loss = loss;
  record.loss_mean = loss_mean;
  record.batch_shapes = shapes;
  record.recompilations = training_->Recompilations();
  record.lr_multiplier = lrm;
  record.tokens = positions;
  record.supervised_tokens = supervised;
  record.padding_fraction = positions ? 1.0 - double(supervised) / positions : 0;
  record.step_seconds = seconds;
  record.tokens_per_second = positions / seconds;
  record.supervised_tokens_per_second = supervised / seconds;
  record.peak_rss_bytes = ThroughputMeter::PeakRssBytes();
  return metrics_->Append(record);
}

absl::StatusOr<SftResult> SftRun::Finish() {
  result_.val_loss = val_loss_;
  // Anything compiled after the step was made is a recompilation (the executable refuses
  // other shapes instead, so this stays 0; the report checks it rather than assuming it).
  absl::StatusOr<double> all_recompilations =
      ReduceOverRanks(world_, double(training_->Recompilations()), runtime::collectives::ReduceOp::kSum);
  if (!all_recompilations.ok()) return all_recompilations.status();
  result_.recompilations = int64_t(*all_recompilations);

  const int64_t checkpoint_step = num_iterations_ - 1;
  // Checkpoints are written from the ParamStore (the uncompiled view of the weights).
  absl::StatusOr<runtime::ResolvedCheckpoint> saved = SaveStep(checkpoint_step, metrics_now_);
  if (!saved.ok()) return saved.status();
  if (leader_) {
    summary_.checkpoint.model_path = saved->model_path;
    log_ << "Saved the model to " << saved->model_path << " and " << saved->meta_path << "\n";
  }
  result_.checkpoint_dir = out_dir_;
  result_.checkpoint_step = checkpoint_step;
  summary_.checkpoint.step = checkpoint_step;
  bool checkpoint_ok = true;
  if (o_.verify_checkpoint) {
    if (absl::Status s = training_->BeginEvaluation(); !s.ok()) return s;
    absl::StatusOr<CheckpointSummary> verified =
        VerifySavedCheckpoint(out_dir_, checkpoint_step, *setup_->params, config_, interpreter_, *val_source_,
                              loader_options_, eval_steps_per_rank_, val_loss_, world_);
    if (!verified.ok()) return verified.status();
    verified->model_path = summary_.checkpoint.model_path;
    summary_.checkpoint = *verified;
    checkpoint_ok = verified->reload_bit_exact && verified->val_loss_reloaded == verified->val_loss_saved;
    if (leader_) {
      log_ << (checkpoint_ok ? "[VALIDATION] ✓ Checkpoint reloaded bit-exactly" : "[VALIDATION] ✗ Checkpoint reload differs")
          << absl::StrFormat(" (%d tensors%s); validation loss %.6f trained, %.6f reloaded",
                             setup_->params->params().size(),
                             verified->mismatch.empty() ? "" : "; first difference: " + verified->mismatch,
                             verified->val_loss_saved, verified->val_loss_reloaded)
          << std::endl;
    }
  }
  absl::StatusOr<double> peak_rss =
      ReduceOverRanks(world_, double(ThroughputMeter::PeakRssBytes()), runtime::collectives::ReduceOp::kMax);
  if (!peak_rss.ok()) return peak_rss.status();

  if (leader_) {
    summary_.mode = training_->mode();
    summary_.device = o_.compile ? o_.device : "host (interpreter)";
    summary_.world_size = o_.world_size;
    summary_.backend = std::string(world_.backend());
    summary_.num_threads = o_.num_threads;
    summary_.batch_size = config_.batch_size;
    summary_.seq_len = config_.seq_len;
    summary_.packing = o_.packing;
    summary_.steps_trained = result_.steps_trained;
    summary_.first_loss = result_.first_loss;
    summary_.final_loss = result_.final_loss;
    summary_.final_loss_mean = final_loss_mean_;
    if (std::isfinite(val_loss_)) summary_.val_loss = val_loss_;
    summary_.recompilations_training = result_.recompilations;
    summary_.recompilations_evaluation = 0;  // evaluation runs on the interpreter
    summary_.peak_rss_bytes = int64_t(*peak_rss);
    summary_.tokens_per_second = meter_.TokensPerSecond();
    summary_.supervised_tokens_per_second = meter_.SupervisedTokensPerSecond();
    summary_.seconds_per_step = meter_.SecondsPerStep();
    summary_.measured_steps = meter_.measured_steps();
    if (absl::Status s = WriteRunSummary(summary_, out_dir_ + "/run_summary.json"); !s.ok()) return s;
    log_ << "[VALIDATION] Summary: " << (o_.compile ? "compiled (device " + o_.device + ")" : std::string("eager (interpreter)"))
        << (o_.world_size > 1 ? absl::StrCat(" on ", o_.world_size, " ranks") : std::string()) << " | steps "
        << result_.steps_trained << " | tokens/sec "
        << absl::StrFormat("%.0f", meter_.TokensPerSecond()) << " | supervised tokens/sec "
        << absl::StrFormat("%.0f", meter_.SupervisedTokensPerSecond()) << " | time/step "
        << absl::StrFormat("%.1f ms", 1e3 * meter_.SecondsPerStep()) << " (steps 0-4 excluded"
        << (meter_.measured_steps() == 0 ? "; fewer than 6 steps ran, so none measured" : "") << ") | final loss "
        << absl::StrFormat("%.6f", result_.final_loss) << " | compile time "
        << (o_.compile ? absl::StrFormat("%.2f s", build_seconds_) : std::string("n/a (eager)"))
        << " | recompilations " << result_.recompilations << " (training), 0 (evaluation: the interpreter) | peak memory "
        << absl::StrFormat("%.2f GB RSS", *peak_rss / 1e9) << (o_.world_size > 1 ? " (the largest rank)" : "")
        << " | CPU ISA " << CpuIsaDescription() << std::endl;
  }
  // A stop that arrived while the run finished (it saved): every rank exits alike, and only
  // after rank 0 has written everything (the agreement is a barrier too).
  absl::StatusOr<int> late_stop = StopSignalOnAnyRank(world_);
  if (!late_stop.ok()) return late_stop.status();
  result_.stopped_by_signal = *late_stop;
  if (!checkpoint_ok) {
    return absl::DataLossError(absl::StrCat("the checkpoint saved to ", out_dir_, " does not reload as trained: ",
                                            summary_.checkpoint.mismatch.empty() ? "validation loss differs"
                                                                                : summary_.checkpoint.mismatch));
  }
  return result_;
}

}  // namespace

absl::StatusOr<SftResult> RunSft(const TrainerOptions& o, std::ostream& log, runtime::collectives::Communicator& world) {
  if (world.world_size() != o.world_size || world.rank() != o.rank) {
    return absl::InvalidArgumentError(absl::StrCat("RunSft: options say rank ", o.rank, " of ", o.world_size,
                                                   ", the communicator rank ", world.rank(), " of ",
                                                   world.world_size()));
  }
  SftRun run(o, log, world);
  for (absl::Status (SftRun::*phase)() : {&SftRun::Load, &SftRun::OpenRunDirectory, &SftRun::MakeSteps, &SftRun::OpenData}) {
    if (absl::Status s = (run.*phase)(); !s.ok()) return s;
  }
  for (int64_t it = run.first_iteration(); it < run.num_iterations(); ++it) {
    // SIGINT/SIGTERM arrived during the step before: the run saves where it stands and stops.
    absl::StatusOr<int> stop = run.StopIfAsked(it);
    if (!stop.ok()) return stop.status();
    if (*stop != 0) return run.result();
    if (absl::Status s = run.Evaluate(it); !s.ok()) return s;
    if (it == run.num_iterations() - 1) break;  // nanochat evaluates at the last iteration but does not train on it
    if (absl::Status s = run.SaveIfDue(it); !s.ok()) return s;
    if (absl::Status s = run.Train(it); !s.ok()) return s;
  }
  return run.Finish();
}

}  // namespace gpt_sft::trainer
