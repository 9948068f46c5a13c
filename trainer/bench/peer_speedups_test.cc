#include "trainer/bench/peer_speedups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpt_sft::bench {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Pair;

TEST(PeerSpeedupsTest, EveryRatioIsTheOthersTimeOverOurs) {
  const OurSeconds ours{.interpreter = 3.0, .compiled = 2.0};
  const std::vector<PeerModeSeconds> peer = {{"eager", "float32", 5.2},
                                             {"compile", "float32", 3.3},
                                             {"eager", "bfloat16", 2.75},
                                             {"compile", "bfloat16", 2.0}};
  EXPECT_THAT(PeerSpeedups(ours, peer),
              ElementsAre(Pair("speedup_compiled_vs_interpreter", DoubleEq(1.5)),
                          Pair("speedup_compiled_vs_torch_eager", DoubleEq(2.6)),
                          Pair("speedup_compiled_vs_torch_compile", DoubleEq(1.65)),
                          Pair("speedup_compiled_vs_torch_eager_bf16", DoubleEq(1.375)),
                          Pair("speedup_compiled_vs_torch_compile_bf16", DoubleEq(1.0)),
                          Pair("speedup_interpreter_vs_torch_eager", DoubleEq(5.2 / 3.0)),
                          Pair("speedup_interpreter_vs_torch_compile", DoubleEq(1.1)),
                          Pair("speedup_interpreter_vs_torch_eager_bf16", DoubleEq(2.75 / 3.0)),
                          Pair("speedup_interpreter_vs_torch_compile_bf16", DoubleEq(2.0 / 3.0))));
}

TEST(PeerSpeedupsTest, TheFastestMallocConfigurationOfAModeCounts) {
  const std::vector<PeerModeSeconds> peer = {{"compile", "float32", 6.0}, {"compile", "float32", 4.0}};
  EXPECT_THAT(PeerSpeedups({.compiled = 2.0}, peer),
              ElementsAre(Pair("speedup_compiled_vs_torch_compile", DoubleEq(2.0))));
}

TEST(PeerSpeedupsTest, AMissingFigureLeavesItsRatiosOut) {
  // Torch 1.13 (the Debian fallback) has no torch.compile, and --path=compiled has no interpreter.
  const std::vector<PeerModeSeconds> peer = {{"eager", "float32", 8.0}, {"eager", "bfloat16", 0}};
  EXPECT_THAT(PeerSpeedups({.compiled = 4.0}, peer),
              ElementsAre(Pair("speedup_compiled_vs_torch_eager", DoubleEq(2.0))));
  EXPECT_TRUE(PeerSpeedups({}, peer).empty());
  EXPECT_THAT(PeerSpeedups({.interpreter = 2.0, .compiled = 1.0}, {}),
              ElementsAre(Pair("speedup_compiled_vs_interpreter", DoubleEq(2.0))));
}

TEST(PeerModeKeyTest, Names) {
  EXPECT_EQ(PeerModeKey("eager", "float32"), "torch_eager");
  EXPECT_EQ(PeerModeKey("compile", "bfloat16"), "torch_compile_bf16");
}

}  // namespace
}  // namespace gpt_sft::bench
