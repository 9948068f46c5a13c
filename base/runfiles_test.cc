#include "base/runfiles.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

using ::testing::HasSubstr;

TEST(FindRunfile, FindsAnExternalRepositoryFileOfTheTest) {
  absl::StatusOr<std::string> words = FindRunfile("external/wordlist/words");
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_THAT(*words, HasSubstr("words"));
}

TEST(FindRunfile, FindsAMainWorkspaceFile) {
  absl::StatusOr<std::string> self = FindRunfile("base/runfiles_test.cc");
  ASSERT_TRUE(self.ok()) << self.status();
}

TEST(FindRunfile, NotFoundListsWhereItLooked) {
  absl::Status missing = FindRunfile("external/nothing/here").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("runfile external/nothing/here not found; tried: "));
}

}  // namespace
}  // namespace gpt_sft::base
