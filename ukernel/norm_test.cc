#include "ukernel/norm.h"

#include "gtest/gtest.h"

namespace gpt_sft::ukernel {
namespace {

TEST(NormContract, SlotsPerOp) {
  auto count = [](NormOp op) {
    int n = 0;
    for (int s = 0; s < kNormSlotCount; ++s) n += NormHasSlot(op, static_cast<NormSlot>(s));
    return n;
  };
  EXPECT_EQ(count(NormOp::kRmsNorm), 2);
  EXPECT_EQ(count(NormOp::kRmsNormGrad), 3);
  EXPECT_EQ(count(NormOp::kAddRmsNorm), 4);
  EXPECT_EQ(count(NormOp::kRmsNormGradAdd), 4);
}

TEST(NormContract, RefusesWhatNoKernelRuns) {
  EXPECT_EQ(NormUnsupported({NormOp::kRmsNormGrad, kNormRoundDy | kNormRoundOutput, 4, 8, 1e-6}, false), nullptr);
  EXPECT_NE(NormUnsupported({NormOp::kRmsNorm, kNormRoundOutput, 4, 8, 1e-6}, true), nullptr);
  EXPECT_NE(NormUnsupported({NormOp::kRmsNorm, kNormRoundDy, 4, 8, 1e-6}, false), nullptr);
  EXPECT_NE(NormUnsupported({NormOp::kAddRmsNorm, kNormRoundOutput, 4, 8, 1e-6}, false), nullptr);
  EXPECT_NE(NormUnsupported({NormOp::kRmsNormGradAdd, 0, 4, kNormMaxGradAddDim + 1, 1e-6}, false), nullptr);
  EXPECT_EQ(NormDescription({NormOp::kRmsNormGrad, kNormRoundDy | kNormRoundOutput, 4, 8, 1e-6}),
            "rms_norm_grad round|round_dy");
}

}  // namespace
}  // namespace gpt_sft::ukernel
