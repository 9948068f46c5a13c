// //trainer/eval:random_checkpoint (tests only): writes a checkpoint of a randomly
// initialised model (ParamStore::InitNanochat) so end-to-end tests have weights without a
// training run. With nanochat's init lm_head is zero, so every logit is 0 and the loss of
// any batch is exactly ln(vocab_size): a known answer for //trainer:loss.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "trainer/random_checkpoint.h"

ABSL_FLAG(std::string, output_dir, "", "directory to write model_%06d.safetensors and meta_%06d.json into");
ABSL_FLAG(int, depth, 1, "n_layer");
ABSL_FLAG(int, n_embd, 64, "model width");
ABSL_FLAG(int, n_head, 2, "attention heads");
ABSL_FLAG(int, vocab_size, 512, "vocabulary size");
ABSL_FLAG(int, sequence_len, 256, "the model's sequence_len");
ABSL_FLAG(uint64_t, seed, 1, "init seed");
ABSL_FLAG(int64_t, step, 0, "the checkpoint's step");
ABSL_FLAG(bool, zero_output_projections, true, "nanochat's init: zero lm_head and every c_proj");

int main(int argc, char** argv) {
  gpt_sft::base::ParseCommandLine(argc, argv);
  using namespace gpt_sft;
  auto fail = [](const absl::Status& s) {
    std::cerr << "random_checkpoint: error: " << s.message() << "\n";
    return 2;
  };
  if (absl::GetFlag(FLAGS_output_dir).empty()) return fail(absl::InvalidArgumentError("--output_dir is required"));
  absl::StatusOr<compiler::ModelConfig> config =
      compiler::ModelConfig::FromDepth(absl::GetFlag(FLAGS_depth), absl::GetFlag(FLAGS_vocab_size),
                                       absl::GetFlag(FLAGS_sequence_len), absl::GetFlag(FLAGS_n_embd),
                                       absl::GetFlag(FLAGS_n_head));
  if (!config.ok()) return fail(config.status());
  absl::StatusOr<runtime::ResolvedCheckpoint> written =
      trainer::WriteRandomCheckpoint(absl::GetFlag(FLAGS_output_dir), *config, absl::GetFlag(FLAGS_seed),
                                     absl::GetFlag(FLAGS_step), absl::GetFlag(FLAGS_zero_output_projections));
  if (!written.ok()) return fail(written.status());
  std::cout << written->model_path << "\n";
  return 0;
}
