#include "ukernel/rotary.h"

#include "gtest/gtest.h"

namespace gpt_sft::ukernel {
namespace {

TEST(RotaryContract, FusedOpsAddTheirSlots) {
  EXPECT_FALSE(RotaryHasSlot(RotaryOp::kRotary, RotarySlot::kDy));
  EXPECT_FALSE(RotaryHasSlot(RotaryOp::kRotary, RotarySlot::kRot));
  EXPECT_TRUE(RotaryHasSlot(RotaryOp::kRotaryRmsNorm, RotarySlot::kRot));
  EXPECT_TRUE(RotaryHasSlot(RotaryOp::kRmsNormRotaryGrad, RotarySlot::kDy));
  EXPECT_TRUE(RotaryHasSlot(RotaryOp::kRotaryGrad, RotarySlot::kPositions));
}

TEST(RotaryContract, RefusesWhatNoKernelRuns) {
  const RotaryParams ok{RotaryOp::kRotaryRmsNorm, kRotaryBf16, 2, 4, 3, 8, 4, 1e-6};
  EXPECT_EQ(RotaryUnsupported(ok, false), nullptr);
  EXPECT_NE(RotaryUnsupported(ok, true), nullptr);
  RotaryParams odd = ok;
  odd.D = 7;
  EXPECT_NE(RotaryUnsupported(odd, false), nullptr);
  EXPECT_EQ(RotaryDescription(ok), "rotary_rms_norm bf16");
}

}  // namespace
}  // namespace gpt_sft::ukernel
