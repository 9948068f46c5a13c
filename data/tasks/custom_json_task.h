// nanochat's CustomJSON task: one JSON array of {role, content} messages per line.
#ifndef GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_
#define GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/tasks/task.h"

namespace gpt_sft::data {

class CustomJsonTask : public Task {
 public:
  /// Reads and validates every line now. Unlike nanochat, which warns and yields no rows,
  /// a missing file is an error: a silently empty task hides a typo in a path.
  static absl::StatusOr<std::unique_ptr<CustomJsonTask>> Load(const std::string& path);

  std::string name() const override { return "CustomJSON(" + path_ + ")"; }
  EvalType eval_type() const override { return EvalType::kGenerative; }
  int64_t num_examples() const override { return static_cast<int64_t>(conversations_.size()); }
  absl::StatusOr<Example> GetExample(int64_t index) const override;

 private:
  std::string path_;
  std::vector<Conversation> conversations_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_CUSTOM_JSON_TASK_H_
