#include "base/read_file.h"

#include <string>

#include "base/test_dir.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

TEST(ReadFile, ReturnsEveryByte) {
  const std::string path = testing::FreshTestDir() + "/f.bin";
  const std::string bytes("a\0b\nc", 5);
  testing::WriteBytes(path, bytes);
  absl::StatusOr<std::string> read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, bytes);
}

TEST(ReadFile, MissingFileIsNotFoundNamingIt) {
  const std::string path = testing::FreshTestDir() + "/missing.json";
  absl::StatusOr<std::string> read = ReadFile(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(), path + ": cannot open");
}

}  // namespace
}  // namespace gpt_sft::base
