#include "runtime/base/tensor.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "runtime/base/caching_allocator.h"

namespace gpt_sft::runtime {
namespace {

TEST(Tensor, NullByDefault) {
  Tensor t;
  EXPECT_FALSE(t.defined());
}

TEST(Tensor, EmptyHasShapeBytesAndAlignment) {
  Tensor t = Tensor::Empty(DType::kF32, {4, 3, 5});
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 60);
  EXPECT_EQ(t.bytes(), 240u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  EXPECT_FALSE(t.is_view());
  EXPECT_EQ(t.ShapeString(), "[4,3,5] f32");
}

TEST(Tensor, RankZeroAndEmptyShapes) {
  Tensor s = Tensor::Scalar<float>(2.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.ScalarAsDouble(), 2.5);
  EXPECT_EQ(s.ShapeString(), "[] f32");
  Tensor e = Tensor::Empty(DType::kI32, {0, 7});
  EXPECT_TRUE(e.defined());
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.ShapeString(), "[0,7] i32");
}

TEST(Tensor, FromVectorRoundTripsAndZerosAreZero) {
  Tensor t = Tensor::FromVector<double>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(t.dtype(), DType::kF64);
  EXPECT_EQ(t.ToVector<double>(), (std::vector<double>{1, 2, 3, 4}));
  Tensor z = Tensor::Zeros(DType::kI32, {3});
  EXPECT_EQ(z.ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
}

TEST(Tensor, ViewDoesNotOwnAndSharesMemory) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor v = Tensor::View(DType::kF32, {2, 3}, data);
  EXPECT_TRUE(v.is_view());
  EXPECT_EQ(v.storage_use_count(), 0);
  v.data<float>()[0] = 9;
  EXPECT_EQ(data[0], 9);
}

TEST(Tensor, CopiesAndReshapesShareStorage) {
  Tensor t = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.storage_use_count(), 1);
  Tensor r = t.Reshaped({3, 2});
  EXPECT_EQ(t.storage_use_count(), 2);
  EXPECT_EQ(r.raw_data(), t.raw_data());
  EXPECT_EQ(r.ShapeString(), "[3,2] f32");
  Tensor c = t.Clone();
  EXPECT_NE(c.raw_data(), t.raw_data());
  EXPECT_EQ(c.ToVector<float>(), t.ToVector<float>());
}

TEST(Tensor, AllocatorBlocksReturnWhenTheLastHolderGoes) {
  CachingAllocator allocator;
  {
    Tensor t = Tensor::Empty(DType::kF64, {1000}, &allocator);
    Tensor copy = t;
    EXPECT_EQ(allocator.stats().bytes_live, static_cast<int64_t>(CachingAllocator::BucketSize(8000)));
  }
  EXPECT_EQ(allocator.stats().bytes_live, 0);
}

TEST(Tensor, DTypeNamesAndSizes) {
  EXPECT_STREQ(DTypeName(DType::kF32), "f32");
  EXPECT_STREQ(DTypeName(DType::kF64), "f64");
  EXPECT_STREQ(DTypeName(DType::kI32), "i32");
  EXPECT_EQ(DTypeSize(DType::kF64), 8u);
  EXPECT_EQ(DTypeOf<int32_t>(), DType::kI32);
}

}  // namespace
}  // namespace gpt_sft::runtime
