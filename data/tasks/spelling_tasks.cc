// Implements the spelling tasks. The user templates are our own wording (nanochat's 51
// are not copied); the assistant's structure follows nanochat's.
#include "data/tasks/spelling_tasks.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "data/tasks/python_random.h"

namespace gpt_sft::data {
namespace {

// {L} is the letter and {W} the word, each already quoted.
const std::vector<std::string>& Templates() {
  static const auto* t = new std::vector<std::string>{
      "How many {L} are in the word {W}",
      "Count the letter {L} in {W}",
      "How many times does {L} appear in {W}",
      "In {W}, how often do you see the letter {L}",
      "What is the number of {L} letters in {W}",
      "¿Cuántas {L} hay en la palabra {W}",
      "¿Cuántas veces aparece la letra {L} en {W}",
      "Combien de {L} y a-t-il dans le mot {W}",
      "Wie oft kommt der Buchstabe {L} in {W} vor",
      "Wie viele {L} hat das Wort {W}",
      "{W}这个词里有几个{L}",
      "단어 {W}에 {L}가 몇 개 있나요",
      "{W}という単語に{L}はいくつありますか",
  };
  return *t;
}

std::string Quote(PythonRandom& rng, const std::string& s) {
  switch (rng.RandBelow(3)) {
    case 0: return s;
    case 1: return "'" + s + "'";
    default: return "\"" + s + "\"";
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const std::vector<std::string>>> LoadWordList(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open word list"));
  auto words = std::make_shared<std::vector<std::string>>();
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && std::all_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
      words->push_back(line);
    }
  }
  if (words->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no lowercase a-z words"));
  return std::shared_ptr<const std::vector<std::string>>(std::move(words));
}

int64_t SpellingSeed(Split split, int64_t index) {
  return split == Split::kTrain ? index : 10'000'000 + index;
}

SimpleSpellingTask::SimpleSpellingTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size,
                                       Split split)
    : words_(*words), size_(size), split_(split) {
  PythonRandom(42).Shuffle(&words_);
}

absl::StatusOr<Example> SimpleSpellingTask::GetExample(int64_t index) const {
  PythonRandom rng(SpellingSeed(split_, index));
  const std::string& word = rng.Choice(words_);
  std::vector<std::string> letters;
  for (char c : word) letters.push_back(std::string(1, c));
  Example ex;
  ex.answer = absl::StrCat(word, ":", absl::StrJoin(letters, ","));
  ex.conversation.messages = {{Role::kUser, "Spell the word: " + word, {}}, {Role::kAssistant, ex.answer, {}}};
  return ex;
}

SpellingBeeTask::SpellingBeeTask(std::shared_ptr<const std::vector<std::string>> words, int64_t size, Split split)
    : words_(std::move(words)), size_(size), split_(split) {}

absl::StatusOr<Example> SpellingBeeTask::GetExample(int64_t index) const {
  PythonRandom rng(SpellingSeed(split_, index));
  const std::string& word = rng.Choice(*words_);
  char letter;
  if (rng.Random() < 0.9) {
    letter = word[rng.RandBelow(word.size())];
  } else {
    letter = static_cast<char>('a' + rng.RandBelow(26));
  }
  std::string user = absl::StrReplaceAll(rng.Choice(Templates()), {{"{L}", Quote(rng, std::string(1, letter))},
                                                                    {"{W}", Quote(rng, word)}});
  if (rng.Random() < 0.3) user = Lower(user);
  if (rng.Random() < 0.5) user += "?";

  const int count = static_cast<int>(std::count(word.begin(), word.end(), letter));
  std::vector<std::string> spelled;
  for (char c : word) spelled.push_back(std::string(1, c));
  std::string manual = absl::StrCat("We are asked to count the letter '", std::string(1, letter), "' in '", word,
                                    "'. Spelling it out: ", word, ":", absl::StrJoin(spelled, ","), "\n");
  int hits = 0;
  for (size_t i = 0; i < word.size(); ++i) {
    absl::StrAppend(&manual, i + 1, ":", std::string(1, word[i]));
    if (word[i] == letter) absl::StrAppend(&manual, " hit! count=", ++hits);
    absl::StrAppend(&manual, "\n");
  }
  absl::StrAppend(&manual, "This gives us ", count, ".");
  Message reply{Role::kAssistant, "", {}};
  reply.parts = {{Part::Kind::kText, manual},
                 {Part::Kind::kText, "\n\nLet me double check this using Python:\n\n"},
                 {Part::Kind::kPython, absl::StrCat("'", word, "'.count('", std::string(1, letter), "')")},
                 {Part::Kind::kPythonOutput, absl::StrCat(count)},
                 {Part::Kind::kText, absl::StrCat("\n\nPython gives us ", count, ".\n\nMy final answer is:\n\n#### ",
                                                  count)}};
  Example ex;
  ex.answer = absl::StrCat(count);
  ex.conversation.messages = {{Role::kUser, user, {}}, std::move(reply)};
  return ex;
}

bool SpellingBeeTask::Evaluate(const Example& example, std::string_view completion) const {
  return ExtractHashAnswer(completion) == example.answer;
}

std::string ExtractHashAnswer(std::string_view text) {
  // The regex "#### (\-?[0-9\.\,]+)": the first "#### " followed by at least one of -0-9.,
  for (size_t at = text.find("#### "); at != std::string_view::npos; at = text.find("#### ", at + 1)) {
    size_t i = at + 5;
    std::string number;
    if (i < text.size() && text[i] == '-') number += text[i++];
    size_t digits = 0;
    for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == ',');
         ++i, ++digits) {
      if (text[i] != ',') number += text[i];
    }
    if (digits > 0) return number;
  }
  return "";
}

}  // namespace gpt_sft::data
