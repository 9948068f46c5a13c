#include "data/tasks/task_mixture.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "data/tasks/test_tasks.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using Pairs = std::vector<std::pair<int, int64_t>>;

Pairs Order(const TaskMixture& mix) {
  Pairs out;
  for (int64_t i = 0; i < mix.size(); ++i) out.push_back(mix.Locate(i));
  return out;
}

// Expected orders from python3:
//   pairs = [(t, l) for t, n in enumerate(SIZES) for l in range(n)]
//   random.Random(42).shuffle(pairs); print(pairs)

TEST(TaskMixture, ShufflesLikeNanochat) {
  TaskMixture mix({std::make_shared<NumberedTask>(0, 3), std::make_shared<NumberedTask>(1, 2),
                   std::make_shared<NumberedTask>(2, 4)});  // SIZES = [3, 2, 4]
  EXPECT_EQ(Order(mix), (Pairs{{1, 0}, {2, 1}, {2, 2}, {1, 1}, {2, 3}, {0, 2}, {2, 0}, {0, 0}, {0, 1}}));
  EXPECT_EQ(mix.Get(0)->answer, "1:0");
  EXPECT_EQ(mix.Get(8)->answer, "0:1");
}

TEST(TaskMixture, PassingATaskTwiceOversamplesIt) {
  auto a = std::make_shared<NumberedTask>(0, 4);
  TaskMixture mix({a, std::make_shared<NumberedTask>(1, 3), a});  // SIZES = [4, 3, 4]
  EXPECT_EQ(Order(mix), (Pairs{{2, 0}, {0, 3}, {0, 2}, {2, 1}, {1, 1}, {1, 2}, {2, 2}, {1, 0}, {0, 0}, {0, 1}, {2, 3}}));
  int from_a = 0;
  for (int64_t i = 0; i < mix.size(); ++i) from_a += mix.Get(i)->answer[0] == '0';
  EXPECT_EQ(from_a, 8);  // every row of `a` twice
}

TEST(TaskMixture, UsesTheLogicalSliceOfEachTask) {
  auto sliced = std::make_shared<NumberedTask>(0, 10);
  ASSERT_TRUE(sliced->SetSlice(1, 8, 3).ok());  // rows 1, 4, 7
  TaskMixture mix({sliced, std::make_shared<NumberedTask>(1, 5)});  // SIZES = [3, 5]
  EXPECT_EQ(Order(mix), (Pairs{{1, 0}, {1, 1}, {1, 3}, {1, 4}, {0, 2}, {1, 2}, {0, 0}, {0, 1}}));
  EXPECT_EQ(mix.Get(4)->answer, "0:7");  // local index 2 is physical row 7
}

TEST(TaskMixture, LargerMixtureMatchesPython) {
  TaskMixture mix({std::make_shared<NumberedTask>(0, 600), std::make_shared<NumberedTask>(1, 300),
                   std::make_shared<NumberedTask>(2, 100)});  // SIZES = [600, 300, 100]
  const Pairs order = Order(mix);
  ASSERT_EQ(order.size(), 1000u);
  EXPECT_EQ(Pairs(order.begin(), order.begin() + 8),
            (Pairs{{1, 176}, {0, 507}, {1, 295}, {2, 22}, {0, 33}, {0, 483}, {0, 85}, {1, 150}}));
  EXPECT_EQ(Pairs(order.end() - 3, order.end()), (Pairs{{0, 25}, {0, 114}, {1, 54}}));
  // python3: sum(i * (t * 1000 + l) for i, (t, l) in enumerate(pairs)) % (2**61 - 1)
  uint64_t checksum = 0;
  for (size_t i = 0; i < order.size(); ++i) checksum += i * (order[i].first * 1000 + order[i].second);
  EXPECT_EQ(checksum % ((uint64_t{1} << 61) - 1), 367934598u);
}

TEST(TaskMixture, EmptyAndOutOfRange) {
  TaskMixture empty({});
  EXPECT_EQ(empty.size(), 0);
  TaskMixture mix({std::make_shared<NumberedTask>(0, 2)});
  EXPECT_EQ(mix.Get(2).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(mix.Get(-1).status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace gpt_sft::data
