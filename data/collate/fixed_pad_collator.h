// FixedPadCollator (--packing=pad): one conversation per row, right-padded to a fixed
// [B, T]. This is nanochat's init collate (NANOCHAT.md 6.4) with the dynamic width
// max(len)-1 replaced by the fixed T, so the compiled step always sees one shape.
//
// Row b, conversation c with n = len(c.ids) tokens (n cut to T+1 when longer, counted in
// Batch::truncated_rows, never silently):
//   inputs[b, t]  = c.ids[t]                          for t < min(n, T), else pad_id
//   targets[b, t] = c.ids[t+1] if c.mask[t+1] == 1    for t < n-1, else -1
//   segment_ids   = 0 everywhere; positions[b, t] = t.
// A target is kept iff the mask of the *predicted* token is 1, as in nanochat. The pad id
// is the caller's choice; nanochat pads with <|assistant_end|>.
// This is the packed-row rule of row_writer.h with a single segment. One difference from
// nanochat, which writes pad at t = n-1: we keep the conversation's last token there (it
// is normally <|assistant_end|>, the pad id itself). It has no target, and under causal
// attention it only reaches positions >= n-1, none of which has a target, so the loss is
// the same.
#ifndef GPT_SFT_DATA_COLLATE_FIXED_PAD_COLLATOR_H_
#define GPT_SFT_DATA_COLLATE_FIXED_PAD_COLLATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/collate/batch.h"
#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

struct FixedPadOptions {
  int B = 4;            // rows per batch
  int T = 2048;         // positions per row
  int32_t pad_id = -1;  // required (>= 0): the id of <|assistant_end|> in nanochat
};

class FixedPadCollator {
 public:
  /// InvalidArgument unless B > 0, T > 0 and pad_id >= 0.
  static absl::StatusOr<FixedPadCollator> Create(const FixedPadOptions& options);

  /// Collates exactly B conversations, row b from rows[b]. InvalidArgument when rows has
  /// another size or a conversation's ids and mask differ in length.
  absl::StatusOr<Batch> Collate(absl::Span<const RenderedConversation> rows) const;

  const FixedPadOptions& options() const { return options_; }

 private:
  explicit FixedPadCollator(const FixedPadOptions& options) : options_(options) {}
  FixedPadOptions options_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_FIXED_PAD_COLLATOR_H_
