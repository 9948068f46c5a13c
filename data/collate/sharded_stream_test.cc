#include "data/collate/sharded_stream.h"

#include <set>

#include "data/collate/in_memory_source.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

// Conversation i is the single token i, so what a stream yields names its index.
InMemoryConversationSource Numbered(int n) {
  std::vector<RenderedConversation> v;
  for (int i = 0; i < n; ++i) v.push_back({{i}, {1}});
  return InMemoryConversationSource(std::move(v));
}

class ShardedStreamPartition : public ::testing::TestWithParam<int> {};

TEST_P(ShardedStreamPartition, RanksPartitionTheDataExactlyEveryEpoch) {
  const int world = GetParam();
  for (int n : {17, 20, 23}) {
    InMemoryConversationSource source = Numbered(n);
    std::set<int> seen;
    int total = 0;
    for (int rank = 0; rank < world; ++rank) {
      auto stream = *ShardedConversationStream::Create(&source, rank, world);
      const int64_t per_epoch = stream.per_epoch();
      for (int epoch = 0; epoch < 3; ++epoch) {
        for (int64_t k = 0; k < per_epoch; ++k) {
          const int id = stream.Next()->ids[0];
          EXPECT_EQ(id % world, rank) << "rank " << rank << " got index " << id;
          EXPECT_EQ(id, rank + k * world);  // r, r+W, r+2W, ... every epoch
          if (epoch == 0) {
            EXPECT_TRUE(seen.insert(id).second) << "index " << id << " visited twice";
            ++total;
          }
        }
      }
      EXPECT_EQ(stream.epochs_completed(), 3);
    }
    EXPECT_EQ(total, n);  // disjoint and complete
    EXPECT_EQ(static_cast<int>(seen.size()), n);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShardedStreamPartition, ::testing::Values(1, 2, 4));

TEST(ShardedStream, RejectsBadRanks) {
  InMemoryConversationSource source = Numbered(3);
  EXPECT_FALSE(ShardedConversationStream::Create(&source, 2, 2).ok());
  EXPECT_FALSE(ShardedConversationStream::Create(&source, -1, 2).ok());
  EXPECT_FALSE(ShardedConversationStream::Create(&source, 3, 4).ok());  // no index for rank 3
}

}  // namespace
}  // namespace gpt_sft::data
