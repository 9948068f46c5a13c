#include "data/collate/in_memory_source.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::StatusOr<RenderedConversation> InMemoryConversationSource::Render(int64_t index) const {
  if (index < 0 || index >= size()) {
    return absl::OutOfRangeError(absl::StrCat("InMemoryConversationSource::Render: index ", index,
                                              " is outside [0, ", size(), ")"));
  }
  return conversations_[static_cast<size_t>(index)];
}

}  // namespace gpt_sft::data
