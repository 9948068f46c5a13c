#include "data/tokenizer/split_pattern.h"

#include "data/io/utf8.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

std::vector<std::string> Split(std::string_view text) {
  static const SplitPattern* pattern = new SplitPattern(*SplitPattern::Compile(kSplitPattern));
  std::vector<std::string> chunks;
  pattern->ForEachChunk(text, [&](std::string_view c) { chunks.emplace_back(c); });
  return chunks;
}

using Chunks = std::vector<std::string>;

TEST(SplitPattern, WordsTakeTheirLeadingSpace) {
  EXPECT_EQ(Split("Hello world"), (Chunks{"Hello", " world"}));
}

TEST(SplitPattern, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(Split("I'm don't HE'LL"), (Chunks{"I", "'m", " don", "'t", " HE", "'LL"}));
}

TEST(SplitPattern, DigitsGroupInPairs) {
  EXPECT_EQ(Split("12345"), (Chunks{"12", "34", "5"}));
  EXPECT_EQ(Split("x1y"), (Chunks{"x", "1", "y"}));
}

TEST(SplitPattern, PunctuationRunsTakeFollowingNewlines) {
  EXPECT_EQ(Split("hi!!!\n\nthere"), (Chunks{"hi", "!!!\n\n", "there"}));
}

TEST(SplitPattern, WhitespaceBeforeAWordLeavesOneSpaceToIt) {
  // \s+(?!\S) backs off one space so that " b" keeps its space.
  EXPECT_EQ(Split("a   b"), (Chunks{"a", "  ", " b"}));
  EXPECT_EQ(Split("x   \ny"), (Chunks{"x", "   \n", "y"}));
  EXPECT_EQ(Split("end   "), (Chunks{"end", "   "}));
}

TEST(SplitPattern, UnicodeLettersAreLetters) {
  EXPECT_EQ(Split("héllo 世界"), (Chunks{"héllo", " 世界"}));
}

TEST(SplitPattern, InvalidBytesBecomeChunksOfTheirOwn) {
  EXPECT_EQ(Split("a\xff" "b"), (Chunks{"a", "\xff", "b"}));
  EXPECT_EQ(Split("\xc3"), (Chunks{"\xc3"}));  // a truncated two-byte sequence
}

TEST(SplitPattern, ChunksAlwaysConcatenateToTheInput) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    std::string joined;
    for (const std::string& c : Split(s)) {
      EXPECT_FALSE(c.empty());
      joined += c;
    }
    EXPECT_EQ(joined, s);
  }
}

TEST(ValidUtf8PrefixLength, RejectsOverlongAndSurrogates) {
  EXPECT_EQ(ValidUtf8PrefixLength("ab\xc0\xaf"), 2u);         // overlong '/'
  EXPECT_EQ(ValidUtf8PrefixLength("\xed\xa0\x80"), 0u);        // U+D800
  EXPECT_EQ(ValidUtf8PrefixLength("\xf0\x9f\x98\x80z"), 5u);  // an emoji then z
}

}  // namespace
}  // namespace gpt_sft::data
