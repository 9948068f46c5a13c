#include "base/split_mix64.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace gpt_sft::base {
namespace {

// The first words of SplitMix64 seeded with 0, as printed by the reference implementation
// (Vigna's splitmix64.c): a changed constant or shift changes every pinned draw downstream.
TEST(SplitMix64, MatchesTheReferenceSequence) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.Next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.Next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.Next(), 0x06C45D188009454Full);
}

TEST(SplitMix64, NextDoubleIsTheTop53BitsOfTheNextWord) {
  SplitMix64 words(42), doubles(42);
  const uint64_t word = words.Next();
  EXPECT_EQ(word, 0xBDD732262FEB6E95ull);
  EXPECT_EQ(doubles.NextDouble(), static_cast<double>(word >> 11) / 9007199254740992.0);
  for (int i = 0; i < 1000; ++i) {
    const double u = doubles.NextDouble();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace gpt_sft::base
