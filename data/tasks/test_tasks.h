// Test helpers for data/tasks: a numbered task, and a temp-file writer for bad-file cases.
#ifndef GPT_SFT_DATA_TASKS_TEST_TASKS_H_
#define GPT_SFT_DATA_TASKS_TEST_TASKS_H_

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "data/tasks/task.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {

/// Writes `contents` to `name` in the test's temp directory and returns its path.
inline std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

/// n numbered one-turn conversations whose answer is "<id>:<index>".

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
