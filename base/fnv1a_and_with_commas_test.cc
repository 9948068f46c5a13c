#include "base/fnv1a.h"
#include "base/with_commas.h"

#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

// The published FNV-1a 64 test vectors (the empty string is the offset basis).
TEST(Fnv1a64Test, MatchesTheReferenceVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(WithCommasTest, GroupsThousandsAsPythonDoes) {
  EXPECT_EQ(WithCommas(0), "0");
  EXPECT_EQ(WithCommas(999), "999");
  EXPECT_EQ(WithCommas(1000), "1,000");
  EXPECT_EQ(WithCommas(1234567), "1,234,567");
  EXPECT_EQ(WithCommas(-6024), "-6,024");
}

}  // namespace
}  // namespace gpt_sft::base
