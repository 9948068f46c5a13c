// //trainer: chat SFT of a nanochat-style GPT.
//
//   ./bazelw run //trainer                       # the embedded demo (sets itself up, minutes)
//   ./bazelw run //trainer -- --model_tag=d20 --max_iterations=100 --packing=bestfit
//   ./bazelw run //trainer -- --jsonl=mine.jsonl --builtin_tasks=false --val_jsonl=held_out.jsonl
//
// With no flags at all (or --demo) it runs the demo: a tokenizer and a small random base
// model are created under the base dir when missing (trainer/config/demo_setup.h), then fine-tuned
// on the offline task mixture; flags given beside --demo override the demo's settings. With
// flags it is nanochat's chat_sft (trainer/loop/sft_run.h).
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <streambuf>
#include <set>
#include <string>

#include "absl/flags/flag.h"
#include "runtime/device/device.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "base/command_line.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "data/tools/user_path.h"
#include "runtime/collectives/communicator.h"
#include "runtime/collectives/mpi_communicator.h"
#include "trainer/config/demo_setup.h"
#include "trainer/launch/rank_launcher.h"
#include "trainer/loop/sft_run.h"
#include "trainer/launch/stop_signal.h"
#include "trainer/config/trainer_options.h"

ABSL_FLAG(int, max_iterations, -1, "optimizer steps + 1 (nanochat's count); -1: one epoch of the mixture");
ABSL_FLAG(std::string, model_source, "base", "the model to fine-tune: base or mid (<base_dir>/<source>_checkpoints)");
ABSL_FLAG(std::string, model_tag, "", "checkpoint tag, e.g. d20; empty: the largest depth");
ABSL_FLAG(int64_t, step, -1, "checkpoint step to load; -1: the latest");
ABSL_FLAG(std::string, init_from, "",
          "fine-tune a nanochat checkpoint instead: its directory (the latest model_XXXXXX.pt) or a model_XXXXXX.pt, "
          "with its meta_XXXXXX.json beside it");
ABSL_FLAG(std::string, init_tokenizer, "",
          "the tokenizer.pkl of --init_from; empty: <its dir>/tokenizer.pkl or <its dir>/../../tokenizer/tokenizer.pkl");
ABSL_FLAG(int, device_batch_size, 4, "B: rows per micro-batch");
ABSL_FLAG(int, max_seq_len, 2048, "T: positions per row (every batch is [B, T])");
ABSL_FLAG(int, target_examples_per_step, 32, "examples per optimizer step (= B x ranks x accumulation)");
ABSL_FLAG(double, embedding_lr, 0.2, "AdamW lr of wte (x (n_embd/768)^-0.5)");
ABSL_FLAG(double, unembedding_lr, 0.004, "AdamW lr of lm_head (x (n_embd/768)^-0.5)");
ABSL_FLAG(double, matrix_lr, 0.02, "Muon lr of the block matrices");
ABSL_FLAG(double, weight_decay, 0.0, "AdamW weight decay");
ABSL_FLAG(double, init_lr_frac, 0.02, "every lr starts at this fraction of its base and decays linearly");
ABSL_FLAG(int, eval_every, 100, "validation loss every N steps (and at the last)");
ABSL_FLAG(int, eval_steps, 100, "batches per validation loss");
ABSL_FLAG(int, eval_metrics_every, 200, "multiple-choice metrics every N steps (and at the last)");
ABSL_FLAG(int, eval_metrics_max_problems, 1024, "problems per multiple-choice task");
ABSL_FLAG(std::string, dtype, "float32",
          "training numerics: float32, or bfloat16 (nanochat's bf16 autocast: matmul/attention inputs and every "
          "activation rounded to bf16, fp32 accumulation, master weights and optimizer state; stored as f32)");
ABSL_FLAG(std::string, base_dir, "", "nanochat's base dir; empty: $NANOCHAT_BASE_DIR or ~/.cache/nanochat");
ABSL_FLAG(bool, compile, true, "train with the compiled step (static [device_batch_size, max_seq_len], compiled once, cached under <base_dir>/compile_cache); false: the interpreter (eager)");
ABSL_FLAG(std::string, packing, "bestfit",
          "bestfit (whole conversations packed into rows; the default: far more supervised tokens per step) or pad "
          "(one conversation per row, as nanochat)");
ABSL_FLAG(int64_t, seed, 42, "seed of the data order's synthetic tasks");
ABSL_FLAG(std::string, jsonl, "",
          "comma-separated files of your conversations to train on, one JSON array of {role, content} messages per "
          "line (nanochat's CustomJSON; an optional first system message; assistant content a string or a list of "
          "text/python/python_output parts)");
ABSL_FLAG(int, jsonl_repeat, 1, "each --jsonl file enters the training mixture this many times");
ABSL_FLAG(bool, builtin_tasks, true,
          "train on the built-in tasks (spelling, synthetic multiple choice) too; false: only on --jsonl");
ABSL_FLAG(std::string, val_jsonl, "",
          "comma-separated held-out conversation files for the validation loss; empty: the built-in tasks' "
          "held-out split");
ABSL_FLAG(int, num_threads, 0, "CPU threads; 0: every core");
ABSL_FLAG(int, nproc_per_node, 1,
          "data-parallel ranks on this machine; > 1 relaunches the trainer as that many ranks through OpenMPI's "
          "mpirun (under mpirun itself it must equal the world size, or be omitted)");
ABSL_FLAG(double, collective_timeout_s, 300, "how long a rank waits for the others in one collective before the job ends");
ABSL_FLAG(std::string, output_dir, "", "the checkpoint, metrics.jsonl and run_summary.json; empty: <base_dir>/chatsft_checkpoints/d<depth>");
ABSL_FLAG(std::string, device, "cpu",
          "where the compiled step runs: cpu (this machine's cores, BLAS), opencl[:<n>] (every kernel generated by "
          "the compiler, on the n-th OpenCL device; PoCL runs them on the CPU) or cuda[:<n>] (an NVIDIA GPU; on "
          "several ranks one GPU per local rank, gradients reduced with NCCL); evaluation runs on the host");
ABSL_FLAG(std::string, compile_cache_dir, "", "the compiled-artifact cache; empty: <base_dir>/compile_cache");
ABSL_FLAG(int, save_every, 0,
          "also save a checkpoint (model, optimizer state, data position) every N optimizer steps into "
          "<output_dir>/step_<N>/; 0: at the end only. SIGINT/SIGTERM saves too, then exits 130/143");
ABSL_FLAG(bool, resume, false,
          "continue from the latest step saved in the output dir, exactly (optimizer state, data position, "
          "metrics.jsonl); the flags that shape the steps must be the same");
ABSL_FLAG(bool, overwrite, false,
          "start afresh in an output dir that holds another run: that run's files are moved aside into "
          "<output_dir>.replaced.<N>/ (never deleted); without it such a start is refused");
ABSL_FLAG(bool, verify_checkpoint, true, "reload the saved checkpoint and check it bit-exact, with the same validation loss");
ABSL_FLAG(bool, test_only_force_recompile, false, "test-only: compile the step a second time at step 1 (a planted recompilation)");
ABSL_FLAG(bool, demo, false, "the embedded demo (also what no flags at all means); other flags given override its settings");

namespace gpt_sft::trainer {
namespace {

/// The flags over `o`: every flag when `only_given` is false, else only those given on the
/// command line (the demo keeps its own defaults for the rest).
TrainerOptions FromFlags(TrainerOptions o, bool only_given, const std::set<std::string>& given) {
  auto use = [&](const char* name) { return !only_given || given.count(name) > 0; };
  if (use("max_iterations")) o.max_iterations = absl::GetFlag(FLAGS_max_iterations);
  if (use("model_source")) o.model_source = absl::GetFlag(FLAGS_model_source);
  if (const std::string tag = absl::GetFlag(FLAGS_model_tag); use("model_tag") && !tag.empty()) o.model_tag = tag;
  if (const int64_t step = absl::GetFlag(FLAGS_step); use("step") && step != -1) o.step = step;
  if (use("init_from")) o.init_from = data::UserPath(absl::GetFlag(FLAGS_init_from));
  if (use("init_tokenizer")) o.init_tokenizer = data::UserPath(absl::GetFlag(FLAGS_init_tokenizer));
  if (use("device_batch_size")) o.device_batch_size = absl::GetFlag(FLAGS_device_batch_size);
  if (use("max_seq_len")) o.max_seq_len = absl::GetFlag(FLAGS_max_seq_len);
  if (use("target_examples_per_step")) o.target_examples_per_step = absl::GetFlag(FLAGS_target_examples_per_step);
  if (use("embedding_lr")) o.embedding_lr = absl::GetFlag(FLAGS_embedding_lr);
  if (use("unembedding_lr")) o.unembedding_lr = absl::GetFlag(FLAGS_unembedding_lr);
  if (use("matrix_lr")) o.matrix_lr = absl::GetFlag(FLAGS_matrix_lr);
  if (use("weight_decay")) o.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  if (use("init_lr_frac")) o.init_lr_frac = absl::GetFlag(FLAGS_init_lr_frac);
  if (use("eval_every")) o.eval_every = absl::GetFlag(FLAGS_eval_every);
  if (use("eval_steps")) o.eval_steps = absl::GetFlag(FLAGS_eval_steps);
  if (use("eval_metrics_every")) o.eval_metrics_every = absl::GetFlag(FLAGS_eval_metrics_every);
  if (use("eval_metrics_max_problems")) o.eval_metrics_max_problems = absl::GetFlag(FLAGS_eval_metrics_max_problems);
  if (use("dtype")) o.dtype = absl::GetFlag(FLAGS_dtype);
  if (use("base_dir")) o.base_dir = data::UserPath(absl::GetFlag(FLAGS_base_dir));
  if (use("compile")) o.compile = absl::GetFlag(FLAGS_compile);
  if (use("device")) o.device = absl::GetFlag(FLAGS_device);
  if (use("packing")) o.packing = absl::GetFlag(FLAGS_packing);
  if (use("seed")) o.seed = absl::GetFlag(FLAGS_seed);
  if (use("jsonl")) o.data.jsonl = data::UserPaths(absl::GetFlag(FLAGS_jsonl));
  if (use("jsonl_repeat")) o.data.jsonl_repeat = absl::GetFlag(FLAGS_jsonl_repeat);
  if (use("builtin_tasks")) o.data.builtin_tasks = absl::GetFlag(FLAGS_builtin_tasks);
  if (use("val_jsonl")) o.data.val_jsonl = data::UserPaths(absl::GetFlag(FLAGS_val_jsonl));
  if (use("num_threads")) o.num_threads = absl::GetFlag(FLAGS_num_threads);
  if (use("nproc_per_node")) o.nproc_per_node = absl::GetFlag(FLAGS_nproc_per_node);
  if (use("collective_timeout_s")) o.collective_timeout_s = absl::GetFlag(FLAGS_collective_timeout_s);
  if (use("output_dir")) o.output_dir = data::UserPath(absl::GetFlag(FLAGS_output_dir));
  if (use("compile_cache_dir")) o.compile_cache_dir = data::UserPath(absl::GetFlag(FLAGS_compile_cache_dir));
  if (use("save_every")) o.save_every = absl::GetFlag(FLAGS_save_every);
  if (use("resume")) o.resume = absl::GetFlag(FLAGS_resume);
  if (use("overwrite")) o.overwrite = absl::GetFlag(FLAGS_overwrite);
  if (use("verify_checkpoint")) o.verify_checkpoint = absl::GetFlag(FLAGS_verify_checkpoint);
  if (use("test_only_force_recompile")) o.test_only_force_recompile = absl::GetFlag(FLAGS_test_only_force_recompile);
  return o;
}

/// A failed run's exit: the message on stderr; with several ranks it names this rank and
/// ends the whole job, so no rank is left waiting in a collective for one that is gone.
int Fail(const absl::Status& status, int code, const runtime::collectives::Communicator* world = nullptr) {
  if (world != nullptr && world->world_size() > 1) {
    // One string, one write: ranks failing together must not interleave their lines.
    std::cerr << absl::StrCat("trainer: error: rank ", world->rank(), " of ", world->world_size(), ": ",
                              status.message(), "\n")
              << std::flush;
    // mpirun is already ending the job (a rank died): MPI_Abort would only wait on it.
    if (!LauncherTeardown().empty()) std::_Exit(code);
    runtime::collectives::AbortMpiWorld(code);
  }
  std::cerr << "trainer: error: " << status.message() << std::endl;
  return code;
}

/// The names of the flags on the command line ("--name=value", "--name value", "--noname").
std::set<std::string> GivenFlags(int argc, char** argv) {
  std::set<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    names.insert(arg);
    if (arg.rfind("no", 0) == 0) names.insert(arg.substr(2));
  }
  return names;
}

/// The demo's options (flags given override them), its tokenizer and base model created
/// under the base dir when missing. Logs to `log`.
absl::StatusOr<TrainerOptions> DemoSetup(const std::set<std::string>& given, bool create, std::ostream& log) {
  absl::StatusOr<std::string> base_dir = runtime::NanochatBaseDir();
  if (!base_dir.ok()) return base_dir.status();
  // "no flags" only when none was given; --demo, or flags beside it, override its options.
  log << (given.empty() ? "[demo] no flags given: the embedded demo."
                         : "[demo] the embedded demo (the flags given override its options).")
      << " It fine-tunes a small model on the offline task mixture under " << *base_dir
      << ", creating what is missing first." << std::endl;
  TrainerOptions options = FromFlags(DemoOptions(*base_dir), /*only_given=*/true, given);
  if (create) {
    if (absl::Status s = EnsureDemoModel(options.base_dir, log); !s.ok()) return s;
  }
  return options;
}

/// Every rank of an mpirun job: rank 0 sets the demo up while the others wait (setting up
/// takes longer than a collective's timeout, so they wait on a world of their own).
absl::Status DemoSetupOnRankZero(const runtime::collectives::Communicator& world) {
  runtime::collectives::MpiOptions patient;
  patient.timeout = std::chrono::hours(1);
  patient.abandon_reason = LauncherTeardown;
  absl::StatusOr<std::unique_ptr<runtime::collectives::Communicator>> setup_world =
      runtime::collectives::MakeMpiCommunicator(patient);
  if (!setup_world.ok()) return setup_world.status();
  return (*setup_world)->Barrier();
}

/// Starts the world: under mpirun the MPI one, else a world of one rank.
absl::StatusOr<std::unique_ptr<runtime::collectives::Communicator>> StartWorld(const TrainerOptions& options) {
  if (!runtime::collectives::LaunchedByMpirun()) return runtime::collectives::MakeSingleRankCommunicator();
  runtime::collectives::MpiOptions mpi;
  mpi.timeout = std::chrono::milliseconds(int64_t(options.collective_timeout_s * 1000));
  // mpirun tearing the job down (a rank died): a wait for the dead rank ends at once, naming it.
  mpi.abandon_reason = LauncherTeardown;
  absl::StatusOr<std::unique_ptr<runtime::collectives::Communicator>> world =
      runtime::collectives::MakeMpiCommunicator(mpi);
  return world;
}

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

int Main(bool demo, const std::set<std::string>& given, int argc, char** argv) {
  demo = demo || absl::GetFlag(FLAGS_demo);
  TrainerOptions options = FromFlags(TrainerOptions(), /*only_given=*/false, given);
  const bool launched = runtime::collectives::LaunchedByMpirun();
  if (options.nproc_per_node < 1) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--nproc_per_node=", options.nproc_per_node,
                                                        " must be at least 1 (the ranks on this machine)")),
                2);
  }
  if (!launched && options.nproc_per_node > 1) {
    // Set up once here, before the ranks exist; then become mpirun.
    if (demo) {
      absl::StatusOr<TrainerOptions> demo_options = DemoSetup(given, /*create=*/true, std::cout);
      if (!demo_options.ok()) return Fail(demo_options.status(), 1);
      options = *demo_options;
    }
    options.world_size = options.nproc_per_node;
    if (absl::Status s = ValidateOptions(options); !s.ok()) return Fail(s, 2);
    std::cout << "[ranks] starting " << options.nproc_per_node << " ranks on this machine through mpirun" << std::endl;
    absl::StatusOr<int> job = RunAsRanks(options.nproc_per_node, argc, argv);
    return job.ok() ? *job : Fail(job.status(), 1);
  }
  // Ranks take a stop (or mpirun's teardown) from their first instant: a rank without the
  // handlers would die of the SIGUSR2 a stop during its setup passes on.
  if (launched) InstallStopSignalHandlers();

  absl::StatusOr<std::unique_ptr<runtime::collectives::Communicator>> world = StartWorld(options);
  if (!world.ok()) return Fail(world.status(), 2);
  runtime::collectives::Communicator& ranks = **world;
  SetStopSignalRank(ranks.rank(), ranks.world_size());
  if (given.count("nproc_per_node") && options.nproc_per_node != ranks.world_size()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--nproc_per_node=", options.nproc_per_node,
                                                        " but mpirun started ", ranks.world_size(),
                                                        " ranks; omit the flag under mpirun, or make them equal")),
                2, &ranks);
  }
  const bool leader = ranks.rank() == 0;
  NullBuffer discard;
  std::ostream quiet(&discard);
  std::ostream& log = leader ? std::cout : quiet;
  if (demo) {
    // Ranks our launcher started find the demo set up and announced already.
    std::ostream& setup_log = RelaunchedByTrainer() ? quiet : log;
    absl::StatusOr<TrainerOptions> demo_options = DemoSetup(given, /*create=*/leader, setup_log);
    if (!demo_options.ok()) return Fail(demo_options.status(), 1, &ranks);
    options = *demo_options;
    if (ranks.world_size() > 1) {
      if (absl::Status s = DemoSetupOnRankZero(ranks); !s.ok()) return Fail(s, 1, &ranks);
    }
  }
  options.world_size = ranks.world_size();
  options.rank = ranks.rank();
  if (options.num_threads == 0 && LocalRankCount() > 1) options.num_threads = ThreadsPerLocalRank();
  if (absl::Status s = ValidateOptions(options); !s.ok()) return Fail(s, 2, &ranks);
  // A device that cannot open here is a flag error, found before anything is written.
  if (options.compile) {
    if (auto device = runtime::device::CreateDevice(options.device); !device.ok()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--device=", options.device, ": ", device.status().message())),
                  2, &ranks);
    }
  }
  InstallStopSignalHandlers();
  absl::StatusOr<SftResult> result = RunSft(options, log, ranks);
  if (!result.ok()) return Fail(result.status(), 1, &ranks);
  if (result->stopped_by_signal != 0) {
    // The launching trainer passed the user's signal on as SIGUSR2 and exits 128 + that signal.
    return result->stopped_by_signal == SIGUSR2 && RelaunchedByTrainer() ? 0 : 128 + result->stopped_by_signal;
  }
  if (leader) {
    // Absolute, and the tokenizer sits in the run directory: the command works from a fresh shell.
    const std::string chat = absl::StrCat("./bazelw run //trainer:chat -- --checkpoint_dir=",
                                          std::filesystem::absolute(result->checkpoint_dir).lexically_normal().string());
    if (demo) {
      std::cout << "[demo] done: training loss " << result->first_loss << " -> " << result->final_loss
                << "; talk to it: " << chat << std::endl;
    } else {
      std::cout << "Talk to it: " << chat << std::endl;
    }
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("trainer: chat SFT of a nanochat-style GPT (no flags: the embedded demo)");
  const bool demo = argc == 1;
  const std::set<std::string> given = gpt_sft::trainer::GivenFlags(argc, argv);
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main(demo, given, argc, argv);
}
