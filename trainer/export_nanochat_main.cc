// //trainer:export_nanochat: one of our checkpoints as nanochat's files (trainer/nanochat_export.h).
//
//   export_nanochat --output_base_dir=OUT [--base_dir=B] [--model_source=sft] [--model_tag=d20]
//                   [--step=N] [--tokenizer=F] [--output_source=sft]
//   export_nanochat --output_base_dir=OUT --from_nanochat=DIR_OR_PT --tokenizer=tokenizer.pkl
//
// The checkpoint is <base_dir>/<model_source>_checkpoints/<model_tag>, the latest step unless
// --step (runtime/checkpoint/checkpoint_paths.h), or with --from_nanochat a nanochat checkpoint
// (re-exported, e.g. to drop torch.compile's "_orig_mod." prefixes). The tokenizer is --tokenizer
// (ours or a tokenizer.pkl), default <base_dir>/tokenizer/tokenizer.txt. Then, for example,
//   NANOCHAT_BASE_DIR=OUT python -m scripts.chat_cli
// in a nanochat checkout talks with it. Errors name the flag or file at fault and exit 2.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/command_line.h"
#include "data/tools/user_path.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/checkpoint/nanochat_checkpoint.h"
#include "trainer/config/demo_setup.h"
#include "data/tokenizer/tiktoken_pickle.h"
#include "trainer/nanochat_export.h"

ABSL_FLAG(std::string, output_base_dir, "", "the nanochat base directory to write (required)");
ABSL_FLAG(std::string, output_source, "sft", "which nanochat checkpoints to write: base, mid, sft or rl");
ABSL_FLAG(std::string, base_dir, "", "our base directory; empty: $NANOCHAT_BASE_DIR or ~/.cache/nanochat");
ABSL_FLAG(std::string, model_source, "sft", "our checkpoints to export: base, mid, sft or rl");
ABSL_FLAG(std::string, model_tag, "", "checkpoint tag, e.g. d20; empty: the largest depth");
ABSL_FLAG(int64_t, step, -1, "checkpoint step; -1: the latest");
ABSL_FLAG(std::string, from_nanochat, "", "export this nanochat checkpoint (a directory or model_XXXXXX.pt) instead");
ABSL_FLAG(std::string, tokenizer, "", "the tokenizer (ours or a tokenizer.pkl); empty: <base_dir>/tokenizer/tokenizer.txt");

namespace gpt_sft::trainer {
namespace {

absl::StatusOr<runtime::CheckpointSource> SourceFlag(const char* flag, const std::string& value) {
  if (value == "base") return runtime::CheckpointSource::kBase;
  if (value == "mid") return runtime::CheckpointSource::kMid;
  if (value == "sft") return runtime::CheckpointSource::kSft;
  if (value == "rl") return runtime::CheckpointSource::kRl;
  return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, " is not one of: base, mid, sft, rl"));
}

absl::Status Run() {
  const std::string out = data::UserPath(absl::GetFlag(FLAGS_output_base_dir));
  if (out.empty()) return absl::InvalidArgumentError("--output_base_dir is required: the nanochat base dir to write");
  absl::StatusOr<runtime::CheckpointSource> out_source = SourceFlag("output_source", absl::GetFlag(FLAGS_output_source));
  if (!out_source.ok()) return out_source.status();
  std::string base_dir = data::UserPath(absl::GetFlag(FLAGS_base_dir));
  if (base_dir.empty()) {
    absl::StatusOr<std::string> dir = runtime::NanochatBaseDir();
    if (!dir.ok()) return dir.status();
    base_dir = *dir;
  }
  const std::string from_nanochat = data::UserPath(absl::GetFlag(FLAGS_from_nanochat));
  absl::StatusOr<runtime::LoadedCheckpoint> checkpoint;
  if (!from_nanochat.empty()) {
    checkpoint = runtime::LoadNanochatCheckpoint(from_nanochat);
  } else {
    absl::StatusOr<runtime::CheckpointSource> source = SourceFlag("model_source", absl::GetFlag(FLAGS_model_source));
    if (!source.ok()) return source.status();
    const std::string tag = absl::GetFlag(FLAGS_model_tag);
    const int64_t step = absl::GetFlag(FLAGS_step);
    absl::StatusOr<runtime::ResolvedCheckpoint> where = runtime::ResolveCheckpoint(
        base_dir, *source, tag.empty() ? std::nullopt : std::optional<std::string>(tag),
        step == -1 ? std::nullopt : std::optional<int64_t>(step));
    if (!where.ok()) return where.status();
    checkpoint = runtime::LoadCheckpoint(*where);
  }
  if (!checkpoint.ok()) return checkpoint.status();
  std::string tokenizer_path = data::UserPath(absl::GetFlag(FLAGS_tokenizer));
  if (tokenizer_path.empty()) tokenizer_path = TokenizerPath(base_dir);
  absl::StatusOr<data::Tokenizer> tokenizer = data::LoadTokenizerOfAnyKind(tokenizer_path);
  if (!tokenizer.ok()) return absl::Status(tokenizer.status().code(), absl::StrCat("--tokenizer: ", tokenizer.status().message()));
  absl::StatusOr<NanochatExport> written = ExportNanochat(*checkpoint, *tokenizer, out, *out_source);
  if (!written.ok()) return written.status();
  std::cout << "wrote " << written->model_path << "\nwrote " << written->meta_path << "\nwrote "
            << written->tokenizer_path << "\nin a nanochat checkout: NANOCHAT_BASE_DIR=" << out
            << " python -m scripts.chat_cli\n";
  return absl::OkStatus();
}

}  // namespace
}  // namespace gpt_sft::trainer

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("writes one of our checkpoints as nanochat's model_XXXXXX.pt, meta and tokenizer.pkl");
  gpt_sft::base::ParseCommandLine(argc, argv);
  if (absl::Status s = gpt_sft::trainer::Run(); !s.ok()) {
    std::cerr << "export_nanochat: error: " << s.message() << std::endl;
    return 2;
  }
  return 0;
}
