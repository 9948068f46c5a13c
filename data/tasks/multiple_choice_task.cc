// Implements the JSONL multiple-choice task and nanochat's render_mc.
#include "data/tasks/multiple_choice_task.h"

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "data/tasks/jsonl_file.h"

namespace gpt_sft::data {
namespace {

using nlohmann::json;

// Reads j[key] as a string (or, below, a list of strings); errors name the key.
absl::Status ReadString(const json& j, const char* key, std::string* out) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" must be a string"));
  *out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadStrings(const json& j, const char* key, std::vector<std::string>* out) {
  const auto it = j.find(key);
  const absl::Status bad = absl::InvalidArgumentError(absl::StrCat("\"", key, "\" must be a list of strings"));
  if (it == j.end() || !it->is_array()) return bad;
  for (const json& s : *it) {
    if (!s.is_string()) return bad;
    out->push_back(s.get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<MultipleChoiceQuestion> ParseQuestion(const std::string& line) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", e.what()));
  }
  if (!j.is_object()) return absl::InvalidArgumentError("expected a JSON object {\"question\", \"choices\", \"answer\"}");
  MultipleChoiceQuestion q;
  absl::Status s = ReadString(j, "question", &q.question);
  if (s.ok()) s = ReadStrings(j, "choices", &q.choices);
  if (s.ok()) s = ReadString(j, "answer", &q.answer);
  if (s.ok() && j.contains("letters")) s = ReadStrings(j, "letters", &q.letters);
  if (!s.ok()) return s;
  if (!j.contains("letters")) {
    for (size_t i = 0; i < q.choices.size() && i < 26; ++i) q.letters.push_back(std::string(1, static_cast<char>('A' + i)));
  }
  if (absl::Status v = ValidateMultipleChoice(q); !v.ok()) return v;
  return q;
}

}  // namespace

absl::Status ValidateMultipleChoice(const MultipleChoiceQuestion& q) {
  if (q.choices.size() < 2) return absl::InvalidArgumentError(absl::StrCat("a question needs at least 2 choices, got ", q.choices.size()));
  if (q.letters.size() != q.choices.size()) {
    return absl::InvalidArgumentError(absl::StrCat(q.letters.size(), " letters for ", q.choices.size(),
                                                   " choices (default letters go up to Z)"));
  }
  absl::flat_hash_set<std::string> seen;
  for (const std::string& l : q.letters) {
    if (l.empty()) return absl::InvalidArgumentError("a letter is empty");
    if (!seen.insert(l).second) return absl::InvalidArgumentError(absl::StrCat("letter \"", l, "\" appears twice"));
  }
  if (!seen.contains(q.answer)) return absl::InvalidArgumentError(absl::StrCat("answer \"", q.answer, "\" is not one of the letters"));
  return absl::OkStatus();
}

std::string RenderMultipleChoice(const MultipleChoiceQuestion& q) {
  std::string s = absl::StrCat("Multiple Choice question: ", q.question, "\n");
  for (size_t i = 0; i < q.choices.size(); ++i) absl::StrAppend(&s, "- ", q.choices[i], "=", q.letters[i], "\n");
  absl::StrAppend(&s, "\nRespond only with the letter of the correct answer.");
  return s;
}

Example MultipleChoiceExample(const MultipleChoiceQuestion& q) {
  Example ex;
  ex.conversation.messages = {Message::User(RenderMultipleChoice(q)), Message::Assistant(q.answer)};
  ex.letters = q.letters;
  ex.answer = q.answer;
  return ex;
}

absl::StatusOr<std::unique_ptr<MultipleChoiceTask>> MultipleChoiceTask::Load(const std::string& path) {
  std::vector<MultipleChoiceQuestion> questions;
  absl::Status s = ForEachJsonlLine(path, [&](const std::string& line, const std::string& where) {
    absl::StatusOr<MultipleChoiceQuestion> q = ParseQuestion(line);
    if (!q.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", q.status().message()));
    questions.push_back(*std::move(q));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return std::make_unique<MultipleChoiceTask>("MultipleChoice(" + path + ")", std::move(questions));
}

absl::StatusOr<Example> MultipleChoiceTask::GetExample(int64_t index) const {
  if (index < 0 || index >= num_examples()) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " is outside [0, ", num_examples(), ")"));
  }
  return MultipleChoiceExample(questions_[index]);
}

}  // namespace gpt_sft::data
