// Implements ExportNanochat: the checkpoint's directory, then the tokenizer.
#include "trainer/nanochat_export.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "runtime/checkpoint/nanochat_checkpoint.h"

namespace gpt_sft::trainer {

absl::StatusOr<NanochatExport> ExportNanochat(const runtime::LoadedCheckpoint& checkpoint,
                                              const data::Tokenizer& tokenizer, const std::string& out,
                                              runtime::CheckpointSource source) {
  namespace fs = std::filesystem;
  const compiler::ModelConfig& config = checkpoint.params.config();
  if (tokenizer.vocab_size() != config.vocab_size) {
    return absl::FailedPreconditionError(absl::StrCat("the tokenizer has ", tokenizer.vocab_size(),
                                                      " tokens but the model has vocab_size ", config.vocab_size,
                                                      "; nanochat's loader asserts they are equal"));
  }
  const fs::path dir = fs::path(out) / std::string(runtime::CheckpointDirName(source)) / absl::StrCat("d", config.n_layer);
  absl::StatusOr<runtime::NanochatCheckpointFiles> files =
      runtime::SaveNanochatCheckpoint(dir.string(), checkpoint.params, checkpoint.meta.record);
  if (!files.ok()) return files.status();
  const fs::path tokenizer_dir = fs::path(out) / "tokenizer";
  std::error_code ec;
  fs::create_directories(tokenizer_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", tokenizer_dir.string(), ": ", ec.message()));
  const std::string tokenizer_path = (tokenizer_dir / "tokenizer.pkl").string();
  if (absl::Status s = data::SaveTiktokenPickle(tokenizer, tokenizer_path); !s.ok()) return s;
  return NanochatExport{files->model_path, files->meta_path, tokenizer_path};
}

}  // namespace gpt_sft::trainer
