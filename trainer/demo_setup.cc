#include "trainer/demo_setup.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/random_checkpoint.h"
#include "trainer/runfiles.h"

namespace gpt_sft::trainer {
namespace {

// Text every Debian machine has, bundled with the binary as runfiles (see trainer/BUILD).
const char* const kDemoTexts[] = {"external/english_text/GPL-3", "external/english_text/Apache-2.0",
                                  "external/wordlist/words"};

absl::Status TrainTokenizer(const std::string& path, std::ostream& log) {
  std::vector<std::string> texts;
  int64_t bytes = 0;
  for (const char* name : kDemoTexts) {
    absl::StatusOr<std::string> file = FindRunfile(name);
    if (!file.ok()) return file.status();
    std::ifstream in(*file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) return absl::UnavailableError("cannot read " + *file);
    texts.push_back(ss.str());
    bytes += static_cast<int64_t>(texts.back().size());
  }
  log << "[demo] training a " << kDemoVocabSize << "-token BPE tokenizer on " << bytes / 1024
      << " KiB of this machine's English text (Debian's licences and word list)..." << std::endl;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<data::Tokenizer> tok = data::Tokenizer::Train(texts, kDemoVocabSize);
  if (!tok.ok()) return tok.status();
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (absl::Status s = tok->Save(path); !s.ok()) return s;
  log << "[demo] tokenizer: " << tok->vocab_size() << " tokens in "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s, saved to " << path
      << std::endl;
  return absl::OkStatus();
}

absl::Status WriteRandomBase(const std::string& base_dir, int vocab_size, std::ostream& log) {
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromDepth(kDemoDepth, vocab_size);
  if (!config.ok()) return config.status();
  const std::string dir = absl::StrCat(base_dir, "/", runtime::CheckpointDirName(runtime::CheckpointSource::kBase),
                                       "/d", config->n_layer);
  log << "[demo] writing a randomly initialised base model (depth " << config->n_layer << ", width "
      << config->n_embd << ", " << config->NumParams() << " parameters, nanochat's init) to " << dir << std::endl;
  return WriteRandomCheckpoint(dir, *config, /*seed=*/42).status();
}

}  // namespace

std::string TokenizerPath(const std::string& base_dir) { return base_dir + "/tokenizer/tokenizer.txt"; }

TrainerOptions DemoOptions(const std::string& base_dir) {
  TrainerOptions o;
  o.base_dir = base_dir;
  o.max_seq_len = 512;
  o.target_examples_per_step = 16;  // 4 micro-batches of 4 rows per step
  o.max_iterations = 40;
  o.eval_every = 20;
  o.eval_steps = 4;
  o.eval_metrics_every = 20;
  o.eval_metrics_max_problems = 32;
  o.init_lr_frac = 1.0;
  return o;
}

absl::Status EnsureDemoModel(const std::string& base_dir, std::ostream& log) {
  const std::string tokenizer_path = TokenizerPath(base_dir);
  if (!std::filesystem::exists(tokenizer_path)) {
    if (absl::Status s = TrainTokenizer(tokenizer_path, log); !s.ok()) return s;
  } else {
    log << "[demo] using the tokenizer at " << tokenizer_path << std::endl;
  }
  const std::string base_root =
      absl::StrCat(base_dir, "/", runtime::CheckpointDirName(runtime::CheckpointSource::kBase));
  absl::StatusOr<runtime::ResolvedCheckpoint> existing =
      runtime::ResolveCheckpoint(base_dir, runtime::CheckpointSource::kBase, std::nullopt, std::nullopt);
  if (existing.ok()) {
    log << "[demo] using the base model at " << existing->model_path << std::endl;
    return absl::OkStatus();
  }
  absl::StatusOr<data::Tokenizer> tok = data::Tokenizer::Load(tokenizer_path);
  if (!tok.ok()) return tok.status();
  return WriteRandomBase(base_dir, tok->vocab_size(), log);
}

}  // namespace gpt_sft::trainer
