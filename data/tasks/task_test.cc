#include "data/tasks/task.h"

#include <optional>

#include "data/tasks/test_tasks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using ::testing::HasSubstr;

struct SliceCase {
  int64_t n, start;
  std::optional<int64_t> stop;
  int64_t step;
  std::vector<int64_t> rows;  // python3: list(range(n)[start:stop:step])
};

class TaskSlice : public ::testing::TestWithParam<SliceCase> {};

TEST_P(TaskSlice, MatchesPythonRangeSlicing) {
  const SliceCase& c = GetParam();
  NumberedTask t(0, c.n);
  ASSERT_TRUE(t.SetSlice(c.start, c.stop, c.step).ok());
  ASSERT_EQ(t.size(), static_cast<int64_t>(c.rows.size()));
  for (size_t i = 0; i < c.rows.size(); ++i) EXPECT_EQ(t.Get(i)->answer, "0:" + std::to_string(c.rows[i]));
}

INSTANTIATE_TEST_SUITE_P(All, TaskSlice,
                         ::testing::Values(SliceCase{10, 0, std::nullopt, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
                                           SliceCase{10, 1, 8, 3, {1, 4, 7}},
                                           SliceCase{10, 2, std::nullopt, 4, {2, 6}},
                                           SliceCase{10, 5, 5, 1, {}},
                                           SliceCase{10, 0, 10, 20, {0}},
                                           SliceCase{7, 0, std::nullopt, 2, {0, 2, 4, 6}}));

TEST(Task, GetStaysInsideTheSlice) {
  NumberedTask t(0, 10);
  ASSERT_TRUE(t.SetSlice(1, 8, 3).ok());  // rows 1, 4, 7; physical row 10 would be next
  EXPECT_EQ(t.Get(3).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(t.Get(-1).status().message(), HasSubstr("Numbered0: example -1 is outside [0, 3)"));
}

TEST(Task, RejectsBadSlicesAndKeepsTheOldOne) {
  NumberedTask t(0, 10);
  ASSERT_TRUE(t.SetSlice(2).ok());
  EXPECT_THAT(t.SetSlice(-1).message(), HasSubstr("bad slice start=-1"));
  EXPECT_FALSE(t.SetSlice(5, 4).ok());
  EXPECT_THAT(t.SetSlice(0, 11).message(), HasSubstr("stop=11"));
  EXPECT_THAT(t.SetSlice(0, std::nullopt, 0).message(), HasSubstr("step=0"));
  EXPECT_EQ(t.size(), 8);
  EXPECT_EQ(t.Get(0)->answer, "0:2");
}

TEST(Task, DefaultEvaluateIsExactMatch) {
  NumberedTask t(3, 2);
  Example ex = *t.Get(1);
  EXPECT_TRUE(t.Evaluate(ex, "3:1"));
  EXPECT_FALSE(t.Evaluate(ex, "3:1 "));
  EXPECT_STREQ(EvalTypeName(EvalType::kCategorical), "categorical");
  EXPECT_STREQ(EvalTypeName(EvalType::kGenerative), "generative");
}

}  // namespace
}  // namespace gpt_sft::data
