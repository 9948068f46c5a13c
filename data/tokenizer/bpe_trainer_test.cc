#include "data/tokenizer/bpe_trainer.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using Merges = std::vector<BpeMerge>;

Merges Train(const std::vector<std::string>& texts, int num_merges) {
  static const SplitPattern* pattern = new SplitPattern(*SplitPattern::Compile(kSplitPattern));
  return TrainBpe(*pattern, texts, num_merges);
}

// FNV-1a (64-bit) over the ids as 4 little-endian bytes each: the checksum the Python
// cross-check printed.
uint64_t Fnv1a(const std::vector<int32_t>& ids) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t id : ids) {
    for (int k = 0; k < 4; ++k) {
      h ^= (static_cast<uint32_t>(id) >> (8 * k)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

TEST(TrainBpe, MergesTheMostFrequentPairAndBreaksTiesToTheSmallerPair) {
  // Chunks: "ab" x1, " ab" x2, " cd" x2.
  // Round 1: (a,b)=3 wins.  Round 2: (' ',c)=(' ',256)=(c,d)=2: the smaller pair,
  // (32,99), wins.  Round 3: (32,256) beats (257,100).  Round 4: (257,100).
  EXPECT_EQ(Train({"ab ab ab cd cd"}, 10), (Merges{{97, 98}, {32, 99}, {32, 256}, {257, 100}}));
}

TEST(TrainBpe, TiesCompareTheLeftIdFirst) {
  // Chunks: "ba" x1, " ba" x1, " ab" x2.
  // Round 1: (b,a)=2, (' ',a)=2, (a,b)=2, (' ',b)=1: (32,97) is smallest -> 256 = " a".
  // Round 2: (b,a)=2 and (256,b)=2 tie; left 98 < 256 -> 257 = "ba".
  // Round 3: (256,98)=2 -> 258 = " ab".  Round 4: (32,257)=1 -> 259 = " ba".
  EXPECT_EQ(Train({"ba ba ab ab"}, 10), (Merges{{32, 97}, {98, 97}, {256, 98}, {32, 257}}));
}

TEST(TrainBpe, TiesWithEqualLeftIdsCompareTheRightId) {
  // "ac" comes first in the text, but (a,b) < (a,c).
  EXPECT_EQ(Train({"ac\nab"}, 10), (Merges{{97, 98}, {97, 99}}));
}

TEST(TrainBpe, CountsEveryWindowOfARunAndMergesLeftToRight) {
  // "aaaa": (a,a) occurs 3 times; merging left to right gives [256,256] -> (256,256).
  EXPECT_EQ(Train({"aaaa"}, 10), (Merges{{97, 97}, {256, 256}}));
  // "aaa" x1, " aaa" x1: (a,a)=4 -> [256,a] and [' ',256,a] -> (256,a)=2 -> (32,257).
  EXPECT_EQ(Train({"aaa aaa"}, 10), (Merges{{97, 97}, {256, 97}, {32, 257}}));
}

TEST(TrainBpe, NeverMergesAcrossChunks) {
  // "a" and "!" are separate chunks: (a,!) must never be merged.
  for (const BpeMerge& m : Train({"a!a!a!a!"}, 10)) {
    EXPECT_FALSE(m.first == 'a' && m.second == '!');
  }
  // Nor across texts: "x" ends one text and "y" starts the next.
  for (const BpeMerge& m : Train({"x", "y", "x", "y"}, 10)) {
    EXPECT_FALSE(m.first == 'x' && m.second == 'y');
  }
}

TEST(TrainBpe, StopsAtTheRequestedCountOrWhenNoPairIsLeft) {
  EXPECT_EQ(Train({"ab ab ab cd cd"}, 2), (Merges{{97, 98}, {32, 99}}));
  EXPECT_EQ(Train({"ab ab ab cd cd"}, 0), Merges{});
  EXPECT_EQ(Train({"a b c"}, 10), (Merges{{32, 98}, {32, 99}}));
  EXPECT_EQ(Train({}, 10), Merges{});
}

// An independent check on real text: a deliberately naive Python trainer (the `regex`
// module for the split, a full recount of every pair in every round, ties to the smaller
// pair) learned 759 merges from these three files; its merge list's checksum is below.
TEST(TrainBpe, MatchesANaiveReferenceTrainerOnEnglish) {
  std::vector<std::string> texts;
  for (const char* name : {"GPL-3", "Apache-2.0", "MPL-2.0"}) {
    std::ifstream in(std::string("external/english_text/") + name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
    ASSERT_GT(texts.back().size(), 10000u) << name;
  }
  Merges merges = Train(texts, 759);
  ASSERT_EQ(merges.size(), 759u);
  const Merges first = {{32, 32}, {32, 116}, {32, 97},   {111, 114}, {111, 110}, {257, 104},
                        {101, 114}, {105, 110}, {256, 256}, {101, 110}, {116, 105}, {261, 101}};
  EXPECT_EQ(Merges(merges.begin(), merges.begin() + first.size()), first);
  std::vector<int32_t> flat;
  for (const auto& [l, r] : merges) flat.push_back(l), flat.push_back(r);
  EXPECT_EQ(Fnv1a(flat), 0xfd00f9c3c1cb7fc3ull);
}

}  // namespace
}  // namespace gpt_sft::data
