#include "data/collate/sharded_stream.h"

#include <set>
#include <vector>

#include "data/collate/in_memory_source.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

// Conversation i is the single token i, so a stream's output names the indices it visited.
InMemoryConversationSource Indexed(int n) {
  std::vector<RenderedConversation> all(n);
  for (int i = 0; i < n; ++i) all[i] = RenderedConversation{{i}, {1}};
  return InMemoryConversationSource(std::move(all));
}

std::vector<int> Visit(ShardedConversationStream& stream, int64_t count) {
  std::vector<int> out;
  for (int64_t k = 0; k < count; ++k) {
    absl::StatusOr<RenderedConversation> c = stream.Next();
    EXPECT_TRUE(c.ok()) << c.status();
    if (c.ok()) out.push_back(c->ids[0]);
  }
  return out;
}

TEST(ShardedStreamTest, VisitsRankThenEveryWorldSizeth) {
  InMemoryConversationSource source = Indexed(11);
  absl::StatusOr<ShardedConversationStream> s = ShardedConversationStream::Create(&source, 2, 4);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->per_epoch(), 3);
  EXPECT_EQ(Visit(*s, 7), (std::vector<int>{2, 6, 10, 2, 6, 10, 2}));
  EXPECT_EQ(s->epochs_completed(), 2);
  EXPECT_EQ(s->consumed(), 7);
  EXPECT_EQ(s->next_index(), 6);
}

// Over one epoch the ranks' index sets are disjoint and their union is every index, for
// sizes that the world size does and does not divide; and the same again in epoch 2.
TEST(ShardedStreamTest, RanksPartitionTheSourceEveryEpoch) {
  for (int world : {1, 2, 4}) {
    for (int n : {8, 11, 13}) {
      InMemoryConversationSource source = Indexed(n);
      for (int epoch = 0; epoch < 2; ++epoch) {
        std::multiset<int> all;
        for (int rank = 0; rank < world; ++rank) {
          absl::StatusOr<ShardedConversationStream> s =
              ShardedConversationStream::Create(&source, rank, world);
          ASSERT_TRUE(s.ok()) << s.status();
          Visit(*s, epoch * s->per_epoch());  // skip earlier epochs
          for (int i : Visit(*s, s->per_epoch())) all.insert(i);
          EXPECT_EQ(s->epochs_completed(), epoch + 1);
        }
        std::multiset<int> want;
        for (int i = 0; i < n; ++i) want.insert(i);
        EXPECT_EQ(all, want) << "world " << world << " n " << n << " epoch " << epoch;
      }
    }
  }
}

TEST(ShardedStreamTest, RejectsBadRanksAndBadConversations) {
  InMemoryConversationSource source = Indexed(3);
  EXPECT_FALSE(ShardedConversationStream::Create(nullptr, 0, 1).ok());
  EXPECT_FALSE(ShardedConversationStream::Create(&source, 2, 2).ok());
  EXPECT_FALSE(ShardedConversationStream::Create(&source, -1, 2).ok());
  EXPECT_EQ(ShardedConversationStream::Create(&source, 3, 4).status().code(),
            absl::StatusCode::kFailedPrecondition);

  InMemoryConversationSource bad({RenderedConversation{{1, 2}, {1}}, RenderedConversation{}});
  absl::StatusOr<ShardedConversationStream> s = ShardedConversationStream::Create(&bad, 0, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->Next().status().message().find("conversation 0 has 2 ids but 1 mask"),
            std::string::npos);
}

TEST(ShardedStreamTest, EmptyConversationIsAnErrorNamingItsIndex) {
  InMemoryConversationSource bad({RenderedConversation{{1}, {0}}, RenderedConversation{}});
  absl::StatusOr<ShardedConversationStream> s = ShardedConversationStream::Create(&bad, 1, 2);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->Next().status().message().find("conversation 1 has no tokens"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::data
