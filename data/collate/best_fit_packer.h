// BestFitPacker (--packing=bestfit): packs whole conversations into fixed [B, T] rows by
// best fit, after nanochat HEAD's BOS-aligned loader (NANOCHAT.md 10), with segment ids and
// per-conversation positions so attention can be document-causal.
//
// Algorithm, per row (capacity T+1 token slots, see below):
//   1. Refill the buffer from the stream until it holds buffer_size conversations. A
//      conversation longer than T is cut to its first T tokens on entry and counted
//      (Batch::truncated_rows of the batch it lands in); nothing else is cut. This is
//      nanochat's render_conversation(max_tokens = T) (NANOCHAT.md 5.6 and 10: HEAD
//      renders to 2048 = max_seq_len and packs rows of max_seq_len + 1), so a long
//      conversation yields T ids and supervises at most T-1 targets.
//   2. Among the buffered conversations that fit entirely in the free slots, take the
//      longest (the earliest in buffer order on ties), remove it from the buffer and
//      append it to the row as the next segment. Repeat from 1.
//   3. When none fits, pad the free slots and close the row.
// So every row starts at a conversation boundary, no conversation is split across rows,
// and every row holds at least one conversation (each fits an empty row after cropping).
// The buffer persists across batches; conversations left in it go into later batches.
//
// From a packed row r[0..T] (T+1 slots) the batch row is (row_writer.h has the details):
//   inputs      = r[0..T-1]  (r[:-1]);   targets = r[1..T]  (r[1:]), then set to -1 where
//                 the predicted token has mask 0, or lies in another segment than the
//                 input (the last token of conversation k predicting the first of k+1),
//                 or is padding;
//   segment_ids = 0, 1, 2, ... per conversation in the row; the pad slots get one more
//                 id after the last conversation's; the target at t belongs to segment
//                 segment_ids[t], the segment of its input;
//   positions   = 0 at the first token of each conversation (and of the padding),
//                 counting up inside it.
// Why T+1 slots: a row that is full to the last slot uses all T inputs and all T targets;
// slot T is only ever a target (of two or more packed conversations; a single one holds at
// most T ids). Padding uses the caller's pad id with mask 0 (nanochat HEAD pads with
// <|bos|>; we take whatever the caller passes).
#ifndef GPT_SFT_DATA_COLLATE_BEST_FIT_PACKER_H_
#define GPT_SFT_DATA_COLLATE_BEST_FIT_PACKER_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "data/collate/batch.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

struct BestFitOptions {
  int B = 4;              // rows per batch
  int T = 2048;           // positions per row; a row packs T+1 token slots
  int32_t pad_id = -1;    // required (>= 0)
  int buffer_size = 100;  // conversations held for choosing (nanochat HEAD: 100)
};

class BestFitPacker {
 public:
  /// Yields the next conversation of an endless stream (e.g. ShardedConversationStream).
  using NextConversation = absl::FunctionRef<absl::StatusOr<RenderedConversation>()>;

  /// InvalidArgument unless B > 0, T > 0, pad_id >= 0 and buffer_size > 0.
  static absl::StatusOr<BestFitPacker> Create(const BestFitOptions& options);

  /// Packs one [B, T] batch, pulling from `next` as the buffer needs. Errors from `next`
  /// pass through; a conversation with no tokens or with ids and mask of different
  /// lengths is InvalidArgument.
  absl::StatusOr<Batch> Pack(NextConversation next);

  /// Conversations pulled from the stream but not yet placed in a batch.
  int64_t buffered() const { return static_cast<int64_t>(buffer_.size()); }
  const BestFitOptions& options() const { return options_; }

 private:
  struct Buffered {
    RenderedConversation conversation;  // already cut to at most T tokens
    bool cropped;
  };

  explicit BestFitPacker(const BestFitOptions& options) : options_(options) {}
  absl::Status Refill(NextConversation next);
  // Index in buffer_ of the longest conversation with at most `free_slots` tokens, the
  // first such on ties; -1 when none fits.
  int PickBestFit(int free_slots) const;

  BestFitOptions options_;
  std::vector<Buffered> buffer_;  // in arrival order
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_BEST_FIT_PACKER_H_
