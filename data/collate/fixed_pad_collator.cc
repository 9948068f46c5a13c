#include "data/collate/fixed_pad_collator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "data/collate/row_writer.h"

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
    const int n = static_cast<int>(std::min<size_t>(c.ids.size(), T + 1));
    batch.truncated_rows += c.ids.size() > static_cast<size_t>(T) + 1;
    ++batch.conversations;
    RowWriter row(&batch, b, options_.pad_id);
    if (n > 0) row.Append(c, n);
    row.Finish(PadLayout::kContinueLastSegment);
  }
  return batch;
}

}  // namespace gpt_sft::data
