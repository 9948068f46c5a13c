#include "data/collate/best_fit_packer.h"

#include <deque>

#include "data/collate/batch.h"
#include "data/conversation/rendered_conversation.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

constexpr int32_t kPad = 99;

// Conversation `tag` of n tokens: ids tag*100 + i, mask 0 on the first token (the bos),
// 1 on the rest.
RenderedConversation Conv(int tag, int n) {
  RenderedConversation c;
  for (int i = 0; i < n; ++i) {
    c.ids.push_back(tag * 100 + i);
    c.mask.push_back(i == 0 ? 0 : 1);
  }
  return c;
}

// A finite queue the packer pulls from; running dry is an error, so a test that asks for
// more than it gave fails loudly.
class Queue {
 public:
  explicit Queue(std::vector<RenderedConversation> v) : q_(v.begin(), v.end()) {}
  absl::StatusOr<RenderedConversation> Next() {
    if (q_.empty()) return absl::OutOfRangeError("queue empty");
    RenderedConversation c = q_.front();
    q_.pop_front();
    return c;
  }

 private:
  std::deque<RenderedConversation> q_;
};

TEST(BestFitPacker, PacksLongestFirstAndNeverSplitsAConversation) {
  // T = 8: rows of 9 slots. The buffer (4) refills before every pick.
  // Row 0 from {5 (tag 1), 3 (tag 2), 4 (tag 3), 2 (tag 4)}: 5 fits 9 -> tag 1;
  //   refill adds 6 (tag 5); 4 free: 4 (tag 3); full.
  // Row 1 from {3 (tag 2), 2 (tag 4), 6 (tag 5), 7 (tag 6)}: 7 -> tag 6; 2 free: tag 4.
  auto packer = *BestFitPacker::Create({/*B=*/2, /*T=*/8, kPad, /*buffer_size=*/4});
  Queue q({Conv(1, 5), Conv(2, 3), Conv(3, 4), Conv(4, 2), Conv(5, 6), Conv(6, 7), Conv(7, 7), Conv(8, 7)});
  absl::StatusOr<Batch> batch = packer.Pack([&] { return q.Next(); });
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
  EXPECT_EQ(batch->inputs, (std::vector<int32_t>{100, 101, 102, 103, 104, 300, 301, 302,  //
                                                 600, 601, 602, 603, 604, 605, 606, 400}));
  EXPECT_EQ(batch->segment_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1,  //
                                                      0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(batch->positions, (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2,  //
                                                    0, 1, 2, 3, 4, 5, 6, 0}));
  // Targets: within a conversation the next token; at a boundary -1; the last slot of a
  // full row (slot T) is a target only.
  EXPECT_EQ(batch->targets, (std::vector<int32_t>{101, 102, 103, 104, -1, 301, 302, 303,  //
                                                  601, 602, 603, 604, 605, 606, -1, 401}));
  EXPECT_EQ(batch->conversations, 4);
  EXPECT_EQ(batch->truncated_rows, 0);
  EXPECT_EQ(batch->supervised_tokens, 4 + 3 + 6 + 1);
}

TEST(BestFitPacker, PadsWhatNothingFitsIntoAsItsOwnSegment) {
  auto packer = *BestFitPacker::Create({1, 8, kPad, 2});
  Queue q({Conv(1, 6), Conv(2, 6), Conv(3, 6), Conv(4, 6)});
  Batch batch = *packer.Pack([&] { return q.Next(); });
  EXPECT_EQ(batch.inputs, (std::vector<int32_t>{100, 101, 102, 103, 104, 105, kPad, kPad}));
  EXPECT_EQ(batch.segment_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(batch.positions, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 0, 1}));
  EXPECT_EQ(batch.targets, (std::vector<int32_t>{101, 102, 103, 104, 105, -1, -1, -1}));
  EXPECT_EQ(packer.buffered(), 2);  // the other 6-token conversations wait for later rows
}

TEST(BestFitPacker, CropsAConversationLongerThanARowAndCountsIt) {
  auto packer = *BestFitPacker::Create({1, 4, kPad, 1});
  Queue q({Conv(1, 9), Conv(2, 2)});
  Batch batch = *packer.Pack([&] { return q.Next(); });
  EXPECT_EQ(batch.inputs, (std::vector<int32_t>{100, 101, 102, 103}));
  EXPECT_EQ(batch.targets, (std::vector<int32_t>{101, 102, 103, 104}));
  EXPECT_EQ(batch.truncated_rows, 1);
}

TEST(BestFitPacker, MaskedTokensAreNotTargets) {
  RenderedConversation c = Conv(1, 5);
  c.mask = {0, 0, 1, 0, 1};
  auto packer = *BestFitPacker::Create({1, 4, kPad, 1});
  Queue q({c, Conv(2, 5)});
  Batch batch = *packer.Pack([&] { return q.Next(); });
  EXPECT_EQ(batch.targets, (std::vector<int32_t>{-1, 102, -1, 104}));
}

TEST(BestFitPacker, RejectsBadOptionsAndConversations) {
  EXPECT_FALSE(BestFitPacker::Create({0, 8, kPad, 4}).ok());
  EXPECT_FALSE(BestFitPacker::Create({1, 8, -1, 4}).ok());
  EXPECT_FALSE(BestFitPacker::Create({1, 8, kPad, 0}).ok());
  auto packer = *BestFitPacker::Create({1, 8, kPad, 1});
  RenderedConversation bad = Conv(1, 3);
  bad.mask.pop_back();
  Queue q({bad});
  EXPECT_FALSE(packer.Pack([&] { return q.Next(); }).ok());
}

}  // namespace
}  // namespace gpt_sft::data
