#include "data/collate/best_fit_packer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "data/collate/row_writer.h"

namespace gpt_sft::data {

absl::StatusOr<BestFitPacker> BestFitPacker::Create(const BestFitOptions& options) {
  if (options.B <= 0 || options.T <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("BestFitPacker: shape [B, T] = [", options.B,
                                                   ", ", options.T, "] must be positive"));
  }
  if (options.pad_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BestFitPacker: pad_id = ", options.pad_id, "; pass a token id >= 0"));
  }
  if (options.buffer_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BestFitPacker: buffer_size = ", options.buffer_size, " must be positive"));
  }
  return BestFitPacker(options);
}

absl::Status BestFitPacker::Refill(NextConversation next) {
  // nanochat renders with max_tokens = T: a long conversation keeps T ids, so it fills a
  // row's T inputs and supervises at most T-1 targets (the last slot's target is padding).
  const size_t keep = static_cast<size_t>(options_.T);
  while (static_cast<int>(buffer_.size()) < options_.buffer_size) {
    absl::StatusOr<RenderedConversation> c = next();
    if (!c.ok()) return c.status();
    if (c->ids.size() != c->mask.size()) {
      return absl::InvalidArgumentError(absl::StrCat("BestFitPacker: a conversation has ",
                                                     c->ids.size(), " ids but ", c->mask.size(),
                                                     " mask entries"));
    }
    if (c->ids.empty()) {
      return absl::InvalidArgumentError(
          "BestFitPacker: a conversation has no tokens (rendering always emits <|bos|>)");
    }
    const bool cropped = c->ids.size() > keep;
    if (cropped) {
      c->ids.resize(keep);
      c->mask.resize(keep);
    }
    buffer_.push_back(Buffered{*std::move(c), cropped});
  }
  return absl::OkStatus();
}

int BestFitPacker::PickBestFit(int free_slots) const {
  int best = -1;
  size_t best_len = 0;
  for (size_t i = 0; i < buffer_.size(); ++i) {
    const size_t len = buffer_[i].conversation.ids.size();
    if (len <= static_cast<size_t>(free_slots) && len > best_len) {
      best = static_cast<int>(i);
      best_len = len;
    }
  }
  return best;
}

absl::StatusOr<Batch> BestFitPacker::Pack(NextConversation next) {
  Batch batch = NewBatch(options_.B, options_.T);
  for (int b = 0; b < options_.B; ++b) {
    RowWriter row(&batch, b, options_.pad_id);
    while (row.remaining() > 0) {
      if (absl::Status s = Refill(next); !s.ok()) return s;
      const int pick = PickBestFit(row.remaining());
      if (pick < 0) break;
      Buffered chosen = std::move(buffer_[pick]);
      buffer_.erase(buffer_.begin() + pick);
      row.Append(chosen.conversation, static_cast<int>(chosen.conversation.ids.size()));
      batch.truncated_rows += chosen.cropped;
      ++batch.conversations;
    }
    row.Finish();
  }
  return batch;
}

}  // namespace gpt_sft::data
