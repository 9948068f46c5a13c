#include "ukernel/attention.h"

#include "gtest/gtest.h"

namespace gpt_sft::ukernel {
namespace {

int Slots(const AttentionParams& p) {
  int n = 0;
  for (int s = 0; s < kAttentionSlotCount; ++s) n += AttentionHasSlot(p, static_cast<AttentionSlot>(s));
  return n;
}

TEST(AttentionContract, SlotsFollowTheOpAndTheSegments) {
  AttentionParams p{AttentionOp::kForward, 0, 1, 8, 4, 2, 16};
  EXPECT_EQ(Slots(p), 5);
  p.flags = kAttentionSegments;
  EXPECT_EQ(Slots(p), 6);
  p.op = AttentionOp::kBackward;
  EXPECT_EQ(Slots(p), 10);
  EXPECT_EQ(AttentionSlotElements(p, AttentionSlot::kK), 1 * 8 * 2 * 16);
  EXPECT_EQ(AttentionSlotElements(p, AttentionSlot::kLse), 1 * 4 * 8);
}

TEST(AttentionContract, RefusesWhatNoKernelRuns) {
  EXPECT_EQ(AttentionUnsupported({AttentionOp::kBackward, kAttentionBf16Inputs | kAttentionPreparedDv, 1, 8, 4, 2, 16},
                                 false),
            nullptr);
  EXPECT_NE(AttentionUnsupported({AttentionOp::kForward, kAttentionBf16Inputs | kAttentionPreparedDv, 1, 8, 4, 2, 16},
                                 false),
            nullptr);
  EXPECT_NE(AttentionUnsupported({AttentionOp::kForward, kAttentionBf16Inputs, 1, 8, 4, 2, 16}, true), nullptr);
  EXPECT_NE(AttentionUnsupported({AttentionOp::kForward, 0, 1, 8, 3, 2, 16}, false), nullptr);
  EXPECT_EQ(AttentionDescription({AttentionOp::kBackward, kAttentionBf16Inputs | kAttentionPreparedDv, 1, 8, 4, 2, 16}),
            "backward bf16|prepared_dv");
}

}  // namespace
}  // namespace gpt_sft::ukernel
