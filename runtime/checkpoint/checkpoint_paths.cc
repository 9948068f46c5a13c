// Implements checkpoint directory layout and resolution.
#include "runtime/checkpoint/checkpoint_paths.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;

// Parses a run of 1..18 decimal digits (18 keeps the value inside int64).
std::optional<int64_t> ParseDigits(absl::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// re.match(r"d(\d+)", tag): a 'd' and the digits right after it; the rest of the name is free.
std::optional<int64_t> TagDepth(absl::string_view tag) {
  if (!absl::StartsWith(tag, "d")) return std::nullopt;
  size_t n = 1;
  while (n < tag.size() && absl::ascii_isdigit(static_cast<unsigned char>(tag[n]))) ++n;
  return ParseDigits(tag.substr(1, n - 1));
}

std::string StepFileName(absl::string_view stem, int64_t step, absl::string_view ext) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%06lld", static_cast<long long>(step));
  return absl::StrCat(stem, "_", digits, ext);
}

}  // namespace

absl::string_view CheckpointDirName(CheckpointSource source) {
  switch (source) {
    case CheckpointSource::kBase: return "base_checkpoints";
    case CheckpointSource::kMid: return "mid_checkpoints";
    case CheckpointSource::kSft: return "chatsft_checkpoints";
    case CheckpointSource::kRl: return "chatrl_checkpoints";
  }
  return "unknown_checkpoints";
}

absl::StatusOr<std::string> NanochatBaseDir() {
  const char* env = std::getenv("NANOCHAT_BASE_DIR");
  if (env != nullptr && env[0] != '\0') return std::string(env);
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] == '\0') {
    return absl::FailedPreconditionError("neither $NANOCHAT_BASE_DIR nor $HOME is set: no checkpoint base directory");
  }
  return (fs::path(home) / ".cache" / "nanochat").string();
}

std::string ModelFileName(int64_t step) { return StepFileName("model", step, ".safetensors"); }
std::string MetaFileName(int64_t step) { return StepFileName("meta", step, ".json"); }
std::string StepDirName(int64_t step) { return StepFileName("step", step, ""); }

absl::StatusOr<std::string> FindLargestModelTag(const std::string& source_dir) {
  std::error_code ec;
  fs::directory_iterator it(source_dir, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot list ", source_dir, ": ", ec.message()));
  // Best by (depth, tag) among d<digits> names; else the newest directory by mtime.
  std::optional<std::tuple<int64_t, std::string>> best_depth;
  std::optional<std::tuple<fs::file_time_type, std::string>> newest;
  for (const fs::directory_entry& e : it) {
    if (!e.is_directory(ec)) continue;
    const std::string tag = e.path().filename().string();
    if (std::optional<int64_t> d = TagDepth(tag)) {
      if (!best_depth || std::make_tuple(*d, tag) > *best_depth) best_depth = std::make_tuple(*d, tag);
    }
    const auto mtime = e.last_write_time(ec);
    if (!ec && (!newest || std::make_tuple(mtime, tag) > *newest)) newest = std::make_tuple(mtime, tag);
  }
  if (best_depth) return std::get<1>(*best_depth);
  if (newest) return std::get<1>(*newest);
  return absl::NotFoundError(absl::StrCat("no model directory under ", source_dir, "; pass --model_tag"));
}

absl::StatusOr<int64_t> FindLastStep(const std::string& checkpoint_dir) {
  std::error_code ec;
  fs::directory_iterator it(checkpoint_dir, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot list ", checkpoint_dir, ": ", ec.message()));
  std::optional<int64_t> last, last_whole;
  for (const fs::directory_entry& e : it) {
    const std::string file = e.path().filename().string();
    std::optional<int64_t> step;
    bool whole = true;
    absl::string_view name = file;
    if (absl::ConsumePrefix(&name, "model_") && absl::ConsumeSuffix(&name, ".safetensors")) {
      step = ParseDigits(name);
    } else if (absl::ConsumePrefix(&name, "step_") && e.is_directory(ec)) {
      // A step directory appears whole (one rename): one without its model file was damaged
      // afterwards (or made by hand), which is not skipped in silence.
      step = ParseDigits(name);
      whole = step && fs::exists(e.path() / ModelFileName(*step), ec);
    }
    if (!step) continue;
    if (!last || *step > *last) last = step;
    if (whole && (!last_whole || *step > *last_whole)) last_whole = step;
  }
  if (!last) {
    return absl::NotFoundError(
        absl::StrCat("no model_<step>.safetensors or step_<step>/ in ", checkpoint_dir, "; pass --step"));
  }
  if (last != last_whole) {
    return absl::DataLossError(absl::StrCat(
        "the newest step of ", checkpoint_dir, ", ", StepDirName(*last), "/, has no ", ModelFileName(*last),
        ": it was damaged after it was saved. ",
        last_whole ? absl::StrCat("Pass --step=", *last_whole, " for the newest whole step, or remove ",
                                  StepDirName(*last), "/")
                   : std::string("No whole step is left")));
  }
  return *last;
}

ResolvedCheckpoint CheckpointFilesOf(const std::string& dir, int64_t step) {
  ResolvedCheckpoint r;
  r.dir = dir;
  r.model_tag = fs::path(dir).filename().string();
  r.step = step;
  std::error_code ec;
  const fs::path step_dir = fs::path(dir) / StepDirName(step);
  const fs::path files = fs::is_directory(step_dir, ec) ? step_dir : fs::path(dir);
  r.model_path = (files / ModelFileName(step)).string();
  r.meta_path = (files / MetaFileName(step)).string();
  return r;
}

absl::StatusOr<ResolvedCheckpoint> ResolveCheckpoint(const std::string& base_dir, CheckpointSource source,
                                                     std::optional<std::string> model_tag,
                                                     std::optional<int64_t> step) {
  const std::string source_dir = (fs::path(base_dir) / std::string(CheckpointDirName(source))).string();
  ResolvedCheckpoint r;
  if (model_tag) {
    if (model_tag->empty() || model_tag->find('/') != std::string::npos || *model_tag == "." || *model_tag == "..") {
      return absl::InvalidArgumentError(absl::StrCat("--model_tag=\"", *model_tag, "\" is not a directory name"));
    }
    r.model_tag = *model_tag;
  } else {
    absl::StatusOr<std::string> tag = FindLargestModelTag(source_dir);
    if (!tag.ok()) return tag.status();
    r.model_tag = *tag;
  }
  const std::string dir = (fs::path(source_dir) / r.model_tag).string();
  if (step) {
    if (*step < 0) return absl::InvalidArgumentError(absl::StrCat("--step=", *step, " must be non-negative"));
    r.step = *step;
  } else {
    absl::StatusOr<int64_t> last = FindLastStep(dir);
    if (!last.ok()) return last.status();
    r.step = *last;
  }
  ResolvedCheckpoint files = CheckpointFilesOf(dir, r.step);
  files.model_tag = r.model_tag;
  return files;
}

}  // namespace gpt_sft::runtime
