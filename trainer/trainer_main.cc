// //trainer: chat SFT of a nanochat-style GPT.
//
//   ./bazelw run //trainer                       # the embedded demo (sets itself up, minutes)
//   ./bazelw run //trainer -- --model_tag=d20 --max_iterations=100 --packing=bestfit
//
// With no flags at all (or --demo) it runs the demo: a tokenizer and a small random base
// model are created under the base dir when missing (trainer/demo_setup.h), then fine-tuned
// on the offline task mixture; flags given beside --demo override the demo's settings. With
// flags it is nanochat's chat_sft (trainer/sft_run.h).
#include <iostream>
#include <set>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "data/tools/user_path.h"
#include "trainer/demo_setup.h"
#include "trainer/sft_run.h"
#include "trainer/trainer_options.h"

ABSL_FLAG(int, max_iterations, -1, "optimizer steps + 1 (nanochat's count); -1: one epoch of the mixture");
ABSL_FLAG(std::string, model_source, "base", "the model to fine-tune: base or mid (<base_dir>/<source>_checkpoints)");
ABSL_FLAG(std::string, model_tag, "", "checkpoint tag, e.g. d20; empty: the largest depth");
ABSL_FLAG(int64_t, step, -1, "checkpoint step to load; -1: the latest");
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
ABSL_FLAG(std::string, dtype, "float32", "training dtype: float32");
ABSL_FLAG(std::string, base_dir, "", "nanochat's base dir; empty: $NANOCHAT_BASE_DIR or ~/.cache/nanochat");
ABSL_FLAG(bool, compile, true, "train with the compiled step (static [device_batch_size, max_seq_len], compiled once, cached under <base_dir>/compile_cache); false: the interpreter (eager)");
ABSL_FLAG(std::string, packing, "bestfit",
          "bestfit (whole conversations packed into rows; the default: far more supervised tokens per step) or pad "
          "(one conversation per row, as nanochat)");
ABSL_FLAG(int64_t, seed, 42, "seed of the data order's synthetic tasks");
ABSL_FLAG(int, num_threads, 0, "CPU threads; 0: every core");
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
  if (use("packing")) o.packing = absl::GetFlag(FLAGS_packing);
  if (use("seed")) o.seed = absl::GetFlag(FLAGS_seed);
  if (use("num_threads")) o.num_threads = absl::GetFlag(FLAGS_num_threads);
  return o;
}

int Fail(const absl::Status& status, int code) {
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

int Main(bool demo, const std::set<std::string>& given) {
  demo = demo || absl::GetFlag(FLAGS_demo);
  TrainerOptions options = FromFlags(TrainerOptions(), /*only_given=*/false, given);
  if (demo) {
    absl::StatusOr<std::string> base_dir = runtime::NanochatBaseDir();
    if (!base_dir.ok()) return Fail(base_dir.status(), 2);
    std::cout << "[demo] no flags given: the embedded demo. It fine-tunes a small model on the offline task "
                 "mixture under "
              << *base_dir << ", creating what is missing first." << std::endl;
    options = FromFlags(DemoOptions(*base_dir), /*only_given=*/true, given);
    if (absl::Status s = EnsureDemoModel(options.base_dir, std::cout); !s.ok()) return Fail(s, 1);
  }
  if (absl::Status s = ValidateOptions(options); !s.ok()) return Fail(s, 2);
  absl::StatusOr<SftResult> result = RunSft(options, std::cout);
  if (!result.ok()) return Fail(result.status(), 1);
  if (demo) {
    std::cout << "[demo] done: training loss " << result->first_loss << " -> " << result->final_loss
              << "; talk to it: ./bazelw run //trainer:chat -- --checkpoint_dir=" << result->checkpoint_dir
              << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("trainer: chat SFT of a nanochat-style GPT (no flags: the embedded demo)");
  const bool demo = argc == 1;
  const std::set<std::string> given = gpt_sft::trainer::GivenFlags(argc, argv);
  absl::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main(demo, given);
}
