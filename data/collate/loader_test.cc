#include "data/collate/loader.h"

#include <set>

#include "data/collate/in_memory_source.h"
#include "data/collate/synthetic_conversations.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

constexpr int32_t kPad = kSyntheticAssistantEnd;

LoaderOptions Options(Packing packing, int rank = 0, int world = 1) {
  LoaderOptions o;
  o.B = 4;
  o.T = 2048;
  o.packing = packing;
  o.rank = rank;
  o.world_size = world;
  o.pad_id = kPad;
  return o;
}

class LoaderPackings : public ::testing::TestWithParam<Packing> {};

TEST_P(LoaderPackings, EveryBatchIsExactlyBTAndValid) {
  InMemoryConversationSource source(SyntheticConversations(300, 1));
  auto loader = *BatchLoader::Create(&source, Options(GetParam()));
  for (int i = 0; i < 40; ++i) {  // several epochs for pad (300 / 4 = 75 batches each)
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_EQ(batch->B, 4);
    ASSERT_EQ(batch->T, 2048);
    ASSERT_EQ(batch->inputs.size(), 4u * 2048);
    ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
  }
  EXPECT_EQ(loader->counters().batches, 40);
}

TEST_P(LoaderPackings, IsDeterministic) {
  InMemoryConversationSource source(SyntheticConversations(100, 2));
  auto a = *BatchLoader::Create(&source, Options(GetParam()));
  auto b = *BatchLoader::Create(&source, Options(GetParam()));
  for (int i = 0; i < 10; ++i) {
    Batch x = *a->Next(), y = *b->Next();
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.targets, y.targets);
    EXPECT_EQ(x.segment_ids, y.segment_ids);
  }
}

TEST_P(LoaderPackings, WrapsAroundEpochsForever) {
  InMemoryConversationSource source(SyntheticConversations(10, 3));
  auto loader = *BatchLoader::Create(&source, Options(GetParam()));
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(loader->Next().ok());
  EXPECT_GE(loader->counters().epochs_completed, 2);
}

INSTANTIATE_TEST_SUITE_P(Both, LoaderPackings, ::testing::Values(Packing::kPad, Packing::kBestFit),
                         [](const auto& info) { return std::string(PackingName(info.param)); });

TEST(Loader, PadRowsHoldOneConversationEach) {
  std::vector<RenderedConversation> convs = SyntheticConversations(8, 4);
  InMemoryConversationSource source(convs);
  auto loader = *BatchLoader::Create(&source, Options(Packing::kPad));
  Batch batch = *loader->Next();
  for (int b = 0; b < 4; ++b) {
    const RenderedConversation& c = convs[b];
    const int n = std::min<int>(static_cast<int>(c.ids.size()) - 1, 2048);
    for (int t = 0; t < n; ++t) ASSERT_EQ(batch.inputs[batch.Offset(b, t)], c.ids[t]);
    for (int t = n; t < 2048; ++t) {
      ASSERT_EQ(batch.inputs[batch.Offset(b, t)], kPad);
      ASSERT_EQ(batch.targets[batch.Offset(b, t)], -1);
    }
  }
}

TEST(Loader, RanksShardTheConversations) {
  // Conversation i carries i in its second token, so each rank's batches name what it read.
  for (int world : {2, 4}) {
    std::vector<RenderedConversation> convs;
    for (int i = 0; i < 32; ++i) convs.push_back({{1, 1000 + i, 2}, {0, 1, 1}});
    InMemoryConversationSource source(convs);
    std::set<int> seen;
    for (int rank = 0; rank < world; ++rank) {
      auto loader = *BatchLoader::Create(&source, Options(Packing::kPad, rank, world));
      for (int i = 0; i < 32 / world / 4; ++i) {
        Batch batch = *loader->Next();
        for (int b = 0; b < 4; ++b) {
          const int id = batch.inputs[batch.Offset(b, 1)] - 1000;
          EXPECT_EQ(id % world, rank);
          EXPECT_TRUE(seen.insert(id).second);
        }
      }
    }
    EXPECT_EQ(seen.size(), 32u);
  }
}

TEST(Loader, RejectsBadOptionsNamingTheFlag) {
  InMemoryConversationSource source(SyntheticConversations(10, 5));
  LoaderOptions o = Options(Packing::kPad);
  o.pad_id = -1;
  EXPECT_FALSE(BatchLoader::Create(&source, o).ok());
  o = Options(Packing::kPad, 4, 4);
  EXPECT_FALSE(BatchLoader::Create(&source, o).ok());
  EXPECT_FALSE(ParsePacking("tight").ok());
  EXPECT_NE(ParsePacking("tight").status().message().find("--packing"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::data
