// Implements TrainBpe: incremental pair counts over unique chunks, lazy max-heap.
#include "data/tokenizer/bpe_trainer.h"

#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace gpt_sft::data {
namespace {

using PairKey = uint64_t;  // (left << 32) | right: numeric order == (left, right) order

PairKey Key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct Word {
  std::vector<int32_t> ids;
  int64_t count;
};

struct HeapEntry {
  int64_t count;
  PairKey pair;
  // priority_queue pops the largest: larger count first, then the smaller pair.
  bool operator<(const HeapEntry& o) const {
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

class PairCounts {
 public:
  void Add(const Word& w, int word_index, int64_t sign) {
    for (size_t i = 0; i + 1 < w.ids.size(); ++i) {
      PairKey k = Key(w.ids[i], w.ids[i + 1]);
      counts_[k] += sign * w.count;
      touched_.insert(k);
      if (sign > 0) where_[k].push_back(word_index);
    }
  }
  void PushTouched() {
    for (PairKey k : touched_) {
      int64_t c = counts_[k];
      if (c > 0) heap_.push({c, k});
    }
    touched_.clear();
  }
  // The best pair whose heap count is still its true count, or false when none is left.
  bool PopBest(PairKey* pair) {
    while (!heap_.empty()) {
      HeapEntry e = heap_.top();
      heap_.pop();
      auto it = counts_.find(e.pair);
      if (it != counts_.end() && it->second == e.count && e.count > 0) {
        *pair = e.pair;
        return true;
      }
    }
    return false;
  }
  std::vector<int> TakeWords(PairKey k) {
    std::vector<int> words = std::move(where_[k]);
    where_.erase(k);
    return words;
  }

 private:
  absl::flat_hash_map<PairKey, int64_t> counts_;
  absl::flat_hash_map<PairKey, std::vector<int>> where_;
  absl::flat_hash_set<PairKey> touched_;
  std::priority_queue<HeapEntry> heap_;
};

std::vector<Word> CountUniqueChunks(const SplitPattern& pattern,
                                    const std::vector<std::string>& texts) {
  absl::flat_hash_map<std::string, int64_t> chunk_counts;
  for (const std::string& text : texts) {
    // Debian's Abseil has its own string_view type: its hash maps look up by that one.
    pattern.ForEachChunk(text, [&](std::string_view chunk) {
      ++chunk_counts[absl::string_view(chunk.data(), chunk.size())];
    });
  }
  std::vector<Word> words;
  words.reserve(chunk_counts.size());
  for (const auto& [chunk, count] : chunk_counts) {
    Word w{{}, count};
    for (unsigned char c : chunk) w.ids.push_back(c);
    words.push_back(std::move(w));
  }
  // Hash-map order is arbitrary; sort so training is deterministic across runs.
  std::sort(words.begin(), words.end(), [](const Word& a, const Word& b) { return a.ids < b.ids; });
  return words;
}

void MergeInPlace(std::vector<int32_t>* ids, int32_t left, int32_t right, int32_t merged) {
  size_t out = 0;
  for (size_t i = 0; i < ids->size(); ++i) {
    if (i + 1 < ids->size() && (*ids)[i] == left && (*ids)[i + 1] == right) {
      (*ids)[out++] = merged;
      ++i;
    } else {
      (*ids)[out++] = (*ids)[i];
    }
  }
  ids->resize(out);
}

}  // namespace

std::vector<BpeMerge> TrainBpe(const SplitPattern& pattern, const std::vector<std::string>& texts,
                               int num_merges) {
  std::vector<Word> words = CountUniqueChunks(pattern, texts);
  PairCounts counts;
  for (size_t w = 0; w < words.size(); ++w) counts.Add(words[w], static_cast<int>(w), +1);
  counts.PushTouched();

  std::vector<BpeMerge> merges;
  std::vector<int> last_rewritten(words.size(), -1);
  while (static_cast<int>(merges.size()) < num_merges) {
    PairKey best;
    if (!counts.PopBest(&best)) break;  // ran out of pairs: a smaller vocabulary
    const int32_t left = static_cast<int32_t>(best >> 32);
    const int32_t right = static_cast<int32_t>(best & 0xffffffffu);
    const int32_t merged = 256 + static_cast<int32_t>(merges.size());
    const int merge_index = static_cast<int>(merges.size());
    merges.emplace_back(left, right);
    for (int w : counts.TakeWords(best)) {
      if (last_rewritten[w] == merge_index) continue;  // listed twice
      last_rewritten[w] = merge_index;
      counts.Add(words[w], w, -1);
      MergeInPlace(&words[w].ids, left, right, merged);
      counts.Add(words[w], w, +1);
    }
    counts.PushTouched();
  }
  return merges;
}

}  // namespace gpt_sft::data
