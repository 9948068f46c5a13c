// nanochat's synthetic spelling tasks over a word list: SimpleSpelling ("Spell the word")
// and SpellingBee (count a letter, checking the count with a python tool call).
#ifndef GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_
#define GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

/// The lines of a word-list file that are lowercase a-z only, trailing spaces and \r
/// dropped, in file order. nanochat downloads dwyl's words_alpha.txt; offline we read
/// Debian's /usr/share/dict/words (Bazel: @wordlist//:english_words), which this filter
/// turns into the same kind of list. NotFound for a missing file, InvalidArgument when
/// no word survives; both name the file.
absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> LoadWordList(const std::string& path);

enum class Split { kTrain, kTest };

/// Example i draws from random.Random(i) for train and Random(10_000_000 + i) for test,
/// as nanochat does, so the splits share no seed while i < 10M.
int64_t SpellingSeed(Split split, int64_t index);

/// user: "Spell the word: <word>"; assistant: "<word>:<l>,<e>,<t>,..." (no spaces).
/// The words are shuffled once with Random(42), then example i is choice(words) under
/// its own seed. Evaluate: exact match with that reply.
class SimpleSpellingTask : public Task {
 public:
  /// `words` must not be empty (LoadWordList guarantees it).
  SimpleSpellingTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split);
  std::string name() const override { return "SimpleSpelling"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return size_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  std::vector<std::string> words_;  // our own copy, shuffled once with Random(42)
  int64_t size_;
  Split split_;
};

/// "How many <letter> are in <word>?" in one of our own templates (several languages),
/// with nanochat's random dressing. Draws, in order, from the example's Random(seed):
///   word = choice(words); letter = choice(word) if random() < 0.9 else choice(a..z);
///   template = choice(templates); lower-case it all if random() < 0.3; a quote style
///   (none, ' or ") for the letter, then for the word; append "?" if random() < 0.5.
/// The assistant's reply is five parts, as nanochat's:
///   text           "<word>:<l>,<e>,..." then one line "i:c" per letter (1-based) with
///                  " hit! count=k" on a match, ending "This gives us <k>."
///   text           "Let me double check this using Python:"
///   python         '<word>'.count('<letter>')
///   python_output  <k>
///   text           "Python gives us <k>. ... #### <k>"
/// Evaluate: GSM8K's extraction of the number after "####", in the completion and in the
/// reference's last text part, compared as strings.
class SpellingBeeTask : public Task {
 public:
  /// `words` must not be empty (LoadWordList guarantees it).
  SpellingBeeTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split);
  std::string name() const override { return "SpellingBee"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return size_; }
  absl::StatusOr<Example> GetExample(int64_t index) const override;
  bool Evaluate(const Example& example, std::string_view completion) const override;

  /// Our user templates: {L} stands for the quoted letter and {W} for the quoted word.
  static const std::vector<std::string>& Templates();

 private:
  std::shared_ptr<const std::vector<std::string>> words_;
  int64_t size_;
  Split split_;
};

/// GSM8K's answer extraction: the first match of the regex "#### (\-?[0-9\.\,]+)", its
/// capture with commas removed; nullopt when there is none.
std::optional<std::string> ExtractHashAnswer(std::string_view text);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_SPELLING_TASKS_H_
