// //trainer:setup_base_model: a tokenizer and a randomly initialised base model of any depth
// under a base dir, the way the demo makes its own, so the trainer and //trainer:validate can
// run at a chosen size (e.g. the CPU benchmark config) without a pretrained model.
//
//   ./bazelw run //trainer:setup_base_model -- --base_dir=/tmp/d4 --depth=4 --vocab_size=8192
//   ./bazelw run //trainer -- --base_dir=/tmp/d4 --model_tag=d4 --init_lr_frac=1 ...
//
// What exists is kept: the tokenizer is trained only when <base_dir>/tokenizer/tokenizer.txt is
// missing, the checkpoint written only when base_checkpoints/d<depth> has none. Exit 0 on
// success, 2 on a bad flag or a tokenizer of another vocabulary size (named).
#include <cstdint>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "base/command_line.h"
#include "data/tools/user_path.h"
#include "trainer/config/demo_setup.h"

ABSL_FLAG(std::string, base_dir, "", "nanochat's base dir to create the tokenizer and model under (required)");
ABSL_FLAG(int, depth, 4, "model depth (nanochat: width 64 x depth, heads of 128)");
ABSL_FLAG(int, vocab_size, 8192, "tokenizer vocabulary, special tokens included");
ABSL_FLAG(uint64_t, seed, 42, "seed of the random initialisation");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("setup_base_model: a tokenizer and a random base model under --base_dir");
  gpt_sft::base::ParseCommandLine(argc, argv);
  const std::string base_dir = gpt_sft::data::UserPath(absl::GetFlag(FLAGS_base_dir));
  if (base_dir.empty()) {
    std::cerr << "setup_base_model: error: --base_dir is required\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_depth) < 1 || absl::GetFlag(FLAGS_vocab_size) < 300) {
    std::cerr << "setup_base_model: error: --depth must be >= 1 and --vocab_size >= 300 (got --depth="
              << absl::GetFlag(FLAGS_depth) << " --vocab_size=" << absl::GetFlag(FLAGS_vocab_size) << ")\n";
    return 2;
  }
  gpt_sft::trainer::RandomBaseModelSpec spec;
  spec.depth = absl::GetFlag(FLAGS_depth);
  spec.vocab_size = absl::GetFlag(FLAGS_vocab_size);
  spec.seed = absl::GetFlag(FLAGS_seed);
  if (absl::Status s = gpt_sft::trainer::EnsureRandomBaseModel(base_dir, spec, std::cout); !s.ok()) {
    std::cerr << "setup_base_model: error: " << s.message() << "\n";
    return 2;
  }
  return 0;
}
