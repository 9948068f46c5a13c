#include "trainer/batch_tensors.h"

#include "gtest/gtest.h"

namespace gpt_sft::trainer {
namespace {

data::Batch TwoByThree() {
  data::Batch b = data::NewBatch(2, 3);
  b.inputs = {1, 2, 3, 4, 5, 6};
  b.targets = {2, 3, -1, 5, 6, -1};
  b.positions = {0, 1, 2, 0, 1, 2};
  return b;
}

TEST(ToStepBatch, CopiesRowMajorTensors) {
  data::Batch b = TwoByThree();
  StepBatch s = ToStepBatch(b, /*packed=*/false);
  EXPECT_EQ(s.inputs.shape(), (runtime::Shape{2, 3}));
  EXPECT_EQ(s.inputs.dtype(), runtime::DType::kI32);
  EXPECT_EQ(s.inputs.ToVector<int32_t>(), b.inputs);
  EXPECT_EQ(s.targets.ToVector<int32_t>(), b.targets);
  EXPECT_FALSE(s.segment_ids.defined());
  EXPECT_FALSE(s.positions.defined());
}

TEST(ToStepBatch, PackedCarriesSegmentsAndPositions) {
  data::Batch b = TwoByThree();
  b.segment_ids = {0, 0, 1, 0, 1, 1};
  b.positions = {0, 1, 0, 0, 0, 1};
  StepBatch s = ToStepBatch(b, /*packed=*/true);
  EXPECT_EQ(s.segment_ids.ToVector<int32_t>(), b.segment_ids);
  EXPECT_EQ(s.positions.ToVector<int32_t>(), b.positions);
}

TEST(IsPlainCausal, OnlyOneSegmentPerRowWithPositionsT) {
  data::Batch b = TwoByThree();
  EXPECT_TRUE(IsPlainCausal(b));
  b.segment_ids[4] = 1;
  EXPECT_FALSE(IsPlainCausal(b));
  b = TwoByThree();
  b.positions[5] = 0;
  EXPECT_FALSE(IsPlainCausal(b));
}

TEST(CheckBatchFitsStep, NamesShapeAndPacking) {
  compiler::StepConfig config;
  config.batch_size = 2;
  config.seq_len = 3;
  data::Batch b = TwoByThree();
  EXPECT_TRUE(CheckBatchFitsStep(b, config, "batch 0").ok());
  config.seq_len = 4;
  absl::Status s = CheckBatchFitsStep(b, config, "batch 7");
  EXPECT_NE(s.message().find("batch 7 is [2, 3]"), absl::string_view::npos) << s;
  config.seq_len = compiler::kDynamicDim;
  EXPECT_TRUE(CheckBatchFitsStep(b, config, "batch 0").ok());
  b.segment_ids = {0, 0, 1, 0, 0, 0};
  b.positions = {0, 1, 0, 0, 1, 2};
  s = CheckBatchFitsStep(b, config, "batch 1");
  EXPECT_NE(s.message().find("unpacked"), absl::string_view::npos) << s;
  config.packed = true;
  EXPECT_TRUE(CheckBatchFitsStep(b, config, "batch 1").ok());
}

}  // namespace
}  // namespace gpt_sft::trainer
