// Encode checked against tiktoken, an independent implementation of the same rules.
//
// How the constants were made (Python 3.11, tiktoken 0.14.0, by hand; no test runs
// Python): tok_train wrote each vocabulary below, and tiktoken_golden.py (its docstring has
// the commands) built from each file's merges
//   tiktoken.Encoding(name="rustbpe", pat_str=<the file's pattern>,
//                     mergeable_ranks={bytes of id: id}, special_tokens={name: 256+N+i})
// and printed encode_ordinary(s) for the strings, and for whole texts the token count and
// the FNV-1a checksum. Training is deterministic, so the tests retrain here and first
// check that the merges are the ones tiktoken was given.
#include <cstdint>

#include "absl/strings/str_join.h"
#include "data/tokenizer/english_corpus.h"
#include "data/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::ElementsAreArray;

// FNV-1a (64-bit) over the ids as 4 little-endian bytes each.
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

uint64_t MergesChecksum(const Tokenizer& tok) {
  std::vector<int32_t> flat;
  for (const auto& [l, r] : tok.merges()) flat.push_back(l), flat.push_back(r);
  return Fnv1a(flat);
}

std::string ReadLicense(const std::string& name) {
  const auto& names = LicenseFileNames();
  const size_t i = std::find(names.begin(), names.end(), name) - names.begin();
  return LicenseTexts().at(i);
}

// 1024 tokens trained on GPL-3, Apache-2.0 and MPL-2.0 (three texts).
const Tokenizer& Vocab1024() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(
      {ReadLicense("GPL-3"), ReadLicense("Apache-2.0"), ReadLicense("MPL-2.0")}, 1024));
  return *tok;
}

struct Case {
  const char* text;
  std::vector<int32_t> ids;
};

TEST(TiktokenGolden, Vocab1024Strings) {
  const Tokenizer& tok = Vocab1024();
  ASSERT_EQ(tok.num_merges(), 759);
  ASSERT_EQ(MergesChecksum(tok), 0xfd00f9c3c1cb7fc3ull);
  const std::vector<Case> cases = {
      {"Hello world! It's 2024; don't   stop.\n\n  Next",
       {72, 101, 413, 111, 277, 259, 540, 33, 404, 116, 676, 32, 50, 48, 50,
        52, 59, 302, 260, 39, 116, 256, 543, 684, 314, 32, 509, 603, 116}},
      {"HE'LL WE'VE they're I'M 'tis",
       {678, 39, 76, 76, 376, 69, 39, 86, 69, 917, 39, 269, 404, 39, 77, 32, 39, 266, 115}},
      {"12345 3.14159 \xd9\xa1\xd9\xa2\xd9\xa3",
       {49, 50, 51, 52, 53, 32, 51, 46, 49, 52, 49, 53, 57, 32, 217, 161, 217, 162, 217, 163}},
      {"h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c na\xc3\xafve caf\xc3\xa9",
       {104, 195, 169, 413, 111, 32, 228, 184, 150, 231, 149, 140, 306, 97, 195, 175, 323, 270,
        97, 102, 195, 169}},
      {"tabs\there\r\nCRLF\r\n\r\nend   ",
       {116, 358, 115, 9, 104, 525, 13, 10, 67, 82, 76, 70, 13, 10, 13, 10, 265, 100, 318}},
      {"<|bos|>hi<|user_start|>",
       {60, 124, 98, 713, 124, 62, 599, 60, 124, 117, 524, 95, 347, 300, 116, 124, 62}},
      {"    indented code():\n        return x+1\n",
       {318, 292, 100, 307, 276, 483, 40, 41, 58, 10, 915, 311, 116, 455, 110, 32, 120, 43, 49,
        10}},
      {"!!!???...\n\n\n", {33, 33, 33, 63, 63, 63, 46, 46, 314, 10}},
      {"\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd ok", {240, 159, 145, 141, 240, 159, 143, 189, 268, 107}},
      {"the License, or (at your option) any later version.",
       {544, 321, 44, 291, 368, 280, 495, 268, 112, 279, 41, 344, 315, 606, 457, 46}},
  };
  for (const Case& c : cases) EXPECT_THAT(tok.Encode(c.text), ElementsAreArray(c.ids)) << c.text;
}

TEST(TiktokenGolden, Vocab1024Corpus) {
  const std::string text = ReadLicense("GPL-3") + ReadLicense("Apache-2.0") + ReadLicense("MPL-2.0");
  ASSERT_EQ(text.size(), 63233u);
  std::vector<int32_t> ids = Vocab1024().Encode(text);
  EXPECT_EQ(ids.size(), 19206u);
  EXPECT_EQ(Fnv1a(ids), 0x31fcb92ee15dc136ull);
}

TEST(TiktokenGolden, Vocab1024LongChunks) {
  // Longer than BpeEncoder::kShortChunk, so these take the heap path.
  struct Long {
    std::string text;
    size_t count;
    uint64_t fnv;
  };
  const std::vector<Long> cases = {
      {std::string(5000, ' ') + "x", 159, 0xc38c17417288eb71ull},
      {absl::StrJoin(std::vector<std::string>(50, "thelicense"), ""), 100, 0xe4c4268facd4d4f7ull},
      {absl::StrJoin(std::vector<std::string>(40, "ab"), ""), 40, 0xdcdad00bfce2d2b3ull},
      {std::string(100000, ' '), 3125, 0x8a6bc2a0b2fdedf4ull},
  };
  for (const Long& c : cases) {
    std::vector<int32_t> ids = Vocab1024().Encode(c.text);
    EXPECT_EQ(ids.size(), c.count) << c.text.substr(0, 12);
    EXPECT_EQ(Fnv1a(ids), c.fnv) << c.text.substr(0, 12);
  }
}

// The licenses encoded one file at a time (in LicenseFileNames() order) and concatenated.
std::vector<int32_t> EncodeLicenses(const Tokenizer& tok) {
  std::vector<int32_t> ids;
  for (const std::string& text : LicenseTexts()) tok.EncodeAppend(text, &ids);
  return ids;
}

TEST(TiktokenGolden, Vocab8192OnLicensesAndWords) {
  std::vector<std::string> texts = LicenseTexts();
  texts.push_back(WordListText());
  Tokenizer tok = *Tokenizer::Train(texts, 8192);
  ASSERT_EQ(tok.num_merges(), 7927);
  ASSERT_EQ(MergesChecksum(tok), 0x9b84f27779445cd1ull);
  std::vector<int32_t> ids = EncodeLicenses(tok);
  EXPECT_EQ(ids.size(), 57216u);
  EXPECT_EQ(Fnv1a(ids), 0x860ef90710cd42e5ull);
  ids = tok.Encode(WordListText());
  EXPECT_EQ(ids.size(), 390363u);
  EXPECT_EQ(Fnv1a(ids), 0x7ce28aa036a8f19eull);
}

TEST(TiktokenGolden, Vocab65536OnLicensesAndWordsWithNanochatIds) {
  std::vector<std::string> texts = LicenseTexts();
  texts.push_back(WordListText());
  Tokenizer tok = *Tokenizer::Train(texts, 65536);
  ASSERT_EQ(tok.num_merges(), 65271);
  ASSERT_EQ(MergesChecksum(tok), 0xd0ba8df4522ace4ull);
  // nanochat's ids at its default vocabulary (NANOCHAT.md 5.1).
  EXPECT_EQ(tok.vocab_size(), 65536);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kBos), 65527);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kUserStart), 65528);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kAssistantStart), 65530);
  EXPECT_EQ(tok.SpecialId(SpecialToken::kOutputEnd), 65535);
  std::vector<int32_t> ids = EncodeLicenses(tok);
  EXPECT_EQ(ids.size(), 48801u);
  EXPECT_EQ(Fnv1a(ids), 0xcacf536b63204e40ull);
  EXPECT_THAT(
      tok.Encode("Hello world! It's 2024; the GNU General Public License, version 3.\n\n  "
                 "<|bos|> caf\xc3\xa9 \xe4\xb8\x96\xe7\x95\x8c"),
      ElementsAreArray({72,   3888, 7038, 33,  5574, 256, 32,  3641, 50,  52,  59,  303, 1166,
                        1148, 1042, 480,  44,  777,  32,  51,  448,  32,  2952, 124, 3929, 124,
                        62,   582,  618,  871, 32,   228, 184, 150,  231, 149, 140}));
}

}  // namespace
}  // namespace gpt_sft::data
