#include "trainer/config/demo_setup.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/tokenizer/tokenizer.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/random_checkpoint.h"
#include "base/runfiles.h"

namespace gpt_sft::trainer {
namespace {

// Text every Debian machine has, bundled with the binary as runfiles (see trainer/BUILD).
const char* const kDemoTexts[] = {"external/english_text/GPL-3", "external/english_text/Apache-2.0",
                                  "external/wordlist/words"};

absl::Status TrainTokenizer(const std::string& path, int vocab_size, const char* tag, std::ostream& log) {
  // The directory first, so an unwritable --base_dir is an error before seconds of training.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir.string(), " for the tokenizer: ",
                                                    ec.message(), " (choose another --base_dir)"));
  }
  std::vector<std::string> texts;
  int64_t bytes = 0;
  for (const char* name : kDemoTexts) {
    absl::StatusOr<std::string> file = base::FindRunfile(name);
    if (!file.ok()) return file.status();
    std::ifstream in(*file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in && !in.eof()) return absl::UnavailableError("cannot read " + *file);
    texts.push_back(ss.str());
    bytes += static_cast<int64_t>(texts.back().size());
  }
  log << tag << " training a " << vocab_size << "-token BPE tokenizer on " << bytes / 1024
      << " KiB of this machine's English text (Debian's licences and word list)..." << std::endl;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<data::Tokenizer> tok = data::Tokenizer::Train(texts, vocab_size);
  if (!tok.ok()) return tok.status();
  if (absl::Status s = tok->Save(path); !s.ok()) return s;
  log << tag << " tokenizer: " << tok->vocab_size() << " tokens in "
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s, saved to " << path
      << std::endl;
  return absl::OkStatus();
}

absl::Status WriteRandomBase(const std::string& base_dir, int depth, int vocab_size, uint64_t seed,
                             const char* tag, std::ostream& log) {
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromDepth(depth, vocab_size);
  if (!config.ok()) return config.status();
  const std::string dir = absl::StrCat(base_dir, "/", runtime::CheckpointDirName(runtime::CheckpointSource::kBase),
                                       "/d", config->n_layer);
  log << tag << " writing a randomly initialised base model (depth " << config->n_layer << ", width "
      << config->n_embd << ", " << config->n_head << " heads, vocabulary " << vocab_size << ", " << config->NumParams()
      << " parameters, nanochat's init) to " << dir << std::endl;
  return WriteRandomCheckpoint(dir, *config, seed).status();
}

// The tokenizer at TokenizerPath, trained first when missing.
absl::StatusOr<data::Tokenizer> EnsureTokenizer(const std::string& base_dir, int vocab_size, const char* tag,
                                                std::ostream& log) {
  const std::string path = TokenizerPath(base_dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (absl::Status s = TrainTokenizer(path, vocab_size, tag, log); !s.ok()) return s;
  } else {
    log << tag << " using the tokenizer at " << path << std::endl;
  }
  return data::Tokenizer::Load(path);
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

absl::Status EnsureRandomBaseModel(const std::string& base_dir, const RandomBaseModelSpec& spec, std::ostream& log) {
  absl::StatusOr<data::Tokenizer> tok = EnsureTokenizer(base_dir, spec.vocab_size, "[setup]", log);
  if (!tok.ok()) return tok.status();
  if (tok->vocab_size() != spec.vocab_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        TokenizerPath(base_dir), " has ", tok->vocab_size(), " tokens but --vocab_size=", spec.vocab_size,
        " was asked; use another --base_dir (the tokenizer is shared by every model under it)"));
  }
  const std::string tag = absl::StrCat("d", spec.depth);
  absl::StatusOr<runtime::ResolvedCheckpoint> existing =
      runtime::ResolveCheckpoint(base_dir, runtime::CheckpointSource::kBase, tag, std::nullopt);
  if (existing.ok()) {
    log << "[setup] using the base model at " << existing->model_path << std::endl;
    return absl::OkStatus();
  }
  return WriteRandomBase(base_dir, spec.depth, tok->vocab_size(), spec.seed, "[setup]", log);
}

absl::Status EnsureDemoModel(const std::string& base_dir, std::ostream& log) {
  absl::StatusOr<data::Tokenizer> tok = EnsureTokenizer(base_dir, kDemoVocabSize, "[demo]", log);
  if (!tok.ok()) return tok.status();
  absl::StatusOr<runtime::ResolvedCheckpoint> existing =
      runtime::ResolveCheckpoint(base_dir, runtime::CheckpointSource::kBase, std::nullopt, std::nullopt);
  if (existing.ok()) {
    log << "[demo] using the base model at " << existing->model_path << std::endl;
    return absl::OkStatus();
  }
  return WriteRandomBase(base_dir, kDemoDepth, tok->vocab_size(), /*seed=*/42, "[demo]", log);
}

}  // namespace gpt_sft::trainer
