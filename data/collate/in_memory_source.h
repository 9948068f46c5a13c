// InMemoryConversationSource: a ConversationSource over conversations already rendered and
// held in memory. Used by tests, benchmarks and tools that build their data in process.
#ifndef GPT_SFT_DATA_COLLATE_IN_MEMORY_SOURCE_H_
#define GPT_SFT_DATA_COLLATE_IN_MEMORY_SOURCE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "data/collate/conversation_source.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

/// Owns its conversations; Render(i) returns a copy of the i-th.
class InMemoryConversationSource : public ConversationSource {
 public:
  explicit InMemoryConversationSource(std::vector<RenderedConversation> conversations)
      : conversations_(std::move(conversations)) {}

  int64_t size() const override { return static_cast<int64_t>(conversations_.size()); }

  /// OutOfRange when index is not in [0, size()).
  absl::StatusOr<RenderedConversation> Render(int64_t index) const override;

 private:
  std::vector<RenderedConversation> conversations_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_IN_MEMORY_SOURCE_H_
