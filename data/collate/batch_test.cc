#include "data/collate/batch.h"

#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

TEST(BatchTest, NewBatchHasShapeAndIgnoredTargets) {
  Batch batch = NewBatch(2, 3);
  EXPECT_EQ(batch.NumPositions(), 6);
  EXPECT_EQ(batch.inputs.size(), 6u);
  EXPECT_EQ(batch.targets, std::vector<int32_t>(6, kIgnoreTarget));
  EXPECT_EQ(batch.segment_ids, std::vector<int32_t>(6, 0));
  EXPECT_EQ(batch.Offset(1, 2), 5u);
  EXPECT_EQ(CountSupervised(batch), 0);
  EXPECT_DOUBLE_EQ(PaddingFraction(batch), 1.0);
}

TEST(BatchTest, PaddingFractionCountsPositionsWithoutTarget) {
  Batch batch = NewBatch(2, 4);
  batch.targets = {5,  -1, 7,  -1,  //
                   -1, -1, -1, 9};
  batch.content_positions = 6;
  EXPECT_EQ(CountSupervised(batch), 3);
  EXPECT_DOUBLE_EQ(PaddingFraction(batch), 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(PadPositionFraction(batch), 2.0 / 8.0);
  EXPECT_DOUBLE_EQ(PaddingFraction(Batch{}), 0.0);
}

// A valid packed row pair: row 0 has segments [0 0 0 1 1 2], row 1 one segment.
Batch ValidBatch() {
  Batch batch = NewBatch(2, 6);
  batch.segment_ids = {0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0};
  batch.positions = {0, 1, 2, 0, 1, 0, 0, 1, 2, 3, 4, 5};
  batch.targets[1] = 42;
  batch.supervised_tokens = 1;
  return batch;
}

TEST(BatchTest, ValidateAcceptsWellFormedBatch) { EXPECT_TRUE(ValidateBatch(ValidBatch()).ok()); }

TEST(BatchTest, ValidateRejectsEachBrokenInvariant) {
  Batch batch = ValidBatch();
  batch.inputs.pop_back();
  EXPECT_NE(ValidateBatch(batch).message().find("Batch.inputs holds 11"), std::string::npos);

  batch = ValidBatch();
  batch.segment_ids[3] = 2;  // 0 -> 2 skips a segment
  EXPECT_NE(ValidateBatch(batch).message().find("segment_ids[0, 3]"), std::string::npos);

  batch = ValidBatch();
  batch.segment_ids[6] = 1;  // row 1 must start at segment 0
  EXPECT_NE(ValidateBatch(batch).message().find("segment_ids[1, 0]"), std::string::npos);

  batch = ValidBatch();
  batch.positions[3] = 3;  // a new segment restarts at 0
  EXPECT_NE(ValidateBatch(batch).message().find("positions[0, 3]"), std::string::npos);

  batch = ValidBatch();
  batch.targets[2] = -7;
  EXPECT_NE(ValidateBatch(batch).message().find("targets[0, 2]"), std::string::npos);

  batch = ValidBatch();
  batch.supervised_tokens = 2;
  EXPECT_NE(ValidateBatch(batch).message().find("supervised_tokens = 2"), std::string::npos);

  batch = ValidBatch();
  batch.B = 0;
  EXPECT_FALSE(ValidateBatch(batch).ok());
}

}  // namespace
}  // namespace gpt_sft::data
