#include "data/collate/fixed_pad_collator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::StatusOr<FixedPadCollator> FixedPadCollator::Create(const FixedPadOptions& options) {
  if (options.B <= 0 || options.T <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("FixedPadCollator: shape [B, T] = [", options.B,
                                                   ", ", options.T, "] must be positive"));
  }
  if (options.pad_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("FixedPadCollator: pad_id = ", options.pad_id,
                     "; pass the id of <|assistant_end|> (a token id >= 0)"));
  }
  return FixedPadCollator(options);
}

void FixedPadCollator::WriteRow(const RenderedConversation& c, int n, int b, Batch& batch) const {
  const size_t row = batch.Offset(b, 0);
  const int shifted = std::max(n - 1, 0);  // inputs ids[:-1], targets ids[1:]
  for (int t = 0; t < batch.T; ++t) {
    batch.segment_ids[row + t] = 0;
    batch.positions[row + t] = t;
    batch.inputs[row + t] = t < shifted ? c.ids[t] : options_.pad_id;
  }
  for (int t = 0; t < shifted; ++t) {
    if (c.mask[t + 1] == 0) continue;
    batch.targets[row + t] = c.ids[t + 1];
    ++batch.supervised_tokens;
  }
  batch.content_positions += shifted;
}

absl::StatusOr<Batch> FixedPadCollator::Collate(absl::Span<const RenderedConversation> rows) const {
  const int B = options_.B;
  const int T = options_.T;
  if (static_cast<int64_t>(rows.size()) != B) {
    return absl::InvalidArgumentError(
        absl::StrCat("FixedPadCollator::Collate: got ", rows.size(), " conversations for B = ", B));
  }
  Batch batch = NewBatch(B, T);
  for (int b = 0; b < B; ++b) {
    const RenderedConversation& c = rows[b];
    if (c.ids.size() != c.mask.size()) {
      return absl::InvalidArgumentError(absl::StrCat("FixedPadCollator::Collate: row ", b, " has ",
                                                     c.ids.size(), " ids but ", c.mask.size(),
                                                     " mask entries"));
    }
    batch.truncated_rows += c.ids.size() > static_cast<size_t>(T);
    ++batch.conversations;
    WriteRow(c, static_cast<int>(std::min<size_t>(c.ids.size(), T)), b, batch);
  }
  return batch;
}

}  // namespace gpt_sft::data
