#include "ukernel/gemm.h"

#include "gtest/gtest.h"

namespace gpt_sft::ukernel {
namespace {

TEST(GemmContract, SlotsPerEpilogue) {
  auto count = [](GemmEpilogue e) {
    int n = 0;
    for (int s = 0; s < kGemmSlotCount; ++s) n += GemmHasSlot(e, static_cast<GemmSlot>(s));
    return n;
  };
  EXPECT_EQ(count(GemmEpilogue::kNone), 3);
  EXPECT_EQ(count(GemmEpilogue::kReluSquare), 4);
  EXPECT_EQ(count(GemmEpilogue::kReluSquareGrad), 5);
  EXPECT_EQ(count(GemmEpilogue::kResidualRmsNorm), 6);
}

TEST(GemmContract, ShapesFollowTheForm) {
  GemmParams p{GemmForm::kDyTX, GemmEpilogue::kNone, 0, 2, 3, 5, 0.0};
  EXPECT_EQ(GemmSlotElements(p, GemmSlot::kA), 6);
  EXPECT_EQ(GemmSlotElements(p, GemmSlot::kB), 10);
  EXPECT_EQ(GemmSlotElements(p, GemmSlot::kC), 15);
}

TEST(GemmContract, RefusesWhatNoKernelRuns) {
  EXPECT_EQ(GemmUnsupported({GemmForm::kXWt, GemmEpilogue::kNone, 0, 1, 1, 1, 0}, true), nullptr);
  EXPECT_NE(GemmUnsupported({GemmForm::kXWt, GemmEpilogue::kNone, kGemmBf16Inputs, 1, 1, 1, 0}, true), nullptr);
  EXPECT_NE(GemmUnsupported({GemmForm::kXWt, GemmEpilogue::kNone, kGemmRoundOutput, 1, 1, 1, 0}, false), nullptr);
  EXPECT_NE(GemmUnsupported({GemmForm::kDyTX, GemmEpilogue::kNone,
                             kGemmBf16Inputs | kGemmSlabsA | kGemmPreparedB, 1, 1, 1, 0},
                            false),
            nullptr);
  EXPECT_NE(GemmUnsupported({GemmForm::kDyTX, GemmEpilogue::kReluSquare, 0, 1, 1, 1, 0}, false), nullptr);
  EXPECT_EQ(GemmUnsupported({GemmForm::kXWt, GemmEpilogue::kResidualRmsNorm,
                             kGemmBf16Inputs | kGemmRoundOutput | kGemmPreparedA | kGemmPreparedOut, 1, 1, 1, 1e-6},
                            false),
            nullptr);
}

}  // namespace
}  // namespace gpt_sft::ukernel
