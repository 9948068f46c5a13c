#include "data/tokenizer/bpe_encoder.h"

#include <random>

#include "data/tokenizer/english_corpus.h"
#include "data/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::ElementsAre;

// An encoder over the given tokenizer's tokens.
BpeEncoder EncoderOf(const Tokenizer& tok) {
  absl::flat_hash_map<std::string, int32_t> ids;
  for (int32_t id = 0; id < tok.num_mergeable(); ++id) ids.emplace(tok.TokenBytes(id), id);
  return BpeEncoder(std::move(ids));
}

std::vector<int32_t> Encode(const BpeEncoder& enc, std::string_view chunk, bool heap_path) {
  std::vector<int32_t> out;
  enc.EncodeChunkForTest(chunk, heap_path, &out);
  return out;
}

TEST(BpeEncoder, JoinTableHoldsEveryCutOfEveryToken) {
  // 256="bc", 257="ab", 258="abc" trained as ("ab", "c") but also cut as ("a", "bc").
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'b', 'c'}, {'a', 'b'}, {257, 'c'}});
  BpeEncoder enc = EncoderOf(tok);
  EXPECT_EQ(enc.JoinRank('b', 'c'), 256);
  EXPECT_EQ(enc.JoinRank('a', 'b'), 257);
  EXPECT_EQ(enc.JoinRank(257, 'c'), 258);
  EXPECT_EQ(enc.JoinRank('a', 256), 258);
  EXPECT_EQ(enc.JoinRank('c', 'a'), BpeEncoder::kNoRank);
  EXPECT_EQ(enc.JoinRank(256, 257), BpeEncoder::kNoRank);
}

TEST(BpeEncoder, BothPathsGiveTheHandWorkedIds) {
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'b', 'c'}, {'a', 'b'}, {257, 'c'}});
  BpeEncoder enc = EncoderOf(tok);
  for (bool heap : {false, true}) {
    EXPECT_THAT(Encode(enc, "xabc", heap), ElementsAre('x', 258)) << heap;
    EXPECT_THAT(Encode(enc, "abab", heap), ElementsAre(257, 257)) << heap;
    EXPECT_THAT(Encode(enc, "cab", heap), ElementsAre('c', 257)) << heap;
    EXPECT_THAT(Encode(enc, "q", heap), ElementsAre('q')) << heap;
  }
  // Equal ranks: the leftmost pair joins first.
  Tokenizer aa = *Tokenizer::FromMerges(kSplitPattern, {{'a', 'a'}});
  BpeEncoder enc_aa = EncoderOf(aa);
  for (bool heap : {false, true}) {
    EXPECT_THAT(Encode(enc_aa, "aaa", heap), ElementsAre(256, 'a')) << heap;
    EXPECT_THAT(Encode(enc_aa, "aaaaa", heap), ElementsAre(256, 256, 'a')) << heap;
  }
}

TEST(BpeEncoder, TheHeapPathAgreesWithTheLinearPath) {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(LicenseTexts(), 2000));
  BpeEncoder enc = EncoderOf(*tok);
  std::mt19937 rng(5);
  const std::string alphabet = "etaoin srhl";  // frequent letters: many merges apply
  for (int trial = 0; trial < 500; ++trial) {
    std::string s(1 + rng() % BpeEncoder::kShortChunk, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    EXPECT_EQ(Encode(enc, s, false), Encode(enc, s, true)) << s;
  }
}

}  // namespace
}  // namespace gpt_sft::data
