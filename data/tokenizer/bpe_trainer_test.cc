#include "data/tokenizer/bpe_trainer.h"

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

TEST(TrainBpe, MergesTheMostFrequentPairAndBreaksTiesToTheSmallerPair) {
  // Chunks: "ab" x1, " ab" x2, " cd" x2.
  // Round 1: (a,b)=3 wins.  Round 2: (' ',c)=(' ',256)=(c,d)=2: the smaller pair,
  // (32,99), wins.  Round 3: (32,256) beats (257,100).  Round 4: (257,100).
  SplitPattern pattern = *SplitPattern::Compile(kSplitPattern);
  std::vector<BpeMerge> merges = TrainBpe(pattern, {"ab ab ab cd cd"}, 10);
  std::vector<BpeMerge> expected = {{97, 98}, {32, 99}, {32, 256}, {257, 100}};
  EXPECT_EQ(merges, expected);  // and it stops there: no pair is left
}

TEST(TrainBpe, NeverMergesAcrossChunks) {
  SplitPattern pattern = *SplitPattern::Compile(kSplitPattern);
  // "a" and "!" are separate chunks: (a,!) must never be merged.
  for (const BpeMerge& m : TrainBpe(pattern, {"a!a!a!a!"}, 10)) {
    EXPECT_FALSE(m.first == 'a' && m.second == '!');
  }
}

TEST(TrainBpe, OverlappingRunsCountEachMerge) {
  SplitPattern pattern = *SplitPattern::Compile(kSplitPattern);
  std::vector<BpeMerge> merges = TrainBpe(pattern, {"aaaa"}, 10);
  // aaaa -> (a,a) -> [256,256] -> (256,256) -> [257].
  EXPECT_EQ(merges, (std::vector<BpeMerge>{{97, 97}, {256, 256}}));
}

}  // namespace
}  // namespace gpt_sft::data
