// Joins the tasks to the batcher: a TaskMixture rendered through a Tokenizer, as the
// ConversationSource the BatchLoader reads.
#ifndef GPT_SFT_DATA_PIPELINE_TASK_SOURCE_H_
#define GPT_SFT_DATA_PIPELINE_TASK_SOURCE_H_

#include <memory>

#include "data/collate/conversation_source.h"
#include "data/tasks/task_mixture.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {

class TaskSource : public ConversationSource {
 public:
  /// `max_tokens` caps rendering only as a guard; it is set well above the batch's T so
  /// that the collator, not the renderer, truncates (to T ids, as nanochat's
  /// render_conversation(max_tokens = T)), and counts what it cut.
  TaskSource(std::shared_ptr<const TaskMixture> mixture, std::shared_ptr<const Tokenizer> tokenizer,
             int max_tokens)
      : mixture_(std::move(mixture)), tokenizer_(std::move(tokenizer)), max_tokens_(max_tokens) {}

  int64_t size() const override { return mixture_->size(); }
  absl::StatusOr<RenderedConversation> Render(int64_t index) const override;

 private:
  std::shared_ptr<const TaskMixture> mixture_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  int max_tokens_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_PIPELINE_TASK_SOURCE_H_
