// Batch: one fixed-shape training batch, the output of both packings (--packing=pad and
// --packing=bestfit). Every tensor is row-major [B, T] int32, so the compiled step sees one
// shape for the whole run.
#ifndef GPT_SFT_DATA_COLLATE_BATCH_H_
#define GPT_SFT_DATA_COLLATE_BATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace gpt_sft::data {

/// A target equal to kIgnoreTarget carries no loss (cross_entropy's ignore_index).
inline constexpr int32_t kIgnoreTarget = -1;

/// Element (b, t) of every tensor lives at index b * T + t.
struct Batch {
  int B = 0;
  int T = 0;
  std::vector<int32_t> inputs;       // [B, T] token ids fed to the model (pad id past content)
  std::vector<int32_t> targets;      // [B, T] next-token ids, kIgnoreTarget where unsupervised
  std::vector<int32_t> segment_ids;  // [B, T] conversation index within the row of input t
  std::vector<int32_t> positions;    // [B, T] rotary position of input t in its segment

  int64_t supervised_tokens = 0;  // targets != kIgnoreTarget
  int64_t truncated_rows = 0;     // conversations in this batch cut to T tokens
  int64_t conversations = 0;      // conversations (whole or cut) placed in this batch
  int64_t content_positions = 0;  // positions whose input is a conversation token, not pad

  size_t Offset(int b, int t) const { return static_cast<size_t>(b) * T + t; }
  int64_t NumPositions() const { return static_cast<int64_t>(B) * T; }
};

/// A [B, T] batch with every target kIgnoreTarget, every other tensor 0 and zero counters;
/// the collators start from it.
Batch NewBatch(int B, int T);

/// Targets that carry loss, counted from `targets` (not from the supervised_tokens field).
int64_t CountSupervised(const Batch& batch);

/// Fraction of the B*T positions whose target is kIgnoreTarget: padding plus the
/// unsupervised tokens (user turns, tool outputs, conversation boundaries). 0 for an empty
/// batch.
double PaddingFraction(const Batch& batch);

/// Fraction of the B*T positions whose input is pad rather than conversation content.
double PadPositionFraction(const Batch& batch);

/// Checks the invariants every collator guarantees: B, T > 0; each tensor holds B*T values;
/// targets are kIgnoreTarget or >= 0; per row, segment ids start at 0 and step by 0 or 1;
/// positions are 0 at each segment start and count up by 1 inside it; supervised_tokens
/// agrees with the targets; 0 <= content_positions <= B*T. The error names the tensor and
/// (b, t) at fault.
absl::Status ValidateBatch(const Batch& batch);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_BATCH_H_
