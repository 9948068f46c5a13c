// A task for tests: n numbered one-turn conversations whose answer is "<id>:<index>".
#ifndef GPT_SFT_DATA_TASKS_TEST_TASKS_H_
#define GPT_SFT_DATA_TASKS_TEST_TASKS_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

class NumberedTask : public Task {
 public:
  NumberedTask(int id, int64_t n) : id_(id), n_(n) {}
  std::string name() const override { return absl::StrCat("Numbered", id_); }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return n_; }
  absl::StatusOr<Example> GetExample(int64_t i) const override {
    if (i < 0 || i >= n_) return absl::OutOfRangeError(absl::StrCat(name(), ": example ", i));
    Example ex;
    ex.answer = absl::StrCat(id_, ":", i);
    ex.conversation.messages = {Message::User(absl::StrCat("q", i)), Message::Assistant(ex.answer)};
    return ex;
  }

 private:
  int id_;
  int64_t n_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_TEST_TASKS_H_
