// Runs under mpirun (mpi_test: 2 and 4 ranks). Every rank holds a rank-dependent tensor; the
// results are checked element by element against the definition of each collective.
#include "runtime/interpreter/communicator_collectives.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/base/caching_allocator.h"
#include "runtime/collectives/mpi_test_world.h"

namespace gpt_sft::runtime {
namespace {

collectives::Communicator& World() { return collectives::MpiTestWorld(); }

// x[a, b, c] of shape [A, B, C] on `rank`: distinct per element and per rank.
float ValueAt(int rank, int64_t a, int64_t b, int64_t c) { return rank * 1000.0f + a * 100 + b * 10 + c; }

Tensor RankTensor(int rank, const Shape& shape) {
  std::vector<float> values;
  for (int64_t a = 0; a < shape[0]; ++a) {
    for (int64_t b = 0; b < shape[1]; ++b) {
      for (int64_t c = 0; c < shape[2]; ++c) values.push_back(ValueAt(rank, a, b, c));
    }
  }
  return Tensor::FromVector<float>(shape, values);
}

float At(const Tensor& t, int64_t a, int64_t b, int64_t c) {
  return t.data<float>()[(a * t.dim(1) + b) * t.dim(2) + c];
}

TEST(CommunicatorCollectives, DpIsTheWorldAndOtherGroupsAreErrors) {
  CommunicatorCollectives collectives(World());
  EXPECT_EQ(collectives.GroupSize("dp"), World().world_size());
  EXPECT_EQ(collectives.GroupSize("tp"), 0);
  CachingAllocator allocator;
  auto result = collectives.AllReduce("tp", Reduction::kSum, Tensor::Scalar(1.0f), &allocator);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("unknown group \"tp\""), std::string::npos)
      << result.status();
}

TEST(CommunicatorCollectives, AllReduceAvgLeavesTheOperandAndUsesTheAllocator) {
  CommunicatorCollectives collectives(World());
  CachingAllocator allocator;
  const int w = World().world_size();
  const Tensor x = RankTensor(World().rank(), {2, 3, 5});
  auto result = collectives.AllReduce("dp", Reduction::kAvg, x, &allocator);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->shape(), x.shape());
  EXPECT_EQ(allocator.stats().bytes_live, static_cast<int64_t>(CachingAllocator::BucketSize(x.bytes())));
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t c = 0; c < 5; ++c) {
        EXPECT_EQ(At(x, a, b, c), ValueAt(World().rank(), a, b, c));
        EXPECT_EQ(At(*result, a, b, c), 1000.0f * (w - 1) / 2 + a * 100 + b * 10 + c);
      }
    }
  }
}

// Along every dim: this rank's slice of the dim, summed over ranks.
TEST(CommunicatorCollectives, ReduceScatterAlongEachDim) {
  CommunicatorCollectives collectives(World());
  CachingAllocator allocator;
  const int w = World().world_size();
  const int me = World().rank();
  for (int64_t dim = 0; dim < 3; ++dim) {
    Shape shape = {3, 2, 5};
    shape[dim] = 2 * w;
    auto result = collectives.ReduceScatter("dp", Reduction::kSum, dim, RankTensor(me, shape), &allocator);
    ASSERT_TRUE(result.ok()) << result.status();
    Shape want = shape;
    want[dim] = 2;
    ASSERT_EQ(result->shape(), want);
    int64_t wrong = 0;
    for (int64_t a = 0; a < want[0]; ++a) {
      for (int64_t b = 0; b < want[1]; ++b) {
        for (int64_t c = 0; c < want[2]; ++c) {
          int64_t index[3] = {a, b, c};
          index[dim] += 2 * me;  // this rank's slice
          const float expected = 1000.0f * w * (w - 1) / 2 + w * (index[0] * 100 + index[1] * 10 + index[2]);
          wrong += At(*result, a, b, c) != expected;
        }
      }
    }
    EXPECT_EQ(wrong, 0) << "dim " << dim;
  }
}

TEST(CommunicatorCollectives, ReduceScatterRefusesADimThatDoesNotSplit) {
  CommunicatorCollectives collectives(World());
  CachingAllocator allocator;
  const int w = World().world_size();  // w + 1 rows never split into w > 1 ranks
  auto result = collectives.ReduceScatter("dp", Reduction::kSum, 1, RankTensor(0, {2, w + 1, 1}), &allocator);
  ASSERT_FALSE(result.ok());
  const std::string want = "dim 1 of [2," + std::to_string(w + 1) + ",1] f32 does not split into " +
                           std::to_string(w) + " ranks";
  EXPECT_NE(std::string(result.status().message()).find(want), std::string::npos) << result.status();
}

// Along every dim: rank r's tensor is slice r of the dim, ranks in order.
TEST(CommunicatorCollectives, AllGatherAlongEachDim) {
  CommunicatorCollectives collectives(World());
  CachingAllocator allocator;
  const int w = World().world_size();
  for (int64_t dim = 0; dim < 3; ++dim) {
    const Shape shape = {3, 2, 5};
    auto result = collectives.AllGather("dp", dim, RankTensor(World().rank(), shape), &allocator);
    ASSERT_TRUE(result.ok()) << result.status();
    Shape want = shape;
    want[dim] *= w;
    ASSERT_EQ(result->shape(), want);
    int64_t wrong = 0;
    for (int64_t a = 0; a < want[0]; ++a) {
      for (int64_t b = 0; b < want[1]; ++b) {
        for (int64_t c = 0; c < want[2]; ++c) {
          int64_t index[3] = {a, b, c};
          const int64_t rank = index[dim] / shape[dim];
          index[dim] %= shape[dim];
          wrong += At(*result, a, b, c) != ValueAt(static_cast<int>(rank), index[0], index[1], index[2]);
        }
      }
    }
    EXPECT_EQ(wrong, 0) << "dim " << dim;
  }
}

}  // namespace
}  // namespace gpt_sft::runtime
