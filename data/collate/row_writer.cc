#include "data/collate/row_writer.h"

#include <algorithm>

namespace gpt_sft::data {

RowWriter::RowWriter(Batch* batch, int b, int32_t pad_id) : batch_(batch), b_(b), pad_id_(pad_id) {}

void RowWriter::Append(const RenderedConversation& conversation, int n) {
  const int T = batch_->T;
  const size_t row = batch_->Offset(b_, 0);
  const int32_t segment = segments_++;
  // Slots filled_ .. filled_+n-1; only those below T are inputs (slot T is a target only).
  const int as_inputs = std::min(n, T - filled_);
  for (int i = 0; i < as_inputs; ++i) {
    batch_->inputs[row + filled_ + i] = conversation.ids[i];
    batch_->segment_ids[row + filled_ + i] = segment;
    batch_->positions[row + filled_ + i] = i;
  }
  // Token i (i >= 1) is the target of the input one slot before it, in the same segment.
  // Token 0 is never a target: its predecessor is another segment (or nothing).
  for (int i = 1; i < n; ++i) {
    if (conversation.mask[i] != 0) {
      batch_->targets[row + filled_ + i - 1] = conversation.ids[i];
      ++supervised_;
    }
  }
  batch_->content_positions += as_inputs;
  filled_ += n;
}

void RowWriter::Finish() {
  const int T = batch_->T;
  const size_t row = batch_->Offset(b_, 0);
  const int32_t segment = segments_;
  if (filled_ < T) {
    int32_t position = 0;
    for (int t = filled_; t < T; ++t) {
      batch_->inputs[row + t] = pad_id_;
      batch_->segment_ids[row + t] = segment;
      batch_->positions[row + t] = position++;
    }
  }
  batch_->supervised_tokens += supervised_;
}

}  // namespace gpt_sft::data
