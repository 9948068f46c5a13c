#include <filesystem>
#include <fstream>

#include "data/tokenizer/english_corpus.h"
#include "data/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TokenizerFile, SavesTheDocumentedFormat) {
  // The example of FORMAT.md: merges "ab" and " ab".
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{97, 98}, {32, 256}});
  const std::string path = TempPath("example.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  EXPECT_EQ(ReadFile(path), "gpt-sft-bpe 1\npattern " + std::string(kSplitPattern) +
                                "\nmerges 2\n97 98\n32 256\nspecials 9\n<|bos|> 258\n"
                                "<|user_start|> 259\n<|user_end|> 260\n<|assistant_start|> 261\n"
                                "<|assistant_end|> 262\n<|python_start|> 263\n<|python_end|> 264\n"
                                "<|output_start|> 265\n<|output_end|> 266\nend\n");
}

TEST(TokenizerFile, SaveLoadRoundTrip) {
  Tokenizer tok = *Tokenizer::Train(LicenseTexts(), 700);
  const std::string path = TempPath("tok.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  absl::StatusOr<Tokenizer> loaded = Tokenizer::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->merges(), tok.merges());
  EXPECT_EQ(loaded->pattern(), tok.pattern());
  EXPECT_EQ(loaded->vocab_size(), 700);
  EXPECT_EQ(loaded->SpecialId(SpecialToken::kBos), 691);
  for (const std::string& text : LicenseTexts()) EXPECT_EQ(loaded->Encode(text), tok.Encode(text));
  // Saved atomically: nothing but the file itself is left in the directory.
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST(TokenizerFile, LoadsAFileWithoutItsFinalNewline) {
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{97, 98}});
  const std::string path = TempPath("nonl.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  std::string contents = ReadFile(path);
  contents.pop_back();
  WriteFile(path, contents);
  EXPECT_TRUE(Tokenizer::Load(path).ok());
}

TEST(TokenizerFile, MissingFileIsNamed) {
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load("/nonexistent/tok.bpe");
  EXPECT_THAT(tok.status().message(), HasSubstr("/nonexistent/tok.bpe"));
}

TEST(TokenizerFile, FailedSaveLeavesTheOldFile) {
  Tokenizer tok = *Tokenizer::FromMerges(kSplitPattern, {{97, 98}});
  const std::string path = TempPath("keep.bpe");
  ASSERT_TRUE(tok.Save(path).ok());
  // A directory cannot be replaced by a file: the save fails and the original stays.
  const std::string dir_path = TempPath("adir");
  std::filesystem::create_directories(dir_path + "/x");
  EXPECT_FALSE(tok.Save(dir_path).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir_path));
  EXPECT_TRUE(Tokenizer::Load(path).ok());
  // Nor can a file be written where no directory is.
  absl::Status s = tok.Save("/nonexistent/dir/tok.bpe");
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/dir/tok.bpe"));
}

// The lines of a valid file with `merges` merges, for the cases below to damage.
std::string Header(const std::string& merges_line = "merges 1\n97 98\n") {
  return "gpt-sft-bpe 1\npattern " + std::string(kSplitPattern) + "\n" + merges_line;
}
std::string Specials(int first_id) {
  std::string s = "specials 9\n";
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    s += std::string(kSpecialTokenTexts[i]) + " " + std::to_string(first_id + i) + "\n";
  }
  return s;
}
std::string Valid() { return Header() + Specials(257) + "end\n"; }

struct BadFile {
  std::string name, contents, message;  // message: expected with ":<line>: " in front
};

class TokenizerFileErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(TokenizerFileErrors, NameTheFileAndLine) {
  const BadFile& bad = GetParam();
  const std::string path = TempPath(bad.name);
  WriteFile(path, bad.contents);
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load(path);
  ASSERT_FALSE(tok.ok());
  EXPECT_THAT(tok.status().message(), HasSubstr(path + bad.message));
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    All, TokenizerFileErrors,
    ::testing::Values(
        BadFile{"foreign", "PK\x03\x04 zip data\n", ":1: not a tokenizer file"},
        BadFile{"binary", std::string("\0\0\0\x01", 4), ":1: not a tokenizer file"},
        BadFile{"empty", "", ":1: file ends early; expected the magic line"},
        BadFile{"version2", Replace(Valid(), "bpe 1", "bpe 2"), ":1: tokenizer file version '2'"},
        BadFile{"crlf", Replace(Valid(), "bpe 1\n", "bpe 1\r\n"), ":1: tokenizer file version '1\\r'"},
        BadFile{"nopattern", "gpt-sft-bpe 1\nmerges 0\n", ":2: expected 'pattern <regex>'"},
        BadFile{"badpattern", "gpt-sft-bpe 1\npattern (a\nmerges 0\n", ":2: split pattern does not compile"},
        BadFile{"nocount", Header("merges\n"), ":3: expected 'merges <count>'"},
        BadFile{"negcount", Header("merges -1\n"), ":3: expected 'merges <count>'"},
        BadFile{"pluscount", Header("merges +1\n97 98\n"), ":3: expected 'merges <count>'"},
        BadFile{"hugecount", Header("merges 99999999999\n"), ":3: expected 'merges <count>'"},
        BadFile{"overpromise", Header("merges 5\n97 98\n"), ":3: promises 5 merges but only 1 lines follow"},
        BadFile{"truncated", Header("merges 2\n97 98\n98 99\n"), ":6: file ends early; expected 'specials <count>'"},
        BadFile{"cutmidmerge", Header("merges 2\n97 98\n98\n") + Specials(258) + "end\n", ":5: expected a merge '<left> <right>'"},
        BadFile{"lettermerge", Header("merges 1\n97 zz\n"), ":4: expected a merge '<left> <right>'"},
        BadFile{"spacedmerge", Header("merges 1\n97  98\n"), ":4: expected a merge '<left> <right>'"},
        BadFile{"futuretoken", Header("merges 2\n97 98\n97 300\n") + Specials(258) + "end\n",
                ":5: merge 1 (97, 300) names a token that does not exist yet"},
        BadFile{"duplicate", Header("merges 2\n97 98\n97 98\n") + Specials(258) + "end\n",
                ":5: merge 1 (97, 98) repeats the bytes of token 256"},
        BadFile{"nine", Replace(Valid(), "specials 9", "specials 8"), ":5: expected 'specials 9'"},
        BadFile{"wrongid", Header() + Specials(300) + "end\n", ":6: expected special token '<|bos|> 257'"},
        BadFile{"reordered", Replace(Valid(), "<|user_start|>", "<|user_end|>"),
                ":7: expected special token '<|user_start|> 258'"},
        BadFile{"noend", Header() + Specials(257), ":15: file ends early; expected 'end'"},
        BadFile{"badend", Header() + Specials(257) + "fin\n", ":15: expected 'end', got 'fin'"},
        BadFile{"trailing", Valid() + "97 99\n", ":16: unexpected content after 'end'"},
        BadFile{"twofiles", Valid() + Valid(), ":16: unexpected content after 'end'"}),
    [](const auto& info) { return info.param.name; });

TEST(TokenizerFile, TheDamagedCasesStartFromAValidFile) {
  const std::string path = TempPath("valid.bpe");
  WriteFile(path, Valid());
  absl::StatusOr<Tokenizer> tok = Tokenizer::Load(path);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ(tok->num_merges(), 1);
}

}  // namespace
}  // namespace gpt_sft::data
