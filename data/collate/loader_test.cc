#include "data/collate/loader.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "data/collate/batch.h"
#include "data/collate/in_memory_source.h"
#include "data/collate/synthetic_conversations.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

constexpr int32_t kPad = 7;
constexpr int kTag = 1000;  // conversation i starts with token kTag + i

// Conversation i: [kTag + i, then len-1 filler tokens], lengths 3..12, last half supervised.
InMemoryConversationSource Tagged(int n) {
  std::vector<RenderedConversation> all(n);
  for (int i = 0; i < n; ++i) {
    const int len = 3 + (i * 7) % 10;
    for (int k = 0; k < len; ++k) {
      all[i].ids.push_back(k == 0 ? kTag + i : 100 + k);
      all[i].mask.push_back(k >= len / 2);
    }
  }
  return InMemoryConversationSource(std::move(all));
}

std::unique_ptr<BatchLoader> Make(const ConversationSource* source, LoaderOptions options) {
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader = BatchLoader::Create(source, options);
  EXPECT_TRUE(loader.ok()) << loader.status();
  return loader.ok() ? *std::move(loader) : nullptr;
}

// Source indices of the conversations that start in `batch` (input kTag + i at position 0).
std::vector<int> Starts(const Batch& batch) {
  std::vector<int> out;
  for (size_t o = 0; o < batch.inputs.size(); ++o) {
    if (batch.positions[o] == 0 && batch.inputs[o] >= kTag) out.push_back(batch.inputs[o] - kTag);
  }
  return out;
}

TEST(LoaderTest, ParsesPackingFlag) {
  EXPECT_EQ(*ParsePacking("pad"), Packing::kPad);
  EXPECT_EQ(*ParsePacking("bestfit"), Packing::kBestFit);
  absl::Status bad = ParsePacking("greedy").status();
  EXPECT_NE(bad.message().find("--packing=greedy"), std::string::npos) << bad;
  EXPECT_EQ(PackingName(Packing::kBestFit), "bestfit");
}

TEST(LoaderTest, RejectsBadOptions) {
  InMemoryConversationSource source = Tagged(4);
  EXPECT_FALSE(BatchLoader::Create(&source, {4, 8, Packing::kPad, 0, 1, -1}).ok());
  EXPECT_FALSE(BatchLoader::Create(&source, {4, 8, Packing::kBestFit, 2, 2, kPad}).ok());
  EXPECT_FALSE(BatchLoader::Create(&source, {0, 8, Packing::kBestFit, 0, 1, kPad}).ok());
  EXPECT_FALSE(BatchLoader::Create(&source, {4, 8, Packing::kPad, 4, 8, kPad}).ok());
}

TEST(LoaderTest, ShapesAreAlwaysBTForBothPackings) {
  InMemoryConversationSource source(SyntheticConversations(300, 11));
  for (Packing packing : {Packing::kPad, Packing::kBestFit}) {
    std::unique_ptr<BatchLoader> loader = Make(&source, {4, 2048, packing, 0, 1, kPad});
    ASSERT_NE(loader, nullptr);
    for (int k = 0; k < 30; ++k) {
      absl::StatusOr<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status();
      EXPECT_EQ(batch->B, 4);
      EXPECT_EQ(batch->T, 2048);
      for (const auto* t :
           {&batch->inputs, &batch->targets, &batch->segment_ids, &batch->positions}) {
        EXPECT_EQ(t->size(), 4u * 2048u);
      }
      ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
    }
    EXPECT_EQ(loader->counters().batches, 30);
    EXPECT_EQ(loader->counters().positions, 30 * 4 * 2048);
  }
}

// Pad packing, one epoch per rank: the ranks' conversations are disjoint and cover all.
TEST(LoaderTest, PadRanksPartitionOneEpoch) {
  const int n = 13;
  InMemoryConversationSource source = Tagged(n);
  for (int world : {2, 4}) {
    std::multiset<int> seen;
    for (int rank = 0; rank < world; ++rank) {
      std::unique_ptr<BatchLoader> loader =
          Make(&source, {1, 16, Packing::kPad, rank, world, kPad});
      const int per_epoch = (n - rank + world - 1) / world;
      for (int k = 0; k < per_epoch; ++k) {
        absl::StatusOr<Batch> batch = loader->Next();
        ASSERT_TRUE(batch.ok()) << batch.status();
        for (int i : Starts(*batch)) {
          EXPECT_EQ(i % world, rank);
          seen.insert(i);
        }
      }
      EXPECT_EQ(loader->counters().epochs_completed, 1);
      EXPECT_EQ(loader->counters().examples_consumed, per_epoch);
    }
    std::multiset<int> want;
    for (int i = 0; i < n; ++i) want.insert(i);
    EXPECT_EQ(seen, want) << "world " << world;
  }
}

// Bestfit buffers ahead, so check over many batches: every placed conversation is from
// this rank's shard, no index is placed more often than the epochs begun, and together the
// ranks place every index.
TEST(LoaderTest, BestFitRanksPartitionTheSource) {
  const int n = 50;
  InMemoryConversationSource source = Tagged(n);
  for (int world : {2, 4}) {
    std::set<int> seen;
    for (int rank = 0; rank < world; ++rank) {
      std::unique_ptr<BatchLoader> loader =
          Make(&source, {2, 32, Packing::kBestFit, rank, world, kPad, 5});
      std::map<int, int> times;
      for (int k = 0; k < 40; ++k) {
        absl::StatusOr<Batch> batch = loader->Next();
        ASSERT_TRUE(batch.ok()) << batch.status();
        for (int i : Starts(*batch)) {
          EXPECT_EQ(i % world, rank) << "rank " << rank << " of " << world;
          ++times[i];
          seen.insert(i);
        }
      }
      const LoaderCounters& c = loader->counters();
      EXPECT_GE(c.epochs_completed, 1);
      for (const auto& [i, count] : times) EXPECT_LE(count, c.epochs_completed + 1);
      EXPECT_EQ(c.examples_consumed - c.examples_batched, c.buffered);
      EXPECT_GE(c.buffered, 4);  // refilled to 5 before each pick, one taken since
      EXPECT_LE(c.buffered, 5);
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(n)) << "world " << world;
  }
}

TEST(LoaderTest, PadWrapsAroundEpochsInsideABatch) {
  InMemoryConversationSource source = Tagged(3);
  std::unique_ptr<BatchLoader> loader = Make(&source, {2, 16, Packing::kPad, 0, 1, kPad});
  std::vector<std::vector<int>> rows;
  std::vector<int64_t> epochs;
  for (int k = 0; k < 3; ++k) {
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    rows.push_back(Starts(*batch));
    epochs.push_back(loader->counters().epochs_completed);
  }
  EXPECT_EQ(rows, (std::vector<std::vector<int>>{{0, 1}, {2, 0}, {1, 2}}));
  EXPECT_EQ(epochs, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(loader->counters().examples_consumed, 6);
}

TEST(LoaderTest, BestFitWrapsAroundForever) {
  InMemoryConversationSource source = Tagged(3);  // lengths 3, 10, 7
  std::unique_ptr<BatchLoader> loader = Make(&source, {1, 64, Packing::kBestFit, 0, 1, kPad});
  std::map<int, int> times;
  for (int k = 0; k < 50; ++k) {
    absl::StatusOr<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status();
    for (int i : Starts(*batch)) ++times[i];
  }
  const LoaderCounters& c = loader->counters();
  EXPECT_EQ(c.epochs_completed, c.examples_consumed / 3);
  EXPECT_EQ(c.examples_batched, times[0] + times[1] + times[2]);
  EXPECT_GT(times[0], 0);
  EXPECT_GT(times[1], 0);
  EXPECT_GT(times[2], 0);
}

TEST(LoaderTest, IsDeterministic) {
  InMemoryConversationSource source(SyntheticConversations(200, 5));
  for (Packing packing : {Packing::kPad, Packing::kBestFit}) {
    std::unique_ptr<BatchLoader> a = Make(&source, {4, 512, packing, 1, 2, kPad});
    std::unique_ptr<BatchLoader> b = Make(&source, {4, 512, packing, 1, 2, kPad});
    std::unique_ptr<BatchLoader> other_rank = Make(&source, {4, 512, packing, 0, 2, kPad});
    for (int k = 0; k < 12; ++k) {
      absl::StatusOr<Batch> x = a->Next(), y = b->Next(), z = other_rank->Next();
      ASSERT_TRUE(x.ok() && y.ok() && z.ok());
      EXPECT_EQ(x->inputs, y->inputs) << PackingName(packing) << " batch " << k;
      EXPECT_EQ(x->targets, y->targets);
      EXPECT_EQ(x->segment_ids, y->segment_ids);
      EXPECT_EQ(x->positions, y->positions);
      EXPECT_NE(x->inputs, z->inputs);
    }
  }
}

TEST(LoaderTest, CountsTruncatedConversations) {
  // Lengths 3..12 against T = 8: conversations longer than T = 8 tokens are cut and counted.
  const int n = 10;
  InMemoryConversationSource source = Tagged(n);
  int over = 0;
  for (int i = 0; i < n; ++i) over += 3 + (i * 7) % 10 > 8;
  ASSERT_GT(over, 0);
  std::unique_ptr<BatchLoader> pad = Make(&source, {2, 8, Packing::kPad, 0, 1, kPad});
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(pad->Next().ok());  // exactly one epoch
  EXPECT_EQ(pad->counters().truncated, over);
  EXPECT_EQ(pad->counters().examples_batched, n);
}

// On the synthetic length mix, packing must spend fewer positions on nothing than padding.
TEST(LoaderTest, BestFitPadsLessThanPadOnSyntheticMix) {
  InMemoryConversationSource source(SyntheticConversations(1000, 2026));
  double fraction[2] = {0, 0};
  int64_t supervised[2] = {0, 0};
  for (Packing packing : {Packing::kPad, Packing::kBestFit}) {
    std::unique_ptr<BatchLoader> loader = Make(&source, {4, 2048, packing, 0, 1, kPad});
    for (int k = 0; k < 50; ++k) {
      absl::StatusOr<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status();
      fraction[static_cast<int>(packing)] += PaddingFraction(*batch) / 50;
    }
    supervised[static_cast<int>(packing)] = loader->counters().supervised_tokens / 50;
  }
  EXPECT_LT(fraction[1], fraction[0]);
  EXPECT_GT(supervised[1], 2 * supervised[0]);
}

}  // namespace
}  // namespace gpt_sft::data
