// Implements TaskSource.
#include "data/pipeline/task_source.h"

#include "absl/strings/str_cat.h"
#include "data/conversation/render.h"

namespace gpt_sft::data {

absl::StatusOr<RenderedConversation> TaskSource::Render(int64_t index) const {
  absl::StatusOr<Example> ex = mixture_->Get(index);
  if (!ex.ok()) return ex.status();
  absl::StatusOr<RenderedConversation> r = RenderConversation(ex->conversation, *tokenizer_, max_tokens_);
  if (!r.ok()) {
    const auto [task, local] = mixture_->Locate(index);
    return absl::InvalidArgumentError(absl::StrCat(mixture_->tasks()[task]->name(), " example ", local, ": ",
                                                   r.status().message()));
  }
  return r;
}

}  // namespace gpt_sft::data
