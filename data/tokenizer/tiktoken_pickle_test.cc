// tokenizer.pkl in and out: the golden pickle.dump of a tiktoken Encoding built as nanochat
// builds it (tests/nanochat/make_nanochat_golden.py) must encode the golden text to the ids
// tiktoken itself gave; our own pickle must read back equal; malformed files name the file
// and the token or key at fault.
#include "data/tokenizer/tiktoken_pickle.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/pickle_writer.h"
#include "base/atomic_file.h"
#include "data/tokenizer/english_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const char kGoldenPkl[] = "tests/nanochat/base/tokenizer/tokenizer.pkl";

nlohmann::json Golden() {
  std::ifstream in("tests/nanochat/golden.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/" + name;
}

TEST(TiktokenPickle, EncodesTheGoldenTextAsTiktokenDid) {
  absl::StatusOr<Tokenizer> tok = LoadTiktokenPickle(kGoldenPkl);
  ASSERT_TRUE(tok.ok()) << tok.status();
  const nlohmann::json golden = Golden();
  EXPECT_EQ(tok->num_merges(), golden.at("num_merges").get<int>());
  EXPECT_EQ(tok->vocab_size(), golden.at("config").at("vocab_size").get<int>());
  EXPECT_EQ(tok->SpecialId(SpecialToken::kBos), golden.at("inputs")[0].get<int>());
  const std::vector<int32_t> ids = tok->Encode(golden.at("text").get<std::string>());
  EXPECT_THAT(ids, ElementsAreArray(golden.at("tiktoken_ids").get<std::vector<int32_t>>()));
  EXPECT_EQ(tok->Decode(ids), golden.at("text").get<std::string>());
}

TEST(TiktokenPickle, WhatWeWriteReadsBackAsTheSameTokenizer) {
  absl::StatusOr<Tokenizer> tok = LoadTiktokenPickle(kGoldenPkl);
  ASSERT_TRUE(tok.ok()) << tok.status();
  const std::string path = TempPath("ours.pkl");
  ASSERT_TRUE(SaveTiktokenPickle(*tok, path).ok());
  absl::StatusOr<Tokenizer> again = LoadTiktokenPickle(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->merges(), tok->merges());
  EXPECT_EQ(again->pattern(), tok->pattern());
  // Either kind of file by its first byte: the pickle, and ours.
  const std::string ours = TempPath("ours.txt");
  ASSERT_TRUE(tok->Save(ours).ok());
  for (const std::string& file : {path, ours}) {
    absl::StatusOr<Tokenizer> any = LoadTokenizerOfAnyKind(file);
    ASSERT_TRUE(any.ok()) << file << ": " << any.status();
    EXPECT_EQ(any->merges(), tok->merges()) << file;
  }
}

// A trained vocabulary written as tokenizer.pkl reads back with exactly the merges training
// made: for a BPE-trained rank table, the split BPE finds for each token is the merged pair.
TEST(TiktokenPickle, RecoversTheTrainedMergesOfALargerVocabulary) {
  absl::StatusOr<Tokenizer> trained = Tokenizer::Train(LicenseTexts(), 4096);
  ASSERT_TRUE(trained.ok()) << trained.status();
  const std::string path = TempPath("trained.pkl");
  ASSERT_TRUE(SaveTiktokenPickle(*trained, path).ok());
  absl::StatusOr<Tokenizer> again = LoadTiktokenPickle(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->merges(), trained->merges());
  const std::string& text = LicenseTexts()[3];
  EXPECT_EQ(again->Encode(text), trained->Encode(text));
}

// A tokenizer.pkl with the given ranks (bytes in rank order) and specials starting at `first`.
std::string WritePkl(const std::string& name, const std::vector<std::string>& tokens, int first_special,
                     bool state_by_name = false) {
  base::PickleWriter p(4);
  p.Global("tiktoken.core", "Encoding");
  p.EmptyTuple();
  p.NewObj();
  if (state_by_name) {
    p.Str("cl100k_base");
  } else {
    p.EmptyDict();
    p.Mark();
    p.Str("pat_str");
    p.Str(R"(\s+|\S+)");
    p.Str("mergeable_ranks");
    p.EmptyDict();
    p.Mark();
    for (size_t i = 0; i < tokens.size(); ++i) p.Bytes(tokens[i]), p.Int(static_cast<int64_t>(i));
    p.SetItems();
    p.Str("special_tokens");
    p.EmptyDict();
    p.Mark();
    for (int i = 0; i < kNumSpecialTokens; ++i) p.Str(std::string(kSpecialTokenTexts[i])), p.Int(first_special + i);
    p.SetItems();
    p.SetItems();
  }
  p.Build();
  const std::string path = TempPath(name);
  EXPECT_TRUE(base::WriteFileAtomically(path, std::move(p).Finish()).ok());
  return path;
}

std::vector<std::string> Bytes256() {
  std::vector<std::string> t;
  for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
  return t;
}

std::string LoadError(const std::string& path) {
  absl::StatusOr<Tokenizer> tok = LoadTiktokenPickle(path);
  return tok.ok() ? "no error" : std::string(tok.status().message());
}

TEST(TiktokenPickle, MalformedFilesNameTheFileAndWhatIsWrong) {
  std::vector<std::string> t = Bytes256();
  t.push_back("ab");
  t.push_back("abc");
  EXPECT_EQ(LoadError(WritePkl("ok.pkl", t, 258)), "no error");

  std::vector<std::string> shuffled = t;
  std::swap(shuffled[0], shuffled[33]);  // GPT-2 style: printable bytes first
  std::string path = WritePkl("shuffled.pkl", shuffled, 258);
  EXPECT_THAT(LoadError(path), HasSubstr(path + ": mergeable_ranks: rank 0 is b'!', not the single byte 0"));

  std::vector<std::string> orphan = Bytes256();
  orphan.push_back("abc");  // no "ab" or "bc" before it
  path = WritePkl("orphan.pkl", orphan, 257);
  EXPECT_THAT(LoadError(path), HasSubstr("token 256 b'abc' is not two earlier tokens joined"));

  path = WritePkl("specials.pkl", t, 259);
  EXPECT_THAT(LoadError(path), HasSubstr(path + ": special token <|bos|> is int 259; nanochat gives it id 258"));

  path = WritePkl("byname.pkl", t, 258, /*state_by_name=*/true);
  EXPECT_THAT(LoadError(path), HasSubstr("registered encoding 'cl100k_base' by name"));

  path = TempPath("truncated.pkl");
  std::ifstream in(kGoldenPkl, std::ios::binary);
  std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(base::WriteFileAtomically(path, golden.substr(0, golden.size() / 2)).ok());
  EXPECT_THAT(LoadError(path), HasSubstr(path + ": byte "));

  EXPECT_THAT(LoadError(TempPath("missing.pkl")), HasSubstr("missing.pkl"));
}

}  // namespace
}  // namespace gpt_sft::data
