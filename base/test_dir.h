// Test helpers: a fresh directory under $TEST_TMPDIR per test, and file utilities.
#ifndef GPT_SFT_BASE_TEST_DIR_H_
#define GPT_SFT_BASE_TEST_DIR_H_

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::base::testing {

/// $TEST_TMPDIR/<suite>.<test>, emptied.
inline std::string FreshTestDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") /
                              (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// The names in `dir`, sorted.
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace gpt_sft::base::testing

#endif  // GPT_SFT_BASE_TEST_DIR_H_
