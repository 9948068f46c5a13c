// ConversationSource: the indexable dataset the batch loader reads, one rendered
// conversation per index. A task mixture plus the tokenizer will implement it; data/collate
// depends only on this interface, not on either of them.
#ifndef GPT_SFT_DATA_COLLATE_CONVERSATION_SOURCE_H_
#define GPT_SFT_DATA_COLLATE_CONVERSATION_SOURCE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

/// A fixed-size, random-access collection of conversations rendered to (ids, mask).
/// Render must be deterministic (the same index always yields the same tokens) and must be
/// callable on a const source; the loader relies on both for reproducible batches.
class ConversationSource {
 public:
  virtual ~ConversationSource() = default;

  /// Number of conversations; indices run 0 .. size()-1.
  virtual int64_t size() const = 0;

  /// The conversation at `index` (0 <= index < size()), rendered to token ids and mask.
  virtual absl::StatusOr<RenderedConversation> Render(int64_t index) const = 0;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_CONVERSATION_SOURCE_H_
