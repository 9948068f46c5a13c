#include "data/tasks/python_random.h"

#include <numeric>

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

// Expected values printed by CPython 3.11's random module, e.g.
//   python3 -c "import random; r=random.Random(42); print([r.getrandbits(32) for _ in range(3)])"

TEST(PythonRandom, MatchesCPythonGetRandBits) {
  PythonRandom r(42);
  EXPECT_EQ(r.GetRandBits(32), 2746317213u);
  EXPECT_EQ(r.GetRandBits(32), 478163327u);
  EXPECT_EQ(r.GetRandBits(32), 107420369u);
  EXPECT_EQ(PythonRandom(7).GetRandBits(40), 1040772936760u);
  EXPECT_EQ(PythonRandom((int64_t{1} << 40) + 5).GetRandBits(32), 2166296868u);  // a 2-word seed
}

TEST(PythonRandom, MatchesCPythonShuffle) {
  std::vector<int> v(20);
  std::iota(v.begin(), v.end(), 0);
  PythonRandom(42).Shuffle(&v);
  EXPECT_EQ(v, (std::vector<int>{19, 5, 14, 4, 9, 13, 15, 18, 6, 12, 17, 10, 1, 11, 2, 16, 7, 8, 0, 3}));
}

TEST(PythonRandom, MatchesCPythonRandomAndRandrange) {
  EXPECT_DOUBLE_EQ(PythonRandom(10000007).Random(), 0.6682698468719143);
  PythonRandom r(0);
  for (uint64_t expected : {864, 394, 776, 911, 430}) EXPECT_EQ(r.RandBelow(1000), expected);
}

}  // namespace
}  // namespace gpt_sft::data
