// ShardedConversationStream: one rank's endless walk over a ConversationSource. Rank r of W
// visits indices r, r+W, r+2W, ... < size, then starts again at r (the next epoch), as
// nanochat's init SFT generator does (NANOCHAT.md 6.4). The W ranks' index sets are thus
// disjoint and together cover the source exactly once per epoch, every epoch.
//
// (nanochat HEAD's best-fit loader instead continues at (cursor+W) % size across the wrap,
// so with size % W != 0 ranks drift into each other's indices in later epochs. We keep the
// init walk for both packings because it keeps the partition exact.)
#ifndef GPT_SFT_DATA_COLLATE_SHARDED_STREAM_H_
#define GPT_SFT_DATA_COLLATE_SHARDED_STREAM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "data/collate/conversation_source.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

class ShardedConversationStream {
 public:
  /// `source` is borrowed and must outlive the stream. InvalidArgument unless
  /// 0 <= rank < world_size; FailedPrecondition when the source has no index for this rank
  /// (size() <= rank), since the stream could then never yield.
  static absl::StatusOr<ShardedConversationStream> Create(const ConversationSource* source,
                                                          int rank, int world_size);

  /// The conversation at next_index(), then advances (wrapping into the next epoch).
  /// Source errors pass through with the index added; a conversation whose ids and mask
  /// differ in length, or that has no tokens, is InvalidArgument naming its index.
  absl::StatusOr<RenderedConversation> Next();

  /// Source index the next call to Next() renders.
  int64_t next_index() const { return cursor_; }
  /// Conversations returned so far.
  int64_t consumed() const { return consumed_; }
  /// Times the walk has passed its last index and wrapped to `rank` again.
  int64_t epochs_completed() const { return epochs_completed_; }
  /// Conversations this rank visits per epoch: ceil((size - rank) / world_size).
  int64_t per_epoch() const { return (source_->size() - rank_ + world_size_ - 1) / world_size_; }

 private:
  ShardedConversationStream(const ConversationSource* source, int rank, int world_size)
      : source_(source), rank_(rank), world_size_(world_size), cursor_(rank) {}

  const ConversationSource* source_;
  int rank_;
  int world_size_;
  int64_t cursor_;
  int64_t consumed_ = 0;
  int64_t epochs_completed_ = 0;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_SHARDED_STREAM_H_
