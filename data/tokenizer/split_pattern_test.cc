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

// Every expectation below was worked by hand from the pattern and then confirmed with an
// independent engine (Python's `regex` module, which supports possessive quantifiers).

TEST(SplitPattern, WordsTakeTheirLeadingSpace) {
  EXPECT_EQ(Split("Hello world"), (Chunks{"Hello", " world"}));
  EXPECT_EQ(Split("h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c"),  // "héllo 世界"
            (Chunks{"h\xc3\xa9llo", " \xe4\xb8\x96\xe7\x95\x8c"}));
}

TEST(SplitPattern, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(Split("I'm don't HE'LL we'Ve"),
            (Chunks{"I", "'m", " don", "'t", " HE", "'LL", " we", "'Ve"}));
  EXPECT_EQ(Split("O'NEIL'S"), (Chunks{"O", "'NEIL", "'S"}));  // 'N is no contraction
  // The contraction alternative comes first, so a leading 't is cut off a word...
  EXPECT_EQ(Split("'tis"), (Chunks{"'t", "is"}));
  // ...while any other apostrophe is the one optional non-letter before a word.
  EXPECT_EQ(Split("'hello"), (Chunks{"'hello"}));
  // After a space the apostrophe cannot join the word (one prefix character only).
  EXPECT_EQ(Split("x's 'tis"), (Chunks{"x", "'s", " '", "tis"}));
}

TEST(SplitPattern, DigitsGroupInOnesAndTwos) {
  EXPECT_EQ(Split("12345"), (Chunks{"12", "34", "5"}));
  EXPECT_EQ(Split("x1y"), (Chunks{"x", "1", "y"}));
  EXPECT_EQ(Split("a1234b"), (Chunks{"a", "12", "34", "b"}));
  // \p{N} under UCP: Arabic-Indic digits, superscripts and Roman numerals are numbers.
  EXPECT_EQ(Split("\xd9\xa3\xd9\xa4\xd9\xa5"), (Chunks{"\xd9\xa3\xd9\xa4", "\xd9\xa5"}));
  EXPECT_EQ(Split("x\xc2\xb2"), (Chunks{"x", "\xc2\xb2"}));
  // A number never takes a leading space or symbol: " $" is punctuation.
  EXPECT_EQ(Split("a $100"), (Chunks{"a", " $", "10", "0"}));
}

TEST(SplitPattern, PunctuationRunsStayWholeAndTakeFollowingNewlines) {
  // ` ?[^\s\p{L}\p{N}]++[\r\n]*`: one optional space, the whole run, then line ends.
  EXPECT_EQ(Split("hi!!!\n\nthere"), (Chunks{"hi", "!!!\n\n", "there"}));
  EXPECT_EQ(Split("a?!\r\n\r\nb"), (Chunks{"a", "?!\r\n\r\n", "b"}));
  EXPECT_EQ(Split(" ...\n"), (Chunks{" ...\n"}));
  EXPECT_EQ(Split("a, b"), (Chunks{"a", ",", " b"}));
  // One non-letter may lead a word, but only when no space precedes it.
  EXPECT_EQ(Split("@user (x)"), (Chunks{"@user", " (", "x", ")"}));
  EXPECT_EQ(Split("<|bos|>"), (Chunks{"<|", "bos", "|>"}));
}

TEST(SplitPattern, WhitespaceRules) {
  // \s+(?!\S) backs off one space so that the next word keeps its space.
  EXPECT_EQ(Split("a   b"), (Chunks{"a", "  ", " b"}));
  EXPECT_EQ(Split("  (x"), (Chunks{" ", " (", "x"}));
  // A tab before a word is its one leading non-letter.
  EXPECT_EQ(Split("\t\tfoo"), (Chunks{"\t", "\tfoo"}));
  // \s*[\r\n]: whitespace through the last line end is one chunk.
  EXPECT_EQ(Split("x   \ny"), (Chunks{"x", "   \n", "y"}));
  EXPECT_EQ(Split("a \n \nb"), (Chunks{"a", " \n \n", "b"}));
  EXPECT_EQ(Split("a\n\n\nb"), (Chunks{"a", "\n\n\n", "b"}));
  EXPECT_EQ(Split("a\r\nb"), (Chunks{"a", "\r\n", "b"}));
  // Trailing whitespace is one chunk.
  EXPECT_EQ(Split("end   "), (Chunks{"end", "   "}));
  EXPECT_EQ(Split("a \t"), (Chunks{"a", " \t"}));
  // UCP: a no-break space (U+00A0) is whitespace, so it leads the word as its prefix.
  EXPECT_EQ(Split("a\xc2\xa0" "b"), (Chunks{"a", "\xc2\xa0" "b"}));
}

TEST(SplitPattern, InvalidBytesBecomeChunksOfTheirOwn) {
  EXPECT_EQ(Split("a\xff" "b"), (Chunks{"a", "\xff", "b"}));
  EXPECT_EQ(Split("\xc3"), (Chunks{"\xc3"}));  // a truncated two-byte sequence
  // The valid runs on either side are split on their own: a bad byte ends a word.
  EXPECT_EQ(Split("ab\x80" "cd ef"), (Chunks{"ab", "\x80", "cd", " ef"}));
  // Each byte of a truncated three-byte sequence is its own chunk.
  EXPECT_EQ(Split(" \xe4\xb8"), (Chunks{" ", "\xe4", "\xb8"}));
  // Surrogates (CESU-8) and overlong forms are invalid too, byte by byte.
  EXPECT_EQ(Split("\xed\xa0\x80"), (Chunks{"\xed", "\xa0", "\x80"}));
}

// Megabyte runs: no engine limit (JIT stack, match limit) may cut or merge chunks.
TEST(SplitPattern, HugeRunsSplitLikeShortOnes) {
  const size_t n = 1 << 20;
  EXPECT_EQ(Split(std::string(n, 'a')), Chunks{std::string(n, 'a')});
  EXPECT_EQ(Split(std::string(n, ' ')), Chunks{std::string(n, ' ')});
  EXPECT_EQ(Split(std::string(n, '!')), Chunks{std::string(n, '!')});
  EXPECT_EQ(Split(std::string(n, '\n')), Chunks{std::string(n, '\n')});
  EXPECT_EQ(Split(std::string(n, ' ') + "x"), (Chunks{std::string(n - 1, ' '), " x"}));
  std::string lines;
  for (size_t i = 0; i < n / 2; ++i) lines += " \n";
  EXPECT_EQ(Split(lines), Chunks{lines});  // \s*[\r\n] takes it all
  Chunks digits = Split(std::string(n + 1, '7'));
  ASSERT_EQ(digits.size(), n / 2 + 1);
  EXPECT_EQ(digits.front(), "77");
  EXPECT_EQ(digits.back(), "7");
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
