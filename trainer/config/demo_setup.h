// The embedded demo of `./bazelw run //trainer` with no flags: what it needs under the base
// dir, created when missing: a tokenizer trained on text this machine has (Debian's English
// licence texts and word list, carried as runfiles) and a randomly initialised small base
// checkpoint. Each stage says what it does on `log`.
#ifndef GPT_SFT_TRAINER_CONFIG_DEMO_SETUP_H_
#define GPT_SFT_TRAINER_CONFIG_DEMO_SETUP_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "trainer/config/trainer_options.h"

namespace gpt_sft::trainer {

/// The demo's model: depth 2 (n_embd 128, one head), vocabulary from its tokenizer.
inline constexpr int kDemoDepth = 2;
inline constexpr int kDemoVocabSize = 4096;

/// `<base_dir>/tokenizer/tokenizer.txt`, the file the trainer and //trainer:chat read.
std::string TokenizerPath(const std::string& base_dir);

/// The demo's flags: nanochat's loop at a size that finishes in minutes on two cores
/// ([4, 512] rows, 16 examples a step, 40 steps, evaluations every 20), with the base learning rates
/// (init_lr_frac 1: a random model is not pretrained, so SFT's 0.02 would barely move it).
TrainerOptions DemoOptions(const std::string& base_dir);

/// A random base model to create: nanochat's shape for `depth` (width 64 x depth), over a
/// tokenizer of `vocab_size` tokens trained on the machine's text.
struct RandomBaseModelSpec {
  int depth = kDemoDepth;
  int vocab_size = kDemoVocabSize;
  uint64_t seed = 42;
};

/// Trains and saves the tokenizer if TokenizerPath is missing (an existing one of another
/// vocabulary size is an error naming the file and both sizes); writes a random base checkpoint
/// (step 0, tag d<depth>) unless <base_dir>/base_checkpoints/d<depth> already holds one.
absl::Status EnsureRandomBaseModel(const std::string& base_dir, const RandomBaseModelSpec& spec, std::ostream& log);

/// The demo's: a tokenizer of kDemoVocabSize and a depth-kDemoDepth model, unless the base dir
/// already has a tokenizer and a base checkpoint (of any tag).
absl::Status EnsureDemoModel(const std::string& base_dir, std::ostream& log);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_CONFIG_DEMO_SETUP_H_
