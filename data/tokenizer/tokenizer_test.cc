#include "data/tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

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

std::string LicenseText() {
  std::string text;
  for (const char* name : {"GPL-3", "Apache-2.0", "MPL-2.0"}) {
    std::ifstream in(std::string("external/english_text/") + name);
    std::stringstream ss;
    ss << in.rdbuf();
    text += ss.str();
  }
  return text;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

TEST(Tokenizer, EncodesHandWorkedText) {
  Tokenizer tok = HandWorked();
  EXPECT_THAT(tok.Encode(" ab cd"), ElementsAre(258, 259));
  EXPECT_THAT(tok.Encode("abab"), ElementsAre(256, 256));
  EXPECT_THAT(tok.Encode("abc"), ElementsAre(256, 'c'));
  EXPECT_THAT(tok.Encode(" cdx"), ElementsAre(259, 'x'));
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

TEST(Tokenizer, SpecialTokensFollowTheMergeableTokensInNanochatOrder) {
  Tokenizer tok = HandWorked();
  EXPECT_EQ(tok.num_mergeable(), 260);
  EXPECT_EQ(tok.vocab_size(), 269);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kBos), 260);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kAssistantEnd), 264);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kOutputEnd), 268);
  EXPECT_EQ(tok.Decode({260, 256, 268}), "<|bos|>ab<|output_end|>");
  EXPECT_EQ(tok.AsSpecial(263), SpecialToken::kAssistantStart);
  EXPECT_EQ(tok.AsSpecial(259), std::nullopt);
}

TEST(Tokenizer, SpecialTokenTextInsideTextIsOrdinaryText) {
  Tokenizer tok = HandWorked();
  std::vector<int32_t> ids = tok.Encode("<|bos|>");
  EXPECT_GT(ids.size(), 1u);
  for (int32_t id : ids) EXPECT_LT(id, tok.num_mergeable());
  EXPECT_EQ(tok.Decode(ids), "<|bos|>");
}

TEST(Tokenizer, TrainsNanochatStyleOnEnglish) {
  const std::string text = LicenseText();
  ASSERT_GT(text.size(), 50000u);
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train({text}, 1024);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->vocab_size(), 1024);
  EXPECT_EQ(tok->num_merges(), 1024 - 256 - 9);
  // Compression: English at a 1k vocabulary takes well under one token per 2 bytes.
  EXPECT_LT(tok->Encode(text).size(), text.size() / 2);
  EXPECT_EQ(tok->Decode(tok->Encode(text)), text);
}

TEST(Tokenizer, RunningOutOfPairsShrinksTheVocabulary) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train({"ab ab ab cd cd"}, 8192);
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(tok->num_merges(), 4);
  EXPECT_EQ(tok->SpecialId(SpecialToken::kBos), 260);
}

TEST(Tokenizer, RejectsATooSmallVocabulary) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train({"x"}, 100);
  EXPECT_THAT(tok.status().message(), HasSubstr("--vocab_size=100"));
}

TEST(Tokenizer, AnyBytesRoundTrip) {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train({LicenseText()}, 600));
  std::mt19937 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::string s(rng() % 80, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    EXPECT_EQ(tok->Decode(tok->Encode(s)), s);
  }
  // Random code points, valid UTF-8.
  for (int trial = 0; trial < 100; ++trial) {
    std::string s;
    for (int i = 0; i < 20; ++i) {
      uint32_t cp = rng() % 0x10FFFF;
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
      if (cp < 0x80) {
        s += static_cast<char>(cp);
      } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        s += static_cast<char>(0xF0 | (cp >> 18)), s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
    EXPECT_EQ(tok->Decode(tok->Encode(s)), s);
  }
}

TEST(TokenizerFile, SaveLoadRoundTrip) {
  Tokenizer tok = *Tokenizer::Train({LicenseText()}, 700);
  const std::string path = TempPath("tok.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  absl::StatusOr<Tokenizer> loaded = Tokenizer::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->merges(), tok.merges());
  EXPECT_EQ(loaded->pattern(), tok.pattern());
  EXPECT_EQ(loaded->Encode("The GNU General Public License"), tok.Encode("The GNU General Public License"));
  // Saved atomically: nothing but the file itself is left in the directory.
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

struct BadFile {
  std::string name, contents, message;
};

class TokenizerFileErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(TokenizerFileErrors, NameTheFileAndLine) {
  const BadFile& bad = GetParam();
  const std::string path = TempPath(bad.name);
  WriteFile(path, bad.contents);
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load(path);
  ASSERT_FALSE(tok.ok());
  EXPECT_THAT(tok.status().message(), HasSubstr(path));
  EXPECT_THAT(tok.status().message(), HasSubstr(bad.message));
}

std::string Specials(int first_id) {
  std::string s = "specials 9\n";
  for (int i = 0; i < kNumSpecialTokens; ++i) s += std::string(kSpecialTokenTexts[i]) + " " + std::to_string(first_id + i) + "\n";
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    All, TokenizerFileErrors,
    ::testing::Values(
        BadFile{"foreign", "PK\x03\x04 zip data\n", ":1: not a tokenizer file"},
        BadFile{"empty", "", ":1: file ends early"},
        BadFile{"truncated", "gpt-sft-bpe 1\npattern x\nmerges 2\n97 98\n", ":5: file ends early"},
        BadFile{"badmerge", "gpt-sft-bpe 1\npattern x\nmerges 1\n97 zz\n", ":4: expected '<left> <right>'"},
        BadFile{"future", "gpt-sft-bpe 1\npattern x\nmerges 1\n97 300\n" + Specials(257) + "end\n",
                "names a token that does not exist"},
        BadFile{"wrongid", "gpt-sft-bpe 1\npattern x\nmerges 0\n" + Specials(300) + "end\n",
                ":5: expected '<|bos|> 256'"},
        BadFile{"noend", "gpt-sft-bpe 1\npattern x\nmerges 0\n" + Specials(256), "file ends early; expected 'end'"}),
    [](const auto& info) { return info.param.name; });

TEST(TokenizerFile, MissingFileIsNamed) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load("/nonexistent/tok.bpe");
  EXPECT_THAT(tok.status().message(), HasSubstr("/nonexistent/tok.bpe"));
}

TEST(TokenizerFile, FailedSaveLeavesTheOldFile) {
  Tokenizer tok = HandWorked();
  const std::string path = TempPath("keep.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  // A directory cannot be replaced by a file: the save fails and the original stays.
  const std::string dir_path = TempPath("adir");
  std::filesystem::create_directories(dir_path + "/x");
  EXPECT_FALSE(tok.Save(dir_path).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir_path));
  EXPECT_TRUE(Tokenizer::Load(path).ok());
}

}  // namespace
}  // namespace gpt_sft::data
