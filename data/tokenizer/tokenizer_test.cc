#include "data/tokenizer/tokenizer.h"

#include <random>

#include "data/tokenizer/english_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Merges of the hand-worked corpus in bpe_trainer_test: 256="ab", 257=" c", 258=" ab", 259=" cd".
Tokenizer HandWorked() {
  return *Tokenizer::FromMerges(kSplitPattern, {{97, 98}, {32, 99}, {32, 256}, {257, 100}});
}

// A 600-token vocabulary of English, shared by the round-trip tests.
const Tokenizer& Small() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(LicenseTexts(), 600));
  return *tok;
}

void AppendUtf8(uint32_t cp, std::string* s) {
  if (cp < 0x80) {
    *s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *s += static_cast<char>(0xC0 | (cp >> 6));
    *s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *s += static_cast<char>(0xE0 | (cp >> 12));
    *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *s += static_cast<char>(0xF0 | (cp >> 18));
    *s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

TEST(Tokenizer, EncodesHandWorkedText) {
  Tokenizer tok = HandWorked();
  // Chunks " ab", " cd" are whole tokens.
  EXPECT_THAT(tok.Encode(" ab cd"), ElementsAre(258, 259));
  // "abab" is one chunk: a+b joins twice (rank 256), and "abab" is no token.
  EXPECT_THAT(tok.Encode("abab"), ElementsAre(256, 256));
  EXPECT_THAT(tok.Encode("abc"), ElementsAre(256, 'c'));
  EXPECT_THAT(tok.Encode(" cdx"), ElementsAre(259, 'x'));
  // Chunks "ab", "!", " ab": no merge crosses a chunk.
  EXPECT_THAT(tok.Encode("ab! ab"), ElementsAre(256, '!', 258));
  EXPECT_THAT(tok.Encode(""), ElementsAre());
}

TEST(Tokenizer, EncodeAppendAppends) {
  Tokenizer tok = HandWorked();
  std::vector<int32_t> ids = {7};
  tok.EncodeAppend(" ab", &ids);
  tok.EncodeAppend(" cd", &ids);
  EXPECT_THAT(ids, ElementsAre(7, 258, 259));
}

TEST(Tokenizer, MergesByLowestRankOfTheJoinedBytesLikeTiktoken) {
  // 256="bc", 257="ab", 258="abc" made from (257, 'c'). In "xabc", b+c joins first
  // (rank 256); then "a"+"bc" is the byte string "abc", which has rank 258, so tiktoken
  // joins it although merge 258 was trained as ("ab", "c"). Replaying trained pairs
  // instead would stop at x, a, bc.
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'b', 'c'}, {'a', 'b'}, {256 + 1, 'c'}});
  EXPECT_THAT(tok.Encode("abc"), ElementsAre(258));
  EXPECT_THAT(tok.Encode("xabc"), ElementsAre('x', 258));
  EXPECT_THAT(tok.Encode("xab"), ElementsAre('x', 257));
}

TEST(Tokenizer, EqualRanksJoinTheLeftmostPairFirst) {
  // 256="aa": "aaa" is [aa, a], not [a, aa]; "aaaaa" is [aa, aa, a].
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{'a', 'a'}});
  EXPECT_THAT(tok.Encode("aaa"), ElementsAre(256, 'a'));
  EXPECT_THAT(tok.Encode("aaaaa"), ElementsAre(256, 256, 'a'));
}

TEST(SpecialTokens, TextsInNanochatOrder) {
  const std::vector<std::string> expected = {
      "<|bos|>",           "<|user_start|>",   "<|user_end|>",
      "<|assistant_start|>", "<|assistant_end|>", "<|python_start|>",
      "<|python_end|>",    "<|output_start|>", "<|output_end|>"};
  ASSERT_EQ(kNumSpecialTokens, 9);
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    EXPECT_EQ(SpecialTokenText(static_cast<SpecialToken>(i)), expected[i]) << i;
  }
  EXPECT_EQ(SpecialTokenText(SpecialToken::kBos), "<|bos|>");
  EXPECT_EQ(SpecialTokenText(SpecialToken::kOutputEnd), "<|output_end|>");
}

TEST(Tokenizer, SpecialTokensFollowTheMergeableTokensInNanochatOrder) {
  Tokenizer tok = HandWorked();
  EXPECT_EQ(tok.num_mergeable(), 260);
  EXPECT_EQ(tok.vocab_size(), 269);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kBos), 260);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kUserStart), 261);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kAssistantEnd), 264);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kOutputEnd), 268);
  EXPECT_EQ(tok.Decode({260, 256, 268}), "<|bos|>ab<|output_end|>");
  EXPECT_EQ(tok.AsSpecial(263), SpecialToken::kAssistantStart);
  EXPECT_EQ(tok.AsSpecial(259), std::nullopt);
  EXPECT_EQ(tok.AsSpecial(269), std::nullopt);
  EXPECT_EQ(tok.AsSpecial(-1), std::nullopt);
  // Ids outside the vocabulary decode to nothing.
  EXPECT_EQ(tok.Decode({-5, 97, 269, 100000}), "a");
}

TEST(Tokenizer, SpecialTokenTextInsideTextIsOrdinaryText) {
  // encode_ordinary: "<|bos|>" is the chunks "<|", "bos", "|>" of ordinary bytes.
  EXPECT_THAT(HandWorked().Encode("<|bos|>"), ElementsAre('<', '|', 'b', 'o', 's', '|', '>'));
  const Tokenizer& tok = Small();
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    const std::string text = "x" + std::string(kSpecialTokenTexts[i]) + "y";
    std::vector<int32_t> ids = tok.Encode(text);
    EXPECT_GT(ids.size(), 3u) << text;
    for (int32_t id : ids) EXPECT_LT(id, tok.num_mergeable()) << text;
    EXPECT_EQ(tok.Decode(ids), text);
  }
}

TEST(Tokenizer, TrainsNanochatStyleOnEnglish) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train(LicenseTexts(), 1024);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->vocab_size(), 1024);
  EXPECT_EQ(tok->num_merges(), 1024 - 256 - 9);
  EXPECT_EQ(tok->SpecialId(SpecialToken::kBos), 1015);
  EXPECT_EQ(tok->SpecialId(SpecialToken::kOutputEnd), 1023);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(tok->TokenBytes(b), std::string(1, static_cast<char>(b)));
  // Every merged token's bytes are its parts' bytes.
  for (int i = 0; i < tok->num_merges(); ++i) {
    const auto [l, r] = tok->merges()[i];
    EXPECT_EQ(tok->TokenBytes(256 + i), tok->TokenBytes(l) + tok->TokenBytes(r));
  }
}

TEST(Tokenizer, RunningOutOfPairsShrinksTheVocabulary) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train({"ab ab ab cd cd"}, 8192);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(tok->num_merges(), 4);
  EXPECT_EQ(tok->vocab_size(), 269);
  EXPECT_EQ(tok->SpecialId(SpecialToken::kBos), 260);  // shifted down from 8183
  // No text at all: the 256 bytes and the specials.
  absl::StatusOr<Tokenizer> empty = Tokenizer::Train({}, 8192);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->vocab_size(), 265);
}

TEST(Tokenizer, RejectsABadVocabularySize) {
  EXPECT_THAT(Tokenizer::Train({"x"}, 100).status().message(), HasSubstr("vocab_size=100"));
  EXPECT_TRUE(Tokenizer::Train({"x"}, 265).ok());
  EXPECT_THAT(Tokenizer::Train({"x"}, (1 << 24) + 266).status().message(),
              HasSubstr("too large"));
}

TEST(Tokenizer, FromMergesRejectsBadMerges) {
  EXPECT_THAT(Tokenizer::FromMerges(kSplitPattern, {{97, 256}}).status().message(),
              HasSubstr("merge 0 (97, 256) names a token that does not exist yet"));
  EXPECT_THAT(Tokenizer::FromMerges(kSplitPattern, {{-1, 3}}).status().message(),
              HasSubstr("does not exist"));
  // A second (97, 98) would make "ab" again.
  EXPECT_THAT(Tokenizer::FromMerges(kSplitPattern, {{97, 98}, {97, 98}}).status().message(),
              HasSubstr("merge 1 (97, 98) repeats the bytes of token 256"));
  EXPECT_THAT(Tokenizer::FromMerges("(unclosed", {}).status().message(),
              HasSubstr("does not compile"));
}

TEST(Tokenizer, RandomBytesRoundTrip) {
  const Tokenizer& tok = Small();
  std::mt19937 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::string s(rng() % 80, '\0');
    // Half the strings draw from a few bytes so that merged tokens actually occur.
    const bool narrow = trial % 2 == 0;
    for (char& c : s) c = static_cast<char>(narrow ? " eat\n\xc3\xa9\xff"[rng() % 8] : rng() % 256);
    EXPECT_EQ(tok.Decode(tok.Encode(s)), s);
  }
}

TEST(Tokenizer, RandomUnicodeRoundTrip) {
  const Tokenizer& tok = Small();
  std::mt19937 rng(43);
  for (int trial = 0; trial < 200; ++trial) {
    std::string s;
    for (int i = 0; i < 24; ++i) {
      uint32_t cp = rng() % 4 == 0 ? rng() % 0x110000 : rng() % 0x300;  // mostly Latin
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = ' ';
      AppendUtf8(cp, &s);
    }
    EXPECT_EQ(tok.Decode(tok.Encode(s)), s);
  }
}

TEST(Tokenizer, EnglishRoundTripsAndCompresses) {
  const Tokenizer& tok = Small();
  size_t bytes = 0, tokens = 0;
  for (const std::string& text : LicenseTexts()) {
    std::vector<int32_t> ids = tok.Encode(text);
    EXPECT_EQ(tok.Decode(ids), text);
    bytes += text.size(), tokens += ids.size();
  }
  EXPECT_LT(tokens, bytes / 2);  // well under one token per two bytes
}

}  // namespace
}  // namespace gpt_sft::data
