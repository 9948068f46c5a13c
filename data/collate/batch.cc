#include "data/collate/batch.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

absl::Status CheckSize(const std::vector<int32_t>& tensor, const char* name, const Batch& batch) {
  if (static_cast<int64_t>(tensor.size()) != batch.NumPositions()) {
    return absl::InvalidArgumentError(absl::StrCat("Batch.", name, " holds ", tensor.size(),
                                                   " values; [B, T] = [", batch.B, ", ", batch.T,
                                                   "] needs ", batch.NumPositions()));
  }
  return absl::OkStatus();
}

std::string At(const char* name, int b, int t) {
  return absl::StrCat("Batch.", name, "[", b, ", ", t, "]");
}

// Segment ids start at 0 and step by 0 or 1; positions restart at 0 with each segment.
absl::Status CheckRowLayout(const Batch& batch, int b) {
  for (int t = 0; t < batch.T; ++t) {
    const int32_t seg = batch.segment_ids[batch.Offset(b, t)];
    const int32_t pos = batch.positions[batch.Offset(b, t)];
    const int32_t prev_seg = t == 0 ? 0 : batch.segment_ids[batch.Offset(b, t - 1)];
    const bool starts_segment = t == 0 || seg != prev_seg;
    if (seg != prev_seg && seg != prev_seg + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          At("segment_ids", b, t), " = ", seg, " follows ", prev_seg, "; expected it or one more"));
    }
    const int32_t want_pos = starts_segment ? 0 : batch.positions[batch.Offset(b, t - 1)] + 1;
    if (pos != want_pos) {
      return absl::InvalidArgumentError(
          absl::StrCat(At("positions", b, t), " = ", pos, "; expected ", want_pos));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Batch NewBatch(int B, int T) {
  Batch batch;
  batch.B = B;
  batch.T = T;
  const size_t n = static_cast<size_t>(B) * static_cast<size_t>(T);
  batch.inputs.assign(n, 0);
  batch.targets.assign(n, kIgnoreTarget);
  batch.segment_ids.assign(n, 0);
  batch.positions.assign(n, 0);
  return batch;
}

int64_t CountSupervised(const Batch& batch) {
  int64_t count = 0;
  for (int32_t target : batch.targets) count += target != kIgnoreTarget;
  return count;
}

double PaddingFraction(const Batch& batch) {
  const int64_t n = batch.NumPositions();
  if (n == 0) return 0.0;
  return static_cast<double>(n - CountSupervised(batch)) / static_cast<double>(n);
}

double PadPositionFraction(const Batch& batch) {
  const int64_t n = batch.NumPositions();
  if (n == 0) return 0.0;
  return static_cast<double>(n - batch.content_positions) / static_cast<double>(n);
}

absl::Status ValidateBatch(const Batch& batch) {
  if (batch.B <= 0 || batch.T <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Batch shape [", batch.B, ", ", batch.T, "] must be positive"));
  }
  for (auto [tensor, name] :
       {std::pair{&batch.inputs, "inputs"}, std::pair{&batch.targets, "targets"},
        std::pair{&batch.segment_ids, "segment_ids"}, std::pair{&batch.positions, "positions"}}) {
    if (absl::Status s = CheckSize(*tensor, name, batch); !s.ok()) return s;
  }
  for (int b = 0; b < batch.B; ++b) {
    if (batch.segment_ids[batch.Offset(b, 0)] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(At("segment_ids", b, 0), " = ",
                                                     batch.segment_ids[batch.Offset(b, 0)],
                                                     "; every row starts with segment 0"));
    }
    if (absl::Status s = CheckRowLayout(batch, b); !s.ok()) return s;
    for (int t = 0; t < batch.T; ++t) {
      const int32_t target = batch.targets[batch.Offset(b, t)];
      if (target < 0 && target != kIgnoreTarget) {
        return absl::InvalidArgumentError(
            absl::StrCat(At("targets", b, t), " = ", target, "; expected -1 or a token id"));
      }
    }
  }
  if (const int64_t counted = CountSupervised(batch); counted != batch.supervised_tokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("Batch.supervised_tokens = ", batch.supervised_tokens, " but targets hold ",
                     counted, " supervised entries"));
  }
  if (batch.content_positions < 0 || batch.content_positions > batch.NumPositions()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Batch.content_positions = ", batch.content_positions, " is outside [0, ",
                     batch.NumPositions(), "]"));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::data
