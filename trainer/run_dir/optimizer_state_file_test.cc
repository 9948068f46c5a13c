#include "trainer/run_dir/optimizer_state_file.h"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/read_file.h"
#include "base/test_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

using ::testing::HasSubstr;

OptimizerState TwoTensors() {
  OptimizerState state;
  state.steps_taken = 2;
  state.tensors.emplace_back("adamw.exp_avg/lm_head.weight",
                             runtime::Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  state.tensors.emplace_back("muon.momentum_buffer/h.0.attn.c_q.weight",
                             runtime::Tensor::FromVector<float>({4}, {-1, 0.5f, 0.25f, 8}));
  return state;
}

std::string Written() {
  const std::string path = base::testing::FreshTestDir() + "/optim_000002.safetensors";
  EXPECT_TRUE(WriteOptimizerStateFile(path, TwoTensors()).ok());
  return path;
}

void Overwrite(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(OptimizerStateFile, RoundTripsExactly) {
  const std::string path = Written();
  absl::StatusOr<OptimizerState> read = ReadOptimizerStateFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->steps_taken, 2);
  ASSERT_EQ(read->tensors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(read->tensors[i].first, TwoTensors().tensors[i].first);
    EXPECT_EQ(std::memcmp(read->tensors[i].second.raw_data(), TwoTensors().tensors[i].second.raw_data(),
                          read->tensors[i].second.bytes()),
              0);
  }
}

// A flipped bit in either tensor's bytes is refused, naming the file and that tensor.
TEST(OptimizerStateFile, AFlippedBitInATensorIsRefusedNamingIt) {
  const std::string path = Written();
  const std::string bytes = *base::ReadFile(path);
  const int64_t data_start = 8 + [&] {
    uint64_t n;
    std::memcpy(&n, bytes.data(), 8);
    return int64_t(n);
  }();
  const std::vector<std::pair<int64_t, std::string>> hits = {{data_start + 5, "adamw.exp_avg/lm_head.weight"},
                                                            {data_start + 24 + 9, "muon.momentum_buffer/h.0.attn.c_q.weight"}};
  for (const auto& [offset, tensor] : hits) {
    for (int bit : {0, 7}) {
      std::string flipped = bytes;
      flipped[offset] = char(flipped[offset] ^ (1 << bit));
      Overwrite(path, flipped);
      absl::StatusOr<OptimizerState> read = ReadOptimizerStateFile(path);
      ASSERT_FALSE(read.ok()) << tensor << " bit " << bit;
      EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_THAT(read.status().message(), HasSubstr(path));
      EXPECT_THAT(read.status().message(), HasSubstr("'" + tensor + "' does not match its checksum"));
    }
  }
}

// steps_taken sits in the header's text: '2' -> '3' is one bit, a valid header and a wrong step.
TEST(OptimizerStateFile, AFlippedBitInStepsTakenIsRefused) {
  const std::string path = Written();
  std::string bytes = *base::ReadFile(path);
  const size_t at = bytes.find("\"steps_taken\":\"2\"");
  ASSERT_NE(at, std::string::npos) << bytes.substr(0, 300);
  bytes[at + std::strlen("\"steps_taken\":\"")] ^= 1;
  Overwrite(path, bytes);
  absl::StatusOr<OptimizerState> read = ReadOptimizerStateFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("'steps_taken' does not match its checksum"));
}

TEST(OptimizerStateFile, ATruncatedFileIsRefusedNamingIt) {
  const std::string path = Written();
  const std::string bytes = *base::ReadFile(path);
  for (size_t keep : {bytes.size() - 1, bytes.size() - 20, size_t(100), size_t(7), size_t(0)}) {
    Overwrite(path, bytes.substr(0, keep));
    absl::StatusOr<OptimizerState> read = ReadOptimizerStateFile(path);
    ASSERT_FALSE(read.ok()) << keep;
    EXPECT_THAT(read.status().message(), HasSubstr(path)) << keep;
  }
}

}  // namespace
}  // namespace gpt_sft::trainer
