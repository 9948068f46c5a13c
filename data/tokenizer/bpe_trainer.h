// Byte-level BPE training (nanochat's rustbpe semantics): count the unique chunks of the
// split pattern, then repeatedly merge the most frequent adjacent pair.
#ifndef GPT_SFT_DATA_TOKENIZER_BPE_TRAINER_H_
#define GPT_SFT_DATA_TOKENIZER_BPE_TRAINER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/tokenizer/split_pattern.h"

namespace gpt_sft::data {

/// One merge: tokens `left` and `right` become token 256 + its index in the merge list.
using BpeMerge = std::pair<int32_t, int32_t>;

/// The most merges a vocabulary may have: far above nanochat's 65,271, and small enough
/// that every id fits an int32 with room to spare.
inline constexpr int kMaxMerges = 1 << 24;

/// Learns up to `num_merges` merges from `texts`.
///
/// Algorithm:
///  1. Split every text into chunks and count each distinct chunk once (merges never
///     cross chunk boundaries, and equal chunks merge identically).
///  2. Count every adjacent pair of ids, weighted by chunk frequency; keep the counts in
///     a max-heap ordered by (count desc, pair asc), so ties go to the smaller pair
///     compared as (left, right), as rustbpe does.
///  3. Pop the best pair whose count is still current, give it the next id, and rewrite
///     only the chunks that contain it, updating the counts of the pairs they touch.
///  4. Stop after `num_merges` merges, or earlier when no pair occurs any more.
std::vector<BpeMerge> TrainBpe(const SplitPattern& pattern, const std::vector<std::string>& texts,
                               int num_merges);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_BPE_TRAINER_H_
