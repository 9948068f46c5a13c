#include "trainer/validation/spread.h"

#include "gtest/gtest.h"

namespace gpt_sft::trainer::validation {
namespace {

TEST(SpreadOf, OddCountMedianIsTheMiddleValue) {
  std::optional<Spread> s = SpreadOf({5, 1, 3});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 3);
  EXPECT_DOUBLE_EQ(s->median, 3);
  EXPECT_DOUBLE_EQ(s->min, 1);
  EXPECT_DOUBLE_EQ(s->max, 5);
  EXPECT_DOUBLE_EQ(s->p25, 2);
  EXPECT_DOUBLE_EQ(s->p75, 4);
}

TEST(SpreadOf, EvenCountInterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 10], [25, 50, 75]) == [1.75, 2.5, 4.75]
  std::optional<Spread> s = SpreadOf({10, 2, 1, 3});
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->p25, 1.75);
  EXPECT_DOUBLE_EQ(s->median, 2.5);
  EXPECT_DOUBLE_EQ(s->p75, 4.75);
}

TEST(SpreadOf, OneValueIsItsOwnSpread) {
  std::optional<Spread> s = SpreadOf({0.25});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 1);
  EXPECT_DOUBLE_EQ(s->median, 0.25);
  EXPECT_DOUBLE_EQ(s->p25, 0.25);
  EXPECT_DOUBLE_EQ(s->max, 0.25);
}

TEST(SpreadOf, NoValuesIsNoFigure) { EXPECT_FALSE(SpreadOf({}).has_value()); }

}  // namespace
}  // namespace gpt_sft::trainer::validation
