#include "base/cpu_isa.h"

#include <cstdlib>
#include <string>
#include <variant>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpt_sft {
namespace {

using ::testing::HasSubstr;

constexpr CpuIsa kAll[] = {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16, CpuIsa::kAmx};

TEST(CpuIsa, NamesRoundTrip) {
  for (CpuIsa isa : kAll) EXPECT_EQ(ParseCpuIsa(CpuIsaName(isa)), isa);
  EXPECT_EQ(ParseCpuIsa("AVX2"), std::nullopt);
  EXPECT_EQ(ParseCpuIsa("avx512bf16"), std::nullopt);
  EXPECT_EQ(ParseCpuIsa(""), std::nullopt);
}

TEST(CpuIsa, NoCapIsTheNativeLevel) {
  for (CpuIsa native : kAll) {
    EXPECT_EQ(std::get<CpuIsa>(ResolveCpuIsa(native, nullptr)), native);
    EXPECT_EQ(std::get<CpuIsa>(ResolveCpuIsa(native, "")), native);
  }
}

TEST(CpuIsa, ACapAtOrBelowTheCpuIsHonoured) {
  for (CpuIsa native : kAll) {
    for (CpuIsa cap : kAll) {
      if (cap > native) continue;
      const auto got = ResolveCpuIsa(native, CpuIsaName(cap));
      ASSERT_TRUE(std::holds_alternative<CpuIsa>(got)) << std::get<std::string>(got);
      EXPECT_EQ(std::get<CpuIsa>(got), cap);
    }
  }
}

TEST(CpuIsa, ACapAboveTheCpuIsAnErrorNamingTheVariableAndTheCpusLevel) {
  const auto got = ResolveCpuIsa(CpuIsa::kAvx2, "amx");
  ASSERT_TRUE(std::holds_alternative<std::string>(got));
  EXPECT_THAT(std::get<std::string>(got), HasSubstr("GPT_SFT_CPU_ISA=amx"));
  EXPECT_THAT(std::get<std::string>(got), HasSubstr("above this CPU's level, avx2"));
}

TEST(CpuIsa, AnUnknownCapIsAnErrorListingTheLevels) {
  const auto got = ResolveCpuIsa(CpuIsa::kAvx512, "avx1024");
  ASSERT_TRUE(std::holds_alternative<std::string>(got));
  EXPECT_THAT(std::get<std::string>(got), HasSubstr("GPT_SFT_CPU_ISA=avx1024 is not a level"));
  EXPECT_THAT(std::get<std::string>(got), HasSubstr("generic, avx2, avx512, avx512_bf16, amx"));
  EXPECT_THAT(std::get<std::string>(got), HasSubstr("this CPU's is avx512"));
}

// Runs under every cap (BUILD: cpu_isa_test_<cap>): the process runs at exactly the cap, and
// the description says it was capped.
TEST(CpuIsa, TheProcessRunsAtTheCap) {
  const char* cap = std::getenv(kCpuIsaEnv);
  if (cap == nullptr || cap[0] == '\0') {
    EXPECT_EQ(ActiveCpuIsa(), NativeCpuIsa());
    EXPECT_EQ(CpuIsaDescription(), CpuIsaName(NativeCpuIsa()));
    return;
  }
  ASSERT_TRUE(ParseCpuIsa(cap)) << cap;
  if (*ParseCpuIsa(cap) > NativeCpuIsa()) GTEST_SKIP() << "this CPU is below " << cap;
  EXPECT_EQ(ActiveCpuIsa(), *ParseCpuIsa(cap));
  EXPECT_LE(ActiveCpuIsa(), NativeCpuIsa());
  if (ActiveCpuIsa() != NativeCpuIsa()) {
    EXPECT_THAT(CpuIsaDescription(), HasSubstr("capped by GPT_SFT_CPU_ISA"));
  }
}

TEST(CpuIsaDeathTest, AnUnusableCapStopsTheProcessBeforeAnyKernelRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the decision is made once
  const auto decide_with_a_bad_cap = [] {
    setenv(kCpuIsaEnv, "avx1024", 1);
    ActiveCpuIsa();
  };
  EXPECT_EXIT(decide_with_a_bad_cap(), ::testing::ExitedWithCode(2), "error: GPT_SFT_CPU_ISA=avx1024 is not a level");
}

}  // namespace
}  // namespace gpt_sft
