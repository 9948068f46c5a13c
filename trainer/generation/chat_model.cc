#include "trainer/generation/chat_model.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "data/tools/user_path.h"

namespace gpt_sft::trainer {
namespace {

using ::gpt_sft::data::UserPath;

absl::Status Prefixed(const absl::Status& s, const std::string& prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

absl::StatusOr<std::string> BaseDir(const ChatModelPaths& paths) {
  if (!paths.base_dir.empty()) return UserPath(paths.base_dir);
  return runtime::NanochatBaseDir();
}

}  // namespace

absl::StatusOr<runtime::LoadedCheckpoint> LoadChatCheckpoint(const ChatModelPaths& paths) {
  const std::string dir = UserPath(paths.checkpoint_dir);
  if (dir.empty()) {
    auto base = BaseDir(paths);
    if (!base.ok()) return base.status();
    auto where = runtime::ResolveCheckpoint(*base, runtime::CheckpointSource::kSft, std::nullopt, paths.step);
    if (!where.ok()) return Prefixed(where.status(), "--checkpoint_dir not given and ");
    return runtime::LoadCheckpoint(*where);
  }
  std::optional<int64_t> step = paths.step;
  if (!step) {
    auto last = runtime::FindLastStep(dir);
    if (!last.ok()) return Prefixed(last.status(), "--checkpoint_dir: ");
    step = *last;
  }
  auto loaded = runtime::LoadCheckpoint(dir, *step);
  if (!loaded.ok()) return Prefixed(loaded.status(), absl::StrCat("--checkpoint_dir=", dir, " --step=", *step, ": "));
  return loaded;
}

absl::StatusOr<std::string> FindChatTokenizer(const ChatModelPaths& paths) {
  if (!paths.tokenizer.empty()) return UserPath(paths.tokenizer);
  std::vector<std::string> tried;
  if (const std::string dir = UserPath(paths.checkpoint_dir); !dir.empty()) {
    // A run directory keeps its tokenizer beside the checkpoints; a nanochat layout has it
    // two levels up, at <base_dir>/tokenizer/.
    tried.push_back(dir + "/" + std::string(kRunDirTokenizerFile));
    tried.push_back((std::filesystem::path(dir) / ".." / ".." / "tokenizer" / "tokenizer.txt").lexically_normal());
  }
  auto base = BaseDir(paths);
  if (!base.ok()) return base.status();
  tried.push_back(*base + "/tokenizer/tokenizer.txt");
  for (const std::string& path : tried) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
  }
  return absl::NotFoundError(absl::StrCat("--tokenizer not given and no tokenizer at ", absl::StrJoin(tried, ", "),
                                          "; name it with --tokenizer=FILE"));
}

absl::StatusOr<data::Tokenizer> LoadChatTokenizer(const ChatModelPaths& paths, int model_vocab_size) {
  absl::StatusOr<std::string> path = FindChatTokenizer(paths);
  if (!path.ok()) return path.status();
  auto tok = data::LoadTokenizerOfAnyKind(*path);  // ours, or nanochat's tokenizer.pkl
  if (!tok.ok()) return Prefixed(tok.status(), "--tokenizer: ");
  if (tok->vocab_size() != model_vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat("--tokenizer ", *path, " has ", tok->vocab_size(),
                                                   " tokens but the checkpoint's model has vocab_size ",
                                                   model_vocab_size));
  }
  return tok;
}

}  // namespace gpt_sft::trainer
