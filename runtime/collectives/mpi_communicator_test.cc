// Runs under mpirun (run_ranks.sh, -np 2 and -np 4): every rank runs every test in the same
// order, so their collectives match. Values depend on the rank, results are checked exactly.
#include "runtime/collectives/mpi_communicator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::collectives {
namespace {

Communicator& World() {
  static Communicator* world = [] {
    auto made = MakeMpiCommunicator(MpiOptions{std::chrono::seconds(60)});
    if (!made.ok()) {
      std::fprintf(stderr, "MakeMpiCommunicator: %s\n", made.status().ToString().c_str());
      std::abort();
    }
    return made->release();
  }();
  return *world;
}

const int64_t kCounts[] = {1, 7, (int64_t{1} << 20) + 3};

// Rank-dependent values with both signs, so max and min pick different ranks per element.
template <typename T>
T ValueAt(int rank, int64_t i) {
  const int64_t magnitude = (rank + 1) * (i % 2 == 0 ? i % 13 + 1 : i % 5 + 1);
  return static_cast<T>(i % 2 == 0 ? magnitude : -magnitude);
}

template <typename T>
T Expected(ReduceOp op, int world_size, int64_t i) {
  T sum = 0, max = ValueAt<T>(0, i), min = ValueAt<T>(0, i);
  for (int r = 0; r < world_size; ++r) {
    const T v = ValueAt<T>(r, i);
    sum += v;
    max = v > max ? v : max;
    min = v < min ? v : min;
  }
  switch (op) {
    case ReduceOp::kSum: return sum;
    case ReduceOp::kAvg: return static_cast<T>(sum / static_cast<T>(world_size));
    case ReduceOp::kMax: return max;
    case ReduceOp::kMin: return min;
  }
  return 0;
}

template <typename T>
struct TypeOf;
template <> struct TypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct TypeOf<double> { static constexpr DataType value = DataType::kFloat64; };
template <> struct TypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct TypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };

template <typename T>
class MpiAllReduce : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(MpiAllReduce, ElementTypes);

TYPED_TEST(MpiAllReduce, EveryOpEveryCountExact) {
  using T = TypeParam;
  Communicator& world = World();
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
    for (int64_t count : kCounts) {
      std::vector<T> buffer(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) buffer[i] = ValueAt<T>(world.rank(), i);
      ASSERT_TRUE(world.AllReduce(buffer.data(), count, TypeOf<T>::value, op).ok());
      int64_t wrong = 0;
      for (int64_t i = 0; i < count; ++i) {
        if (buffer[i] != Expected<T>(op, world.world_size(), i) && wrong++ < 3) {
          ADD_FAILURE() << ReduceOpName(op) << " count " << count << " [" << i << "] = " << buffer[i]
                        << ", want " << Expected<T>(op, world.world_size(), i);
        }
      }
      EXPECT_EQ(wrong, 0) << ReduceOpName(op) << " count " << count;
    }
  }
}

TEST(MpiCommunicator, WorldIsTheLaunchersWorld) {
  Communicator& world = World();
  ASSERT_TRUE(LaunchedByMpirun());
  EXPECT_EQ(world.world_size(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  EXPECT_EQ(world.rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_EQ(world.backend(), "mpi");
  EXPECT_EQ(world.memory_space(), MemorySpace::kHost);
}

TEST(MpiCommunicator, Bf16SumAndAvg) {
  Communicator& world = World();
  const int w = world.world_size();
  std::vector<uint16_t> buffer(7);
  auto bf16 = [](float f) {  // small integers and halves are exact in bf16
    uint32_t word;
    std::memcpy(&word, &f, 4);
    return static_cast<uint16_t>(word >> 16);
  };
  for (int i = 0; i < 7; ++i) buffer[i] = bf16(static_cast<float>((world.rank() + 1) * (i + 1)));
  std::vector<uint16_t> avg = buffer;
  ASSERT_TRUE(world.AllReduce(buffer.data(), 7, DataType::kBFloat16, ReduceOp::kSum).ok());
  ASSERT_TRUE(world.AllReduce(avg.data(), 7, DataType::kBFloat16, ReduceOp::kAvg).ok());
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(buffer[i], bf16(static_cast<float>(w * (w + 1) / 2 * (i + 1)))) << i;
    EXPECT_EQ(avg[i], bf16(static_cast<float>(w * (w + 1) / 2 * (i + 1)) / w)) << i;
  }
}

TEST(MpiCommunicator, ReduceScatterGivesEachRankItsBlock) {
  Communicator& world = World();
  const int w = world.world_size();
  for (int64_t count : kCounts) {
    std::vector<float> send(static_cast<size_t>(count * w));
    for (int b = 0; b < w; ++b) {
      for (int64_t i = 0; i < count; ++i) send[b * count + i] = world.rank() * 1000.0f + b * 10 + i % 7;
    }
    std::vector<float> sum(count), max(count);
    ASSERT_TRUE(world.ReduceScatter(send.data(), sum.data(), count, DataType::kFloat32, ReduceOp::kSum).ok());
    ASSERT_TRUE(world.ReduceScatter(send.data(), max.data(), count, DataType::kFloat32, ReduceOp::kMax).ok());
    const float rank_sum = 1000.0f * (w * (w - 1) / 2);
    int64_t wrong = 0;
    for (int64_t i = 0; i < count; ++i) {
      const float block = world.rank() * 10.0f + i % 7;
      wrong += sum[i] != rank_sum + w * block;
      wrong += max[i] != 1000.0f * (w - 1) + block;
    }
    EXPECT_EQ(wrong, 0) << "count " << count;
  }
}

TEST(MpiCommunicator, ReduceScatterAvgInt64) {
  Communicator& world = World();
  const int w = world.world_size();
  std::vector<int64_t> send(static_cast<size_t>(3 * w));
  for (int64_t j = 0; j < 3 * w; ++j) send[j] = (world.rank() + 1) * (j + 1);
  std::vector<int64_t> recv(3);
  ASSERT_TRUE(world.ReduceScatter(send.data(), recv.data(), 3, DataType::kInt64, ReduceOp::kAvg).ok());
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(recv[i], (int64_t{w} * (w + 1) / 2 * (world.rank() * 3 + i + 1)) / w);
  }
}

TEST(MpiCommunicator, AllGatherIsInRankOrder) {
  Communicator& world = World();
  const int w = world.world_size();
  for (int64_t count : kCounts) {
    std::vector<int32_t> send(count);
    for (int64_t i = 0; i < count; ++i) send[i] = world.rank() * 100 + static_cast<int32_t>(i % 97);
    std::vector<int32_t> recv(count * w, -1);
    ASSERT_TRUE(world.AllGather(send.data(), recv.data(), count, DataType::kInt32).ok());
    int64_t wrong = 0;
    for (int r = 0; r < w; ++r) {
      for (int64_t i = 0; i < count; ++i) wrong += recv[r * count + i] != r * 100 + static_cast<int32_t>(i % 97);
    }
    EXPECT_EQ(wrong, 0) << "count " << count;
  }
}

TEST(MpiCommunicator, BroadcastFromRootZeroAndTheLastRank) {
  Communicator& world = World();
  for (int root : {0, world.world_size() - 1}) {
    for (int64_t count : kCounts) {
      std::vector<double> buffer(count, -1.0);
      if (world.rank() == root) {
        for (int64_t i = 0; i < count; ++i) buffer[i] = root * 7.0 + i;
      }
      ASSERT_TRUE(world.Broadcast(buffer.data(), count, DataType::kFloat64, root).ok());
      int64_t wrong = 0;
      for (int64_t i = 0; i < count; ++i) wrong += buffer[i] != root * 7.0 + i;
      EXPECT_EQ(wrong, 0) << "root " << root << " count " << count;
    }
  }
}

TEST(MpiCommunicator, BroadcastRootOutsideTheWorldIsAnError) {
  Communicator& world = World();
  double x = 0;
  const absl::Status status = world.Broadcast(&x, 1, DataType::kFloat64, world.world_size());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("root " + std::to_string(world.world_size())), std::string::npos) << status;
  EXPECT_TRUE(world.Barrier().ok());  // the world is still usable
}

// Each rank leaves a file, then passes the barrier: after it, every rank's file exists.
TEST(MpiCommunicator, BarrierWaitsForEveryRank) {
  Communicator& world = World();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  auto path = [&](int r) { return dir + "/barrier_rank_" + std::to_string(r); };
  for (int round = 0; round < 3; ++round) {
    std::ofstream(path(world.rank())) << round;
    ASSERT_TRUE(world.Barrier().ok());
    for (int r = 0; r < world.world_size(); ++r) {
      std::ifstream in(path(r));
      int seen = -1;
      in >> seen;
      EXPECT_EQ(seen, round) << "rank " << r << "'s file after the barrier";
    }
    ASSERT_TRUE(world.Barrier().ok());  // nobody rewrites a file before everyone has read it
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::collectives
