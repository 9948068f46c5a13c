// Rank-based byte-pair encoding of one chunk, with tiktoken's rule: the parts start as
// single bytes; repeatedly join the leftmost adjacent pair whose joined bytes form the
// lowest-ranked token, until no adjacent pair joins into a token.
#ifndef GPT_SFT_DATA_TOKENIZER_BPE_ENCODER_H_
#define GPT_SFT_DATA_TOKENIZER_BPE_ENCODER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace gpt_sft::data {

class BpeEncoder {
 public:
  static constexpr int32_t kNoRank = std::numeric_limits<int32_t>::max();
  /// Chunks up to this many bytes take the linear path, longer ones the heap.
  static constexpr size_t kShortChunk = 64;

  /// `id_of_bytes` maps the bytes of every token to its id (== rank), and must hold ids
  /// 0..255 for the single bytes. The encoder keeps the map.
  explicit BpeEncoder(absl::flat_hash_map<std::string, int32_t> id_of_bytes);

  /// Appends the ids of `chunk` (one piece of the split) to `out`.
  void EncodeChunk(std::string_view chunk, std::vector<int32_t>* out) const;

  /// EncodeChunk forced onto one path, so tests can check that both agree.
  void EncodeChunkForTest(std::string_view chunk, bool heap_path, std::vector<int32_t>* out) const {
    heap_path ? EncodeLong(chunk, out) : EncodeShort(chunk, out);
  }

  /// The id of the token whose bytes are bytes(left) + bytes(right), or kNoRank.
  ///
  /// Why pairs of ids suffice: every part during encoding is a token, so "the joined bytes
  /// are a token" is a property of the two ids; it is precomputed for every way of
  /// cutting every token into two tokens, and joining then never touches bytes.
  int32_t JoinRank(int32_t left, int32_t right) const {
    auto it = join_.find(Key(left, right));
    return it == join_.end() ? kNoRank : it->second;
  }

 private:
  static uint64_t Key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  // Linear scans over arrays on the stack: fastest for the short chunks of prose.
  void EncodeShort(std::string_view chunk, std::vector<int32_t>* out) const;
  // A min-heap over a linked list: O(n log n), so long runs (a megabyte of spaces or
  // base64) are not quadratic. Same result as EncodeShort.
  void EncodeLong(std::string_view chunk, std::vector<int32_t>* out) const;

  absl::flat_hash_map<std::string, int32_t> id_of_bytes_;  // whole-chunk hits
  absl::flat_hash_map<uint64_t, int32_t> join_;             // (left, right) -> joined id
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_BPE_ENCODER_H_
