#include "data/collate/fixed_pad_collator.h"

#include <algorithm>
#include <random>
#include <vector>

#include "data/collate/batch.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

constexpr int32_t kPad = 99;
constexpr int32_t X = kIgnoreTarget;

FixedPadCollator Make(int B, int T) {
  absl::StatusOr<FixedPadCollator> c = FixedPadCollator::Create({B, T, kPad});
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

RenderedConversation Conv(std::vector<int32_t> ids, std::vector<uint8_t> mask) {
  return RenderedConversation{std::move(ids), std::move(mask)};
}

// Hand-worked, T = 8: a conversation keeps at most T = 8 ids (nanochat renders with
// max_tokens = T), then inputs = ids[:-1] and targets = ids[1:], then padding.
TEST(FixedPadCollatorTest, PadsShortRowAndTruncatesLongRowOnTinyExample) {
  std::vector<RenderedConversation> rows = {
      Conv({1, 2, 3, 4, 5}, {0, 0, 1, 1, 1}),
      // 11 tokens: cut to the first 8.
      Conv({10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, {0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1}),
  };
  absl::StatusOr<Batch> batch = Make(2, 8).Collate(rows);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->B, 2);
  EXPECT_EQ(batch->T, 8);
  EXPECT_EQ(batch->inputs, (std::vector<int32_t>{1, 2, 3, 4, kPad, kPad, kPad, kPad,  //
                                                 10, 11, 12, 13, 14, 15, 16, kPad}));
  EXPECT_EQ(batch->targets, (std::vector<int32_t>{X, 3, 4, 5, X, X, X, X,  //
                                                  11, X, 13, 14, 15, 16, 17, X}));
  EXPECT_EQ(batch->segment_ids, std::vector<int32_t>(16, 0));
  EXPECT_EQ(batch->positions,
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(batch->supervised_tokens, 3 + 6);  // the long one: T-1 = 7 targets, 6 with mask 1
  EXPECT_EQ(batch->truncated_rows, 1);
  EXPECT_EQ(batch->conversations, 2);
  EXPECT_EQ(batch->content_positions, 4 + 7);
  EXPECT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
}

TEST(FixedPadCollatorTest, RowsOfLengthTAreKeptAndLongerOnesCutToT) {
  std::vector<RenderedConversation> rows = {
      Conv({1, 2, 3, 4, 5}, {0, 1, 1, 1, 1}),  // n = T+1 = 5: cut to 4, the 5 never a target
      Conv({6, 7, 8, 9}, {0, 1, 1, 1}),        // n = T: kept whole; T-1 targets
      Conv({3}, {1}),                          // a single token: nothing to predict
      Conv({}, {}),                            // empty: all pad
  };
  absl::StatusOr<Batch> batch = Make(4, 4).Collate(rows);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->inputs, (std::vector<int32_t>{1, 2, 3, kPad, 6, 7, 8, kPad,  //
                                                 kPad, kPad, kPad, kPad, kPad, kPad, kPad, kPad}));
  EXPECT_EQ(batch->targets, (std::vector<int32_t>{2, 3, 4, X, 7, 8, 9, X,  //
                                                  X, X, X, X, X, X, X, X}));
  EXPECT_EQ(batch->truncated_rows, 1);
  EXPECT_EQ(batch->supervised_tokens, 6);
  EXPECT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
}

// nanochat's collate, written out directly (NANOCHAT.md 6.4) and padded to the fixed T,
// on conversations rendered with max_tokens = T (n = min(len, T)):
// targets[i, :n-1] = ids[1:], then -1 wherever mask[j+1] == 0.
std::vector<int32_t> ReferenceTargets(const std::vector<RenderedConversation>& rows, int T) {
  std::vector<int32_t> targets(rows.size() * T, -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t n = std::min(rows[i].ids.size(), static_cast<size_t>(T));
    for (size_t j = 0; j + 1 < n; ++j) {
      if (rows[i].mask[j + 1] == 1) targets[i * T + j] = rows[i].ids[j + 1];
    }
  }
  return targets;
}

TEST(FixedPadCollatorTest, MatchesNanochatTargetsOnRandomRows) {
  std::mt19937 rng(7);
  const int B = 4, T = 16;
  FixedPadCollator collator = Make(B, T);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<RenderedConversation> rows(B);
    for (RenderedConversation& c : rows) {
      const int n = 1 + static_cast<int>(rng() % 24);  // some exceed T = 16
      for (int i = 0; i < n; ++i) {
        c.ids.push_back(static_cast<int32_t>(rng() % 50));
        c.mask.push_back(static_cast<uint8_t>(rng() % 2));
      }
    }
    absl::StatusOr<Batch> batch = collator.Collate(rows);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(batch->inputs.size(), static_cast<size_t>(B * T));
    EXPECT_EQ(batch->targets, ReferenceTargets(rows, T)) << "trial " << trial;
    for (int b = 0; b < B; ++b) {
      // nanochat: inputs[i, :n-1] = ids[:-1], pad after.
      const int n = static_cast<int>(std::min<size_t>(rows[b].ids.size(), T));
      for (int t = 0; t < T; ++t) {
        EXPECT_EQ(batch->inputs[batch->Offset(b, t)], t < n - 1 ? rows[b].ids[t] : kPad);
      }
    }
    ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
  }
}

TEST(FixedPadCollatorTest, RejectsBadOptionsAndInputs) {
  EXPECT_FALSE(FixedPadCollator::Create({0, 8, kPad}).ok());
  EXPECT_FALSE(FixedPadCollator::Create({4, 0, kPad}).ok());
  absl::Status no_pad = FixedPadCollator::Create({4, 8, -1}).status();
  EXPECT_NE(no_pad.message().find("pad_id = -1"), std::string::npos) << no_pad;

  FixedPadCollator collator = Make(2, 8);
  std::vector<RenderedConversation> one = {Conv({1, 2}, {0, 1})};
  EXPECT_NE(collator.Collate(one).status().message().find("got 1 conversations for B = 2"),
            std::string::npos);
  std::vector<RenderedConversation> ragged = {Conv({1, 2}, {0, 1}), Conv({1, 2, 3}, {0, 1})};
  EXPECT_NE(collator.Collate(ragged).status().message().find("row 1 has 3 ids but 2 mask"),
            std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::data
