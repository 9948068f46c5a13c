// Implements --init_from: the nanochat checkpoint, then its tokenizer, then their agreement.
#include "trainer/config/init_from.h"

#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "runtime/checkpoint/nanochat_checkpoint.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;

}  // namespace

absl::StatusOr<InitSource> LoadInitSource(const std::string& init_from, const std::string& init_tokenizer) {
  absl::StatusOr<runtime::NanochatCheckpointFiles> files = runtime::FindNanochatCheckpoint(init_from);
  if (!files.ok()) return absl::Status(files.status().code(), absl::StrCat("--init_from: ", files.status().message()));
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadNanochatCheckpoint(init_from);
  if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat("--init_from: ", loaded.status().message()));

  std::string tokenizer_path = init_tokenizer;
  if (tokenizer_path.empty()) {
    const fs::path dir(files->dir);
    const std::vector<std::string> candidates = {(dir / "tokenizer.pkl").string(),
                                                 (dir / ".." / ".." / "tokenizer" / "tokenizer.pkl").lexically_normal().string()};
    std::error_code ec;
    for (const std::string& c : candidates) {
      if (fs::exists(c, ec)) {
        tokenizer_path = c;
        break;
      }
    }
    if (tokenizer_path.empty()) {
      return absl::NotFoundError(absl::StrCat("--init_from=", init_from, ": no tokenizer.pkl at ",
                                              absl::StrJoin(candidates, " or "),
                                              "; name nanochat's tokenizer with --init_tokenizer=PATH"));
    }
  }
  absl::StatusOr<data::Tokenizer> tok = data::LoadTokenizerOfAnyKind(tokenizer_path);
  if (!tok.ok()) {
    return absl::Status(tok.status().code(), absl::StrCat(init_tokenizer.empty() ? "--init_from" : "--init_tokenizer",
                                                          ": ", tok.status().message()));
  }
  if (tok->vocab_size() != loaded->params.config().vocab_size) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tokenizer at ", tokenizer_path, " has ", tok->vocab_size(), " tokens but the model at ", files->model_path,
        " has vocab_size ", loaded->params.config().vocab_size, "; they must match (name another with --init_tokenizer)"));
  }
  runtime::ResolvedCheckpoint where;
  where.dir = files->dir;
  where.model_tag = fs::path(files->dir).filename().string();
  where.step = files->step;
  where.model_path = files->model_path;
  where.meta_path = files->meta_path;
  return InitSource{where, *std::move(loaded), *std::move(tok), tokenizer_path};
}

}  // namespace gpt_sft::trainer
