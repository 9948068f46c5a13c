// Implements ValidateTrainingDataFlags and BuildTrainingData.
#include "data/pipeline/training_data.h"

#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/with_commas.h"
#include "data/pipeline/sft_mixture.h"

namespace gpt_sft::data {
namespace {

using Tasks = std::vector<std::shared_ptr<const Task>>;

absl::Status CheckReadable(const char* flag, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("--", flag, "=", path, ": cannot open (missing file, or not a regular file)"));
  }
  if (!std::ifstream(path, std::ios::binary)) {
    return absl::PermissionDeniedError(absl::StrCat("--", flag, "=", path, ": cannot open for reading"));
  }
  return absl::OkStatus();
}

// `path` with symlinks and dot segments resolved, so two spellings of one file compare equal.
std::string Canonical(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// The CustomJSON tasks of `paths`, each `repeat` times; errors prefixed with the flag.
absl::StatusOr<Tasks> ConversationTasks(const char* flag, const std::vector<std::string>& paths, int repeat) {
  SftMixtureOptions o;
  o.spelling_bee = o.simple_spelling = o.synthetic_mc = 0;
  o.conversation_jsonl = paths;
  o.conversation_jsonl_repeat = repeat;
  absl::StatusOr<Tasks> tasks = BuildSftTasks(o);
  if (!tasks.ok()) return absl::Status(tasks.status().code(), absl::StrCat("--", flag, ": ", tasks.status().message()));
  return tasks;
}

// The built-in tasks of one split (train, or the held-out test seeds).
absl::StatusOr<Tasks> BuiltinTasks(const TrainingDataOptions& o, bool test_split) {
  SftMixtureOptions b;
  b.words_path = o.words_path;
  b.spelling_bee = b.simple_spelling = b.synthetic_mc = o.examples_per_task;
  b.seed = o.seed;
  b.test_split = test_split;
  return BuildSftTasks(b);
}

// "<rows> rows: SpellingBee 2000, CustomJSON(a.jsonl) 12 x2": each task once, in order,
// with how many times it was listed.
std::string Describe(const TaskMixture& mixture) {
  std::string out = absl::StrCat(base::WithCommas(mixture.size()), " rows:");
  const Tasks& tasks = mixture.tasks();
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j < tasks.size() && tasks[j] == tasks[i]) ++j;
    absl::StrAppend(&out, i == 0 ? " " : ", ", tasks[i]->name(), " ", tasks[i]->size(), j - i > 1 ? absl::StrCat(" x", j - i) : "");
    i = j;
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const TaskMixture>> Mixture(Tasks tasks, const char* what) {
  if (tasks.empty()) return absl::InvalidArgumentError(absl::StrCat("the ", what, " data has no rows"));
  for (const auto& t : tasks) {
    if (t->size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(t->name(), " has no conversations (only blank lines); the ", what,
                                                     " data needs at least one"));
    }
  }
  return std::make_shared<const TaskMixture>(std::move(tasks));
}

}  // namespace

absl::Status ValidateTrainingDataFlags(const TrainingDataOptions& o) {
  if (o.jsonl_repeat < 1) return absl::InvalidArgumentError(absl::StrCat("--jsonl_repeat=", o.jsonl_repeat, " must be >= 1"));
  if (!o.builtin_tasks && o.jsonl.empty()) {
    return absl::InvalidArgumentError(
        "--builtin_tasks=false and no --jsonl: nothing to train on; name your conversations with --jsonl=a.jsonl[,b.jsonl]");
  }
  for (const std::string& path : o.jsonl) {
    if (absl::Status s = CheckReadable("jsonl", path); !s.ok()) return s;
  }
  for (const std::string& path : o.val_jsonl) {
    if (absl::Status s = CheckReadable("val_jsonl", path); !s.ok()) return s;
    for (const std::string& train : o.jsonl) {
      if (Canonical(path) == Canonical(train)) {
        return absl::InvalidArgumentError(absl::StrCat("--val_jsonl=", path, " is also a --jsonl file (", train,
                                                       "); a held-out set must not be trained on"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TrainingData> BuildTrainingData(const TrainingDataOptions& o) {
  if (absl::Status s = ValidateTrainingDataFlags(o); !s.ok()) return s;
  Tasks train;
  if (o.builtin_tasks) {
    absl::StatusOr<Tasks> builtin = BuiltinTasks(o, /*test_split=*/false);
    if (!builtin.ok()) return builtin.status();
    train = *std::move(builtin);
  }
  absl::StatusOr<Tasks> user = ConversationTasks("jsonl", o.jsonl, o.jsonl_repeat);
  if (!user.ok()) return user.status();
  train.insert(train.end(), user->begin(), user->end());
  if (!o.multiple_choice_jsonl.empty()) {
    SftMixtureOptions mc;
    mc.spelling_bee = mc.simple_spelling = mc.synthetic_mc = 0;
    mc.multiple_choice_jsonl = o.multiple_choice_jsonl;
    absl::StatusOr<Tasks> tasks = BuildSftTasks(mc);
    if (!tasks.ok()) return tasks.status();
    train.insert(train.end(), tasks->begin(), tasks->end());
  }
  absl::StatusOr<Tasks> val = o.val_jsonl.empty() ? BuiltinTasks(o, /*test_split=*/true)
                                                  : ConversationTasks("val_jsonl", o.val_jsonl, 1);
  if (!val.ok()) return val.status();

  TrainingData data;
  absl::StatusOr<std::shared_ptr<const TaskMixture>> mixture = Mixture(std::move(train), "training");
  if (!mixture.ok()) return mixture.status();
  data.train = *std::move(mixture);
  mixture = Mixture(*std::move(val), "validation");
  if (!mixture.ok()) return mixture.status();
  data.val = *std::move(mixture);
  data.description = absl::StrCat(
      "Training data: ", Describe(*data.train), "\nValidation data: ", Describe(*data.val),
      o.val_jsonl.empty() ? " (the built-in tasks' held-out split: no --val_jsonl)" : " (--val_jsonl)", "\n");
  return data;
}

}  // namespace gpt_sft::data
