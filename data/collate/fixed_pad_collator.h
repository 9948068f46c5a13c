// FixedPadCollator (--packing=pad): one conversation per row, right-padded to a fixed
// [B, T]. This is nanochat's init collate (NANOCHAT.md 6.4) with the dynamic width
// max(len)-1 replaced by the fixed T, so the compiled step always sees one shape.
//
// Row b, conversation c: first cut to its first T ids (nanochat renders with
// max_tokens = T; a cut is counted in Batch::truncated_rows, never silent), n = len(c.ids).
// Then shift, then pad, as nanochat does:
//   inputs[b, t]  = c.ids[t]                          for t < n-1, else pad_id
//   targets[b, t] = c.ids[t+1] if c.mask[t+1] == 1    for t < n-1, else -1
//   segment_ids   = 0 everywhere; positions[b, t] = t.
// So a conversation of n <= T ids supervises at most n-1 targets, and a long one at most
// T-1 (position T-1 is always padding). A target is kept iff the mask of the *predicted*
// token is 1, as in nanochat. The pad id is the caller's choice; nanochat pads with
// <|assistant_end|>. Best-fit packing pads first and shifts after (best_fit_packer.h), as
// nanochat HEAD does; the two rules differ only in what sits at input n-1, which no target
// ever sees under causal attention.
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
  int T = 2048;         // positions per row; also the most ids a conversation keeps
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
  // Writes row b from the first n ids of c (n <= T).
  void WriteRow(const RenderedConversation& c, int n, int b, Batch& batch) const;

  FixedPadOptions options_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_FIXED_PAD_COLLATOR_H_
