// nanochat's synthetic spelling tasks over a word list: SimpleSpelling ("Spell the word")
// and SpellingBee (count a letter, with a python tool call to check).
#ifndef GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_
#define GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

/// The words of a list file that are lowercase a-z only (Debian's /usr/share/dict/words
/// by default: nanochat downloads dwyl's list, which we cannot). Errors name the file.
absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> LoadWordList(const std::string& path);

enum class Split { kTrain, kTest };

/// Example i draws from random.Random(i) for train and Random(10_000_000 + i) for test,
/// as nanochat does, so the two splits never share a seed.
int64_t SpellingSeed(Split split, int64_t index);

/// user: "Spell the word: <word>"; assistant: "<word>:<l>,<e>,<t>,..." (no spaces).
class SimpleSpellingTask : public Task {
 public:
  SimpleSpellingTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split);
  std::string name() const override { return "SimpleSpelling"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return size_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  std::vector<std::string> words_;  // shuffled once with Random(42)
  int64_t size_;
  Split split_;
};

/// "How many <letter> in <word>?" in one of several languages; the assistant spells the
/// word, counts by hand, checks with python ('<word>'.count('<letter>')), and ends with
/// "#### <count>". Scored GSM8K-style on the number after ####.
class SpellingBeeTask : public Task {
 public:
  SpellingBeeTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split);
  std::string name() const override { return "SpellingBee"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return size_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;
  bool Evaluate(const Example& example, std::string_view completion) const override;

 private:
  std::shared_ptr<const std::vector<std::string>> words_;
  int64_t size_;
  Split split_;
};

/// GSM8K's answer extraction: the first "#### <number>" with commas removed, or "".
std::string ExtractHashAnswer(std::string_view text);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_
