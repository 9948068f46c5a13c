#include "data/collate/sharded_stream.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::StatusOr<ShardedConversationStream> ShardedConversationStream::Create(
    const ConversationSource* source, int rank, int world_size) {
  if (source == nullptr) {
    return absl::InvalidArgumentError("ShardedConversationStream: source is null");
  }
  if (world_size <= 0 || rank < 0 || rank >= world_size) {
    return absl::InvalidArgumentError(absl::StrCat("ShardedConversationStream: rank ", rank,
                                                   " is outside [0, world_size = ", world_size,
                                                   ")"));
  }
  if (source->size() <= rank) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ShardedConversationStream: the source has ", source->size(), " conversations, so rank ",
        rank, " of ", world_size, " would get none; use fewer ranks or more data"));
  }
  return ShardedConversationStream(source, rank, world_size);
}

absl::StatusOr<RenderedConversation> ShardedConversationStream::Next() {
  const int64_t index = cursor_;
  absl::StatusOr<RenderedConversation> c = source_->Render(index);
  if (!c.ok()) {
    return absl::Status(c.status().code(),
                        absl::StrCat("conversation ", index, ": ", c.status().message()));
  }
  if (c->ids.size() != c->mask.size()) {
    return absl::InvalidArgumentError(absl::StrCat("conversation ", index, " has ", c->ids.size(),
                                                   " ids but ", c->mask.size(), " mask entries"));
  }
  if (c->ids.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("conversation ", index, " has no tokens"));
  }
  ++consumed_;
  cursor_ += world_size_;
  if (cursor_ >= source_->size()) {
    cursor_ = rank_;
    ++epochs_completed_;
  }
  return c;
}

}  // namespace gpt_sft::data
