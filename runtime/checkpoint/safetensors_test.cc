#include "runtime/checkpoint/safetensors.h"

#include <cstring>
#include <string>

#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::runtime {
namespace {

using ::testing::HasSubstr;
using base::testing::FreshTestDir;
using base::testing::WriteBytes;

std::string LePrefix(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file spelled out by hand: a [2] F32 tensor "a" = {1, 2} and a [1, 2] BF16 tensor "b".
std::string HandWrittenFile() {
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]}})";
  const float a[2] = {1.0f, 2.0f};
  std::string data(reinterpret_cast<const char*>(a), 8);
  data += std::string("\x80\x3f\x00\x40", 4);  // bf16 1.0 (0x3f80) and 2.0 (0x4000), little-endian
  return LePrefix(json.size()) + json + data;
}

absl::Status ParseStatus(const std::string& json, uint64_t data_size) {
  return ParseSafetensorsHeader("x.safetensors", json, data_size).status();
}

TEST(Safetensors, DtypeSizes) {
  EXPECT_EQ(DtypeSize("F32"), 4);
  EXPECT_EQ(DtypeSize("BF16"), 2);
  EXPECT_EQ(DtypeSize("I64"), 8);
  EXPECT_EQ(DtypeSize("f32"), -1);
}

TEST(Safetensors, ReadsAHandWrittenFile) {
  const std::string path = FreshTestDir() + "/h.safetensors";
  const std::string bytes = HandWrittenFile();
  WriteBytes(path, bytes);
  SafetensorsHeader h = *ReadSafetensorsHeader(path);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "a");
  EXPECT_EQ(h.tensors[0].dtype, "F32");
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(h.tensors[1].name, "b");
  EXPECT_EQ(h.tensors[1].begin, 8u);
  EXPECT_EQ(h.tensors[1].end, 12u);
  EXPECT_EQ(h.data_size, 12u);
  EXPECT_EQ(h.data_start, bytes.size() - 12);
  ASSERT_EQ(h.metadata.size(), 1u);
  EXPECT_EQ(h.metadata[0], (std::pair<std::string, std::string>{"format", "pt"}));
}

TEST(Safetensors, EncodeIsTheFormatPaddedToEightBytes) {
  const std::string enc = EncodeSafetensorsHeader({{"w", "F32", {2, 3}, 0, 24}}, {{"format", "pt"}});
  const std::string json = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";
  ASSERT_EQ(enc.size() % 8, 0u);
  const size_t n = enc.size() - 8;
  EXPECT_EQ(enc.substr(0, 8), LePrefix(n));
  EXPECT_EQ(enc.substr(8, json.size()), json);
  EXPECT_EQ(enc.substr(8 + json.size()), std::string(n - json.size(), ' '));
  SafetensorsHeader h = *ParseSafetensorsHeader("e", enc.substr(8), 24);
  ASSERT_EQ(h.tensors.size(), 1u);
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{2, 3}));
}

TEST(Safetensors, OrderOfEntriesNeedNotBeDataOrder) {
  SafetensorsHeader h = *ParseSafetensorsHeader(
      "f", R"({"b":{"dtype":"U8","shape":[3],"data_offsets":[2,5]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 5);
  EXPECT_EQ(h.tensors[0].name, "a");
  EXPECT_EQ(h.tensors[1].name, "b");
}

TEST(Safetensors, ScalarsAndEmptyTensorsAreFine) {
  EXPECT_TRUE(ParseSafetensorsHeader("f",
                                     R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
                                     R"("z":{"dtype":"F32","shape":[0,4],"data_offsets":[8,8]}})",
                                     8)
                  .ok());
}

struct BadHeader {
  const char* json;
  uint64_t data_size;
  const char* message;
};

class SafetensorsBadHeader : public ::testing::TestWithParam<BadHeader> {};

TEST_P(SafetensorsBadHeader, IsAnErrorNamingFileAndTensor) {
  absl::Status s = ParseStatus(GetParam().json, GetParam().data_size);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("x.safetensors"));
  EXPECT_THAT(s.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SafetensorsBadHeader,
    ::testing::Values(
        BadHeader{"{not json", 0, "not JSON"}, BadHeader{"[1,2]", 0, "not a JSON object"},
        BadHeader{R"({"__metadata__":[1]})", 0, "\"__metadata__\" is not an object"},
        BadHeader{R"({"__metadata__":{"k":1}})", 0, "value of \"k\" is not a string"},
        BadHeader{R"({"t":5})", 0, "tensor \"t\": entry is not an object"},
        BadHeader{R"({"t":{"shape":[1],"data_offsets":[0,4]}})", 4, "tensor \"t\": \"dtype\" missing"},
        BadHeader{R"({"t":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", 4, "tensor \"t\": unknown dtype \"Q4\""},
        BadHeader{R"({"t":{"dtype":"F32","data_offsets":[0,4]}})", 4, "tensor \"t\": \"shape\" missing"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "tensor \"t\": shape entry -1"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4, "tensor \"t\": shape entry 1.5"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1]}})", 4, "tensor \"t\": \"data_offsets\" must be"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, "tensor \"t\": \"data_offsets\" must be"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", 4, "run backwards"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 4, "unknown field \"x\""},
        BadHeader{R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8,
                  "tensor \"t\": shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8, "overflows"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8,
                  "tensor \"t\" begins at 4 but the data starts at 0: a gap"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                  8, "tensor \"b\" begins at 4 but tensor \"a\" ends at 8: overlapping"},
        BadHeader{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                  12, "tensor \"b\" begins at 8 but tensor \"a\" ends at 4: a gap"},
        // A repeated name keeps one entry, so the other's bytes show up as a gap.
        BadHeader{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                  8, "a gap"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4,
                  "truncated: tensor \"t\" needs data bytes [0, 8) but the file holds 4"},
        BadHeader{R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 6, "trailing bytes"}));

TEST(Safetensors, FileLevelErrorsNameTheFile) {
  const std::string dir = FreshTestDir();
  struct Case {
    std::string name, bytes, message;
  };
  const std::string good = HandWrittenFile();
  const std::vector<Case> cases = {
      {"empty.safetensors", "", "too short"},
      {"short.safetensors", "abc", "too short"},
      {"huge_header.safetensors", LePrefix(1000) + "{}", "header length 1000 exceeds the file's 10 bytes"},
      // A torch .pt file is a zip: its first 8 bytes read as an absurd header length.
      {"model.pt", std::string("PK\x03\x04\x14\x00\x00\x00", 8) + std::string(100, 'z'), "not a safetensors file"},
      {"not_brace.safetensors", LePrefix(2) + "[]", "does not start with '{'"},
      {"truncated.safetensors", good.substr(0, good.size() - 3), "truncated: tensor \"b\""},
      {"truncated_header.safetensors", good.substr(0, 20), "exceeds the file"},
  };
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.name;
    WriteBytes(path, c.bytes);
    absl::Status s = ReadSafetensorsHeader(path).status();
    EXPECT_THAT(s.message(), HasSubstr(path)) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.name;
  }
  EXPECT_THAT(ReadSafetensorsHeader(dir + "/missing.safetensors").status().message(), HasSubstr("missing.safetensors"));
}

}  // namespace
}  // namespace gpt_sft::runtime
