#include "trainer/non_finite_scan.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

TEST(NonFiniteScan, FindsTheFirstNanOrInfinityAnywhere) {
  std::vector<float> data(10000, 1.5f);
  data[17] = std::numeric_limits<float>::max();  // finite: not reported
  EXPECT_EQ(FirstNonFiniteIndex(data.data(), int64_t(data.size())), -1);
  for (int64_t at : {int64_t(0), int64_t(4095), int64_t(4096), int64_t(9999)}) {
    for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
      std::vector<float> copy = data;
      copy[size_t(at)] = bad;
      copy[9999] = at == 9999 ? bad : std::nanf("");  // a later one must not hide the first
      EXPECT_EQ(FirstNonFiniteIndex(copy.data(), int64_t(copy.size())), at) << "at " << at << " value " << bad;
    }
  }
}

TEST(NonFiniteScan, NamesTheTensorElementAndValue) {
  std::vector<float> data = {0.f, -2.f, -std::numeric_limits<float>::infinity()};
  std::optional<NonFiniteValue> found = FindNonFinite("transformer.h.0.attn.c_q.weight", data.data(), 3);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->tensor, "transformer.h.0.attn.c_q.weight");
  EXPECT_EQ(found->element, 2);
  EXPECT_TRUE(std::isinf(found->value) && found->value < 0);
  EXPECT_FALSE(FindNonFinite("x", data.data(), 2).has_value());
  EXPECT_FALSE(FindNonFinite("empty", data.data(), 0).has_value());
}

}  // namespace
}  // namespace gpt_sft::trainer
