// RowWriter: writes one row of a Batch from whole conversations laid end to end in T+1
// token slots: best-fit packing's rule (nanochat HEAD: pad the row, then shift it). The
// one-conversation-per-row collator shifts first and pads after, as nanochat's init
// collate does (fixed_pad_collator.h).
//
// The rule. A row is T+1 slots r[0..T]; slot s holds a token id, its mask bit and the
// segment (conversation number within the row) it belongs to. Then for t in 0..T-1:
//   inputs[t]      = r[t]                       (so inputs  = r[:-1])
//   targets[t]     = r[t+1] if mask[t+1] == 1 and segment(t+1) == segment(t), else -1
//                                               (so targets = r[1:], masked)
//   segment_ids[t] = segment(t)                 (a target belongs to its input's segment)
//   positions[t]   = t - (first slot of segment(t))
// The segment test means the last token of conversation k never learns to predict the
// first token of conversation k+1 (nor the first pad slot), whatever their masks say.
// Pad slots carry the pad id and mask 0, so no target ever points at padding.
#ifndef GPT_SFT_DATA_COLLATE_ROW_WRITER_H_
#define GPT_SFT_DATA_COLLATE_ROW_WRITER_H_

#include <cstdint>

#include "data/collate/batch.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

class RowWriter {
 public:
  /// Writes row `b` of `batch`, whose four tensors must already hold B*T values with
  /// targets filled with kIgnoreTarget. `batch` must outlive the writer.
  RowWriter(Batch* batch, int b, int32_t pad_id);

  /// Slots still free, T+1 minus the tokens appended so far.
  int remaining() const { return batch_->T + 1 - filled_; }
  int segments() const { return segments_; }

  /// Appends the first n tokens of `conversation` as a new segment.
  /// Requires 0 < n <= remaining() and n <= conversation.ids.size() == mask.size().
  void Append(const RenderedConversation& conversation, int n);

  /// Fills the free slots with the pad id (mask 0) as a segment of their own (one more
  /// segment id, positions restarting at 0). Call once, last. Updates
  /// batch->supervised_tokens (batch->content_positions is counted by Append).
  void Finish();

 private:
  Batch* batch_;
  int b_;
  int32_t pad_id_;
  int filled_ = 0;    // slots 0 .. filled_-1 hold conversation tokens
  int segments_ = 0;  // conversations appended
  int64_t supervised_ = 0;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_ROW_WRITER_H_
