// Implements BpeEncoder: the join table, then the linear and the heap merge loops.
#include "data/tokenizer/bpe_encoder.h"

#include <cstring>
#include <functional>
#include <queue>
#include <utility>

namespace gpt_sft::data {
namespace {

absl::string_view AsKey(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

BpeEncoder::BpeEncoder(absl::flat_hash_map<std::string, int32_t> id_of_bytes)
    : id_of_bytes_(std::move(id_of_bytes)) {
  // Every cut of every multi-byte token into two tokens: a token of L bytes has L-1 cuts.
  for (const auto& [bytes, id] : id_of_bytes_) {
    const absl::string_view b = bytes;
    for (size_t cut = 1; cut < b.size(); ++cut) {
      auto left = id_of_bytes_.find(b.substr(0, cut));
      if (left == id_of_bytes_.end()) continue;
      auto right = id_of_bytes_.find(b.substr(cut));
      if (right == id_of_bytes_.end()) continue;
      join_.emplace(Key(left->second, right->second), id);
    }
  }
}

void BpeEncoder::EncodeChunk(std::string_view chunk, std::vector<int32_t>* out) const {
  if (chunk.size() == 1) {
    out->push_back(static_cast<unsigned char>(chunk[0]));
  } else if (auto it = id_of_bytes_.find(AsKey(chunk)); it != id_of_bytes_.end()) {
    out->push_back(it->second);  // most words of prose are one token
  } else if (chunk.size() <= kShortChunk) {
    EncodeShort(chunk, out);
  } else {
    EncodeLong(chunk, out);
  }
}

// parts[0..n) are the current tokens; ranks[i] is JoinRank(parts[i], parts[i+1]).
// 1. Find the leftmost lowest rank; stop if it is kNoRank.
// 2. parts[best] becomes the joined token; parts and ranks after it shift left by one.
// 3. Recompute the two ranks next to the new token.
void BpeEncoder::EncodeShort(std::string_view chunk, std::vector<int32_t>* out) const {
  int32_t parts[kShortChunk], ranks[kShortChunk];
  size_t n = chunk.size();
  for (size_t i = 0; i < n; ++i) parts[i] = static_cast<unsigned char>(chunk[i]);
  for (size_t i = 0; i + 1 < n; ++i) ranks[i] = JoinRank(parts[i], parts[i + 1]);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i) {
      if (ranks[i] < ranks[best]) best = i;
    }
    if (ranks[best] == kNoRank) break;
    parts[best] = ranks[best];
    std::memmove(parts + best + 1, parts + best + 2, (n - best - 2) * sizeof(int32_t));
    if (best + 2 < n - 1) {
      std::memmove(ranks + best + 1, ranks + best + 2, (n - best - 3) * sizeof(int32_t));
    }
    --n;
    if (best + 1 < n) ranks[best] = JoinRank(parts[best], parts[best + 1]);
    if (best > 0) ranks[best - 1] = JoinRank(parts[best - 1], parts[best]);
  }
  out->insert(out->end(), parts, parts + n);
}

// Nodes are byte positions in a doubly linked list; rank[p] is the join of node p with
// its successor. The heap holds (rank, position) for every live join, possibly stale:
// an entry counts only if rank[p] still equals it. Ordering by (rank, position) picks
// the leftmost lowest join, as the linear scan does.
void BpeEncoder::EncodeLong(std::string_view chunk, std::vector<int32_t>* out) const {
  const int32_t n = static_cast<int32_t>(chunk.size());
  constexpr int32_t kDead = -1;
  std::vector<int32_t> id(n), next(n), prev(n), rank(n, kNoRank);
  using Entry = std::pair<int32_t, int32_t>;  // (rank, position)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (int32_t i = 0; i < n; ++i) {
    id[i] = static_cast<unsigned char>(chunk[i]);
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  auto update = [&](int32_t p) {  // recompute node p's join with its successor
    rank[p] = next[p] < 0 ? kNoRank : JoinRank(id[p], id[next[p]]);
    if (rank[p] != kNoRank) heap.emplace(rank[p], p);
  };
  for (int32_t i = 0; i + 1 < n; ++i) update(i);
  while (!heap.empty()) {
    const auto [r, p] = heap.top();
    heap.pop();
    if (id[p] == kDead || rank[p] != r) continue;  // stale
    const int32_t q = next[p];
    id[p] = r;
    id[q] = kDead;
    rank[q] = kNoRank;
    next[p] = next[q];
    if (next[q] >= 0) prev[next[q]] = p;
    update(p);
    if (prev[p] >= 0) update(prev[p]);
  }
  for (int32_t p = 0; p >= 0; p = next[p]) out->push_back(id[p]);
}

}  // namespace gpt_sft::data
