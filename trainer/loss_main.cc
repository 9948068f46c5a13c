// //trainer:loss: the mean loss of saved batches under a checkpoint, on the interpreted path.
//
//   ./bazelw run //data:dump_batch -- --json --output=b.json --tokenizer=tok.bpe ...
//   ./bazelw run //trainer:loss -- --checkpoint_dir=D [--step=N] --batches=b.json
//
// Loads model_%06d.safetensors + meta_%06d.json of --step (default: the latest) from
// --checkpoint_dir, replays every batch of --batches through the step's @loss (EagerStep::Loss)
// and prints the mean of the per-batch losses (nanochat's validation loss) as the last line of
// stdout; progress goes to stderr. Exit 0 on success, 2 on any error (named flag or file).
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "base/command_line.h"
#include "data/tools/user_path.h"
#include "runtime/checkpoint/checkpoint.h"
#include "trainer/batch_tensors.h"
#include "trainer/eager_step.h"
#include "trainer/eval/batch_json.h"
#include "trainer/eval/validation_loss.h"

ABSL_FLAG(std::string, checkpoint_dir, "",
          "directory holding model_%06d.safetensors and meta_%06d.json, flat or in step_%06d/ (a trainer run "
          "directory)");
ABSL_FLAG(int64_t, step, -1, "checkpoint step to load; -1: the latest in --checkpoint_dir");
ABSL_FLAG(std::string, batches, "", "JSON lines of batches, as //data:dump_batch --json writes them");
ABSL_FLAG(bool, compile, false, "run the compiled step instead of the interpreter (not built yet)");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0: the default");

namespace gpt_sft::trainer {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "loss: error: " << s.message() << "\n";
  return 2;
}

absl::StatusOr<runtime::LoadedCheckpoint> Load(const std::string& dir, int64_t step_flag) {
  int64_t step = step_flag;
  if (step < 0) {
    absl::StatusOr<int64_t> last = runtime::FindLastStep(dir);
    if (!last.ok()) return absl::NotFoundError(absl::StrCat("--checkpoint_dir=", dir, ": ", last.status().message()));
    step = *last;
  }
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(dir, step);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(), absl::StrCat("--checkpoint_dir=", dir, " --step=", step, ": ",
                                                             loaded.status().message()));
  }
  return loaded;
}

int Main() {
  if (absl::GetFlag(FLAGS_compile)) {
    return Fail(absl::UnimplementedError("--compile: the compiled path is not built yet; run without --compile "
                                         "(the interpreter)"));
  }
  const std::string dir = data::UserPath(absl::GetFlag(FLAGS_checkpoint_dir));
  const std::string batches_path = data::UserPath(absl::GetFlag(FLAGS_batches));
  if (dir.empty()) return Fail(absl::InvalidArgumentError("--checkpoint_dir is required"));
  if (batches_path.empty()) return Fail(absl::InvalidArgumentError("--batches is required"));
  if (absl::GetFlag(FLAGS_step) < -1) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--step=", absl::GetFlag(FLAGS_step), " must be >= 0 (or -1: latest)")));
  }
  if (absl::GetFlag(FLAGS_num_threads) < 0) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--num_threads=", absl::GetFlag(FLAGS_num_threads), " must be >= 0")));
  }

  absl::StatusOr<std::vector<data::Batch>> batches = ReadBatchesJson(batches_path);
  if (!batches.ok()) return Fail(absl::Status(batches.status().code(), absl::StrCat("--batches: ", batches.status().message())));
  absl::StatusOr<runtime::LoadedCheckpoint> checkpoint = Load(dir, absl::GetFlag(FLAGS_step));
  if (!checkpoint.ok()) return Fail(checkpoint.status());

  compiler::StepConfig config;
  config.model = checkpoint->meta.model_config;
  config.batch_size = batches->front().B;
  config.seq_len = batches->front().T;
  config.packed = false;
  for (const data::Batch& b : *batches) config.packed = config.packed || !IsPlainCausal(b);
  for (size_t i = 0; i < batches->size(); ++i) {
    const data::Batch& b = (*batches)[i];
    if (b.B != config.batch_size || b.T != config.seq_len) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--batches: ", batches_path, " batch ", i, " is [", b.B, ", ", b.T,
                                                          "] but batch 0 is [", config.batch_size, ", ", config.seq_len, "]")));
    }
    for (int32_t id : b.inputs) {
      if (id < 0 || id >= config.model.vocab_size) {
        return Fail(absl::InvalidArgumentError(absl::StrCat("--batches: ", batches_path, " batch ", i, " holds token id ", id,
                                                            " outside the checkpoint's vocabulary [0, ",
                                                            config.model.vocab_size, ")")));
      }
    }
  }
  std::cerr << "loss: step " << checkpoint->meta.record.step << " of " << dir << " (" << checkpoint->params.NumParams()
            << " parameters), " << batches->size() << " batches of [" << config.batch_size << ", " << config.seq_len
            << "], " << (config.packed ? "packed" : "unpacked") << ", interpreter\n";

  runtime::InterpreterOptions options;
  options.num_threads = absl::GetFlag(FLAGS_num_threads);
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, &checkpoint->params, options);
  if (!step.ok()) return Fail(step.status());

  // Progress per batch: a source that reports as it hands each batch over.
  BatchSource all = VectorSource(&*batches);
  int64_t handed = 0;
  const int64_t total = static_cast<int64_t>(batches->size());
  BatchSource source = [&]() {
    std::cerr << "loss: batch " << ++handed << "/" << total << "\n";
    return all();
  };
  absl::StatusOr<ValidationLossResult> result = ValidationLoss(**step, source, static_cast<int>(total));
  if (!result.ok()) return Fail(absl::Status(result.status().code(), absl::StrCat(batches_path, ": ", result.status().message())));
  std::cerr << "loss: " << result->batches << " batches, " << result->supervised_tokens << " supervised tokens";
  if (result->empty_batches > 0) std::cerr << ", " << result->empty_batches << " without targets skipped";
  std::cerr << "\n";
  std::cout << std::setprecision(9) << result->mean_loss << "\n";
  return std::isfinite(result->mean_loss) ? 0 : Fail(absl::InternalError("the mean loss is not finite"));
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("loss --checkpoint_dir=D [--step=N] --batches=F.json [--num_threads=N]");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::trainer::Main();
}
