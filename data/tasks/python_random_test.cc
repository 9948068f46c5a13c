#include "data/tasks/python_random.h"

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

// Every expected value below was printed by CPython 3.11.7's random module, e.g.
//   python3 -c "import random; r=random.Random(42); print([r.getrandbits(32) for _ in range(5)])"

TEST(PythonRandom, GetRandBits32MatchesCPython) {
  PythonRandom r(42);
  for (uint64_t want : {2746317213u, 478163327u, 107420369u, 3184935163u, 1181241943u}) EXPECT_EQ(r.GetRandBits(32), want);
  EXPECT_EQ(PythonRandom(0).GetRandBits(32), 3626764237u);  // seed 0 is the key [0]
}

TEST(PythonRandom, GetRandBitsOfOtherWidthsMatchesCPython) {
  // Random(123): getrandbits(64), (1), (17), (33) in a row.
  PythonRandom r(123);
  EXPECT_EQ(r.GetRandBits(64), 4937772249435845478u);
  EXPECT_EQ(r.GetRandBits(1), 0u);
  EXPECT_EQ(r.GetRandBits(17), 100788u);
  EXPECT_EQ(r.GetRandBits(33), 1749090055u);
  EXPECT_EQ(PythonRandom(7).GetRandBits(40), 1040772936760u);
  EXPECT_EQ(PythonRandom(7).GetRandBits(0), 0u);
}

TEST(PythonRandom, SeedsLikeCPython) {
  EXPECT_EQ(PythonRandom((int64_t{1} << 40) + 5).GetRandBits(32), 2166296868u);  // a 2-word key
  EXPECT_EQ(PythonRandom(-42).GetRandBits(32), 2746317213u);                    // abs(seed)
  EXPECT_EQ(PythonRandom(std::numeric_limits<int64_t>::min()).GetRandBits(32), 2377109768u);  // Random(-2**63)
  EXPECT_EQ(PythonRandom::FromWords({0xffffffffu, 0xffffffffu}).GetRandBits(32), 93740670u);  // Random(2**64-1)
  EXPECT_EQ(PythonRandom::FromWords({11, 9, 3}).GetRandBits(32), 2105928931u);  // Random((3<<64)|(9<<32)|11)
  EXPECT_EQ(PythonRandom::FromWords({42, 0, 0}).GetRandBits(32), 2746317213u);  // high zero words dropped
  EXPECT_EQ(PythonRandom::FromWords({}).GetRandBits(32), 3626764237u);          // the int 0
}

TEST(PythonRandom, StateRegeneratesAcrossBlocks) {
  // Outputs 998..1000 of Random(1): the 624-word state has been regenerated once.
  PythonRandom r(1);
  for (int i = 0; i < 997; ++i) r.NextUint32();
  EXPECT_EQ(r.NextUint32(), 3459505520u);
  EXPECT_EQ(r.NextUint32(), 1336814837u);
  EXPECT_EQ(r.NextUint32(), 1877627338u);
}

TEST(PythonRandom, RandomMatchesCPython) {
  EXPECT_EQ(PythonRandom(10000007).Random(), 0.6682698468719143);
  EXPECT_EQ(PythonRandom(0).Random(), 0.8444218515250481);
  PythonRandom r(99);
  EXPECT_EQ(r.Random(), 0.40397807494366633);
  EXPECT_EQ(r.Random(), 0.20007544457494542);
  EXPECT_EQ(r.Random(), 0.17880232058661227);
}

TEST(PythonRandom, RandBelowAndChoiceMatchCPython) {
  PythonRandom r(0);
  for (uint64_t want : {864u, 394u, 776u, 911u, 430u}) EXPECT_EQ(r.RandBelow(1000), want);  // randrange(1000)
  PythonRandom c(5);
  const std::string letters = "abcdefg";
  std::string got;
  for (int i = 0; i < 8; ++i) got += c.Choice(letters);
  EXPECT_EQ(got, "ecfcgfgf");
  EXPECT_EQ(PythonRandom(3).RandBelow(0), 0u);  // documented: no endless loop
  EXPECT_EQ(PythonRandom(3).RandBelow(1), 0u);
}

TEST(PythonRandom, ShuffleMatchesCPython) {
  std::vector<int> v(20);
  std::iota(v.begin(), v.end(), 0);
  PythonRandom(42).Shuffle(&v);
  EXPECT_EQ(v, (std::vector<int>{19, 5, 14, 4, 9, 13, 15, 18, 6, 12, 17, 10, 1, 11, 2, 16, 7, 8, 0, 3}));
  std::vector<int> one = {7}, none;
  PythonRandom(42).Shuffle(&one);
  PythonRandom(42).Shuffle(&none);
  EXPECT_EQ(one, std::vector<int>{7});
}

TEST(PythonRandom, DiffersFromStdMt19937Seeding) {
  // std::mt19937(42)'s first output is 1608637542; CPython's init_by_array([42]) gives another.
  EXPECT_NE(PythonRandom(42).NextUint32(), 1608637542u);
}

}  // namespace
}  // namespace gpt_sft::data
