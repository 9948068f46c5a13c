// Implements the multiple-choice tasks.
#include "data/tasks/multiple_choice_task.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "data/tasks/jsonl_file.h"
#include "data/tasks/python_random.h"

namespace gpt_sft::data {
namespace {

absl::StatusOr<MultipleChoiceQuestion> ParseQuestion(const std::string& line, const std::string& where) {
  auto bad = [&](const std::string& m) { return absl::InvalidArgumentError(absl::StrCat(where, ": ", m)); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    return bad(absl::StrCat("malformed JSON: ", e.what()));
  }
  MultipleChoiceQuestion q;
  try {
    q.question = j.at("question").get<std::string>();
    q.choices = j.at("choices").get<std::vector<std::string>>();
    q.answer = j.at("answer").get<std::string>();
    if (j.contains("letters")) q.letters = j["letters"].get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    return bad(absl::StrCat("expected {\"question\": str, \"choices\": [str], \"answer\": str}: ", e.what()));
  }
  if (q.choices.size() < 2) return bad("a question needs at least 2 choices");
  if (q.letters.empty()) {
    for (size_t i = 0; i < q.choices.size(); ++i) q.letters.push_back(std::string(1, static_cast<char>('A' + i)));
  }
  if (q.letters.size() != q.choices.size()) return bad("\"letters\" and \"choices\" differ in length");
  if (std::find(q.letters.begin(), q.letters.end(), q.answer) == q.letters.end()) {
    return bad(absl::StrCat("answer \"", q.answer, "\" is not one of the letters"));
  }
  return q;
}

}  // namespace

std::string RenderMultipleChoice(const MultipleChoiceQuestion& q) {
  std::string s = absl::StrCat("Multiple Choice question: ", q.question, "\n");
  for (size_t i = 0; i < q.choices.size(); ++i) absl::StrAppend(&s, "- ", q.choices[i], "=", q.letters[i], "\n");
  absl::StrAppend(&s, "\nRespond only with the letter of the correct answer.");
  return s;
}

Example MultipleChoiceExample(const MultipleChoiceQuestion& q) {
  Example ex;
  ex.conversation.messages = {{Role::kUser, RenderMultipleChoice(q), {}}, {Role::kAssistant, q.answer, {}}};
  ex.letters = q.letters;
  ex.answer = q.answer;
  return ex;
}

absl::StatusOr<std::unique_ptr<MultipleChoiceTask>> MultipleChoiceTask::Load(const std::string& path) {
  std::vector<MultipleChoiceQuestion> questions;
  absl::Status s = ForEachJsonlLine(path, [&](const std::string& line, const std::string& where) {
    absl::StatusOr<MultipleChoiceQuestion> q = ParseQuestion(line, where);
    if (!q.ok()) return q.status();
    questions.push_back(*std::move(q));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return std::make_unique<MultipleChoiceTask>("MultipleChoice(" + path + ")", std::move(questions));
}

absl::StatusOr<Example> MultipleChoiceTask::GetExample(int64_t index) const {
  if (index < 0 || index >= num_examples()) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " of ", num_examples()));
  }
  return MultipleChoiceExample(questions_[index]);
}

absl::StatusOr<Example> SyntheticMultipleChoiceTask::GetExample(int64_t index) const {
  if (index < 0 || index >= n_) return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index));
  PythonRandom rng(seed_ * 1000003 + index);
  const int a = static_cast<int>(rng.RandBelow(50)) + 1, b = static_cast<int>(rng.RandBelow(50)) + 1;
  const int right = a + b;
  std::vector<int> values = {right};
  while (values.size() < 4) {  // distinct wrong answers near the right one
    int v = right + static_cast<int>(rng.RandBelow(21)) - 10;
    if (v > 0 && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  rng.Shuffle(&values);
  MultipleChoiceQuestion q;
  q.question = absl::StrCat("What is ", a, " + ", b, "?");
  for (int i = 0; i < 4; ++i) {
    q.choices.push_back(absl::StrCat(values[i]));
    q.letters.push_back(std::string(1, static_cast<char>('A' + i)));
    if (values[i] == right) q.answer = q.letters.back();
  }
  return MultipleChoiceExample(q);
}

}  // namespace gpt_sft::data
