// Implements SyntheticMultipleChoiceTask.
#include "data/tasks/synthetic_multiple_choice.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/tasks/python_random.h"

namespace gpt_sft::data {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

MultipleChoiceQuestion SyntheticMultipleChoiceTask::Question(int64_t index) const {
  const uint64_t i = static_cast<uint64_t>(index);
  PythonRandom rng = PythonRandom::FromWords({static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                                              static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
  auto below = [&](int64_t n) { return static_cast<int64_t>(rng.RandBelow(static_cast<uint64_t>(n))); };
  MultipleChoiceQuestion q;
  std::vector<int64_t> values;
  int64_t right = 0;
  const int64_t kind = below(4);
  if (kind == 3) {
    q.question = "Which of these numbers is the largest?";
    while (values.size() < 4) {
      const int64_t v = 1 + below(99);
      if (!Contains(values, v)) values.push_back(v);
    }
    right = *std::max_element(values.begin(), values.end());
  } else {
    int64_t a, b;
    if (kind == 0) {
      a = 1 + below(50), b = 1 + below(50), right = a + b;
      q.question = absl::StrCat("What is ", a, " + ", b, "?");
    } else if (kind == 1) {
      a = 10 + below(90);
      b = 1 + below(a - 1);
      right = a - b;
      q.question = absl::StrCat("What is ", a, " - ", b, "?");
    } else {
      a = 2 + below(11), b = 2 + below(11), right = a * b;
      q.question = absl::StrCat("What is ", a, " * ", b, "?");
    }
    values.push_back(right);
    while (values.size() < 4) {  // distinct wrong answers near the right one
      const int64_t v = right + below(21) - 10;
      if (v >= 0 && !Contains(values, v)) values.push_back(v);
    }
  }
  rng.Shuffle(&values);
  for (size_t k = 0; k < values.size(); ++k) {
    q.choices.push_back(absl::StrCat(values[k]));
    q.letters.push_back(std::string(1, static_cast<char>('A' + k)));
    if (values[k] == right) q.answer = q.letters.back();
  }
  return q;
}

absl::StatusOr<Example> SyntheticMultipleChoiceTask::GetExample(int64_t index) const {
  if (index < 0 || index >= n_) {
    return absl::OutOfRangeError(absl::StrCat(name(), ": example ", index, " is outside [0, ", n_, ")"));
  }
  return MultipleChoiceExample(Question(index));
}

}  // namespace gpt_sft::data
