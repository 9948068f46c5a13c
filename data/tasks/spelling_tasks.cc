// Implements the spelling tasks. The user templates and the reply's prose are our own
// wording; the order of random draws and the reply's part structure follow nanochat.
#include "data/tasks/spelling_tasks.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "data/tasks/python_random.h"

namespace gpt_sft::data {
namespace {

constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz";

// none, single or double quotes, chosen uniformly.
std::string Quote(PythonRandom& rng, const std::string& s) {
  switch (rng.RandBelow(3)) {
    case 0: return s;
    case 1: return absl::StrCat("'", s, "'");
    default: return absl::StrCat("\"", s, "\"");
  }
}

// "<word>:<w>,<o>,<r>,<d>"
std::string Spelled(const std::string& word) {
  std::vector<std::string> letters;
  for (char c : word) letters.push_back(std::string(1, c));
  return absl::StrCat(word, ":", absl::StrJoin(letters, ","));
}

// The five parts of the SpellingBee reply for `count` = word.count(letter).
std::vector<Part> SpellingBeeReply(const std::string& word, char letter, int count) {
  const std::string l(1, letter);
  std::string manual = absl::StrCat("We need to count the letter '", l, "' in the word '", word,
                                    "'. First I spell it out:\n", Spelled(word), "\n\nNow letter by letter:\n");
  int hits = 0;
  for (size_t i = 0; i < word.size(); ++i) {
    absl::StrAppend(&manual, i + 1, ":", std::string(1, word[i]));
    if (word[i] == letter) absl::StrAppend(&manual, " hit! count=", ++hits);
    absl::StrAppend(&manual, "\n");
  }
  absl::StrAppend(&manual, "This gives us ", count, ".");
  return {{Part::Kind::kText, manual},
          {Part::Kind::kText, "\n\nLet me double check this using Python:\n\n"},
          {Part::Kind::kPython, absl::StrCat("'", word, "'.count('", l, "')")},
          {Part::Kind::kPythonOutput, absl::StrCat(count)},
          {Part::Kind::kText, absl::StrCat("\n\nPython gives us ", count, ", which agrees with my count.\n\n",
                                           "My final answer is:\n\n#### ", count)}};
}

}  // namespace

absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> LoadWordList(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open word list (missing file, or not a regular file)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open word list for reading"));
  auto words = std::make_shared<std::vector<std::string>>();
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line.find_first_not_of(kAlphabet) == std::string::npos) words->push_back(line);
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error in word list"));
  if (words->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no lowercase a-z words in the word list"));
  return std::shared_ptr<const std::vector<std::string>>(std::move(words));
}

int64_t SpellingSeed(Split split, int64_t index) { return split == Split::kTrain ? index : 10'000'000 + index; }

SimpleSpellingTask::SimpleSpellingTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size,
                                       Split split)
    : words_(*words), size_(size), split_(split) {
  PythonRandom(42).Shuffle(&words_);
}

absl::StatusOr<Example> SimpleSpellingTask::GetExample(int64_t index) const {
  if (index < 0 || index >= size_) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " is outside [0, ", size_, ")"));
  }
  PythonRandom rng(SpellingSeed(split_, index));
  const std::string& word = rng.Choice(words_);
  Example ex;
  ex.answer = Spelled(word);
  ex.conversation.messages = {Message::User("Spell the word: " + word), Message::Assistant(ex.answer)};
  return ex;
}

const std::vector<std::string>& SpellingBeeTask::Templates() {
  static const auto* t = new std::vector<std::string>{
      // English
      "How many {L} are there in {W}",
      "Count how many times the letter {L} shows up in {W}",
      "Tell me the number of {L}s in the word {W}",
      "If you spell {W}, how many {L} do you write",
      // Spanish
      "¿Cuántas letras {L} tiene {W}",
      "Dime cuántas veces sale la {L} en la palabra {W}",
      "Cuenta las {L} que hay en {W}",
      // French
      "Combien de fois la lettre {L} apparaît-elle dans {W}",
      "Compte les {L} dans le mot {W}",
      "Dans {W}, combien y a-t-il de {L}",
      // German
      "Wie viele {L} stecken im Wort {W}",
      "Zähle die Buchstaben {L} in {W}",
      "Wie häufig findet man {L} in {W}",
      // Italian
      "Quante {L} ci sono nella parola {W}",
      "Conta le lettere {L} in {W}",
      // Portuguese
      "Quantas letras {L} existem em {W}",
      "Conte quantas vezes {L} aparece em {W}",
      // Chinese
      "{W}里面一共有多少个{L}",
      "请数一下{W}中字母{L}出现了几次",
      // Japanese
      "{W}の中に{L}は何回出てきますか",
      "{W}に含まれる{L}の数を数えてください",
      // Korean
      "{W}에는 {L}가 모두 몇 번 나오나요",
      "{W}라는 단어 속 {L}의 개수를 세어 주세요",
  };
  return *t;
}

SpellingBeeTask::SpellingBeeTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split)
    : words_(std::move(words)), size_(size), split_(split) {}

absl::StatusOr<Example> SpellingBeeTask::GetExample(int64_t index) const {
  if (index < 0 || index >= size_) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " is outside [0, ", size_, ")"));
  }
  PythonRandom rng(SpellingSeed(split_, index));
  const std::string& word = rng.Choice(*words_);
  const char letter = rng.Random() < 0.9 ? rng.Choice(word) : kAlphabet[rng.RandBelow(26)];
  const std::string& pattern = rng.Choice(Templates());
  const bool lower = rng.Random() < 0.3;
  const std::string quoted_letter = Quote(rng, std::string(1, letter));
  const std::string quoted_word = Quote(rng, word);
  std::string user = absl::StrReplaceAll(pattern, {{"{L}", quoted_letter}, {"{W}", quoted_word}});
  if (lower) absl::AsciiStrToLower(&user);  // ASCII only: multi-byte UTF-8 is left as it is
  if (rng.Random() < 0.5) user += "?";

  const int count = static_cast<int>(std::count(word.begin(), word.end(), letter));
  Example ex;
  ex.answer = absl::StrCat(count);
  ex.conversation.messages = {Message::User(std::move(user)), Message::Assistant(SpellingBeeReply(word, letter, count))};
  return ex;
}

bool SpellingBeeTask::Evaluate(const Example& example, std::string_view completion) const {
  // The reference is read from the reply itself, as GSM8K does, not from a side field.
  const Message& reply = example.conversation.messages.back();
  if (!reply.has_parts() || reply.parts().empty()) return false;
  const std::optional<std::string> want = ExtractHashAnswer(reply.parts().back().text);
  const std::optional<std::string> got = ExtractHashAnswer(completion);
  return want.has_value() && got == want;
}

std::optional<std::string> ExtractHashAnswer(std::string_view text) {
  // "#### (\-?[0-9\.\,]+)", searched left to right: at each "#### ", an optional '-' then
  // at least one of 0-9 . , (greedy). No match here moves on to the next "#### ".
  auto is_num = [](char c) { return (c >= '0' && c <= '9') || c == '.' || c == ','; };
  for (size_t at = text.find("#### "); at != std::string_view::npos; at = text.find("#### ", at + 1)) {
    size_t i = at + 5;
    const bool minus = i < text.size() && text[i] == '-' && i + 1 < text.size() && is_num(text[i + 1]);
    if (minus) ++i;
    if (i >= text.size() || !is_num(text[i])) continue;
    std::string number = minus ? "-" : "";
    for (; i < text.size() && is_num(text[i]); ++i) {
      if (text[i] != ',') number += text[i];
    }
    return number;
  }
  return std::nullopt;
}

}  // namespace gpt_sft::data
