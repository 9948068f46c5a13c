#include "data/collate/best_fit_packer.h"

#include <map>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "data/collate/batch.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

constexpr int32_t kPad = 99;
constexpr int32_t X = kIgnoreTarget;

RenderedConversation Conv(std::vector<int32_t> ids, std::vector<uint8_t> mask) {
  return RenderedConversation{std::move(ids), std::move(mask)};
}

// A finite stream over `conversations`; OutOfRange once they run out.
class VectorStream {
 public:
  explicit VectorStream(std::vector<RenderedConversation> conversations)
      : conversations_(std::move(conversations)) {}
  absl::StatusOr<RenderedConversation> operator()() {
    if (next_ >= conversations_.size()) return absl::OutOfRangeError("test stream exhausted");
    return conversations_[next_++];
  }
  size_t pulled() const { return next_; }

 private:
  std::vector<RenderedConversation> conversations_;
  size_t next_ = 0;
};

BestFitPacker Make(int B, int T, int buffer_size) {
  absl::StatusOr<BestFitPacker> p = BestFitPacker::Create({B, T, kPad, buffer_size});
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

// Hand-worked: T = 8 (capacity 9), buffer of 4, B = 3. Stream lengths: A4 B5 C5 D3 E4 F12 G7 H5.
//   row 0: buffer [A B C D] -> B (longest, first of the B/C tie); refill [A C D E], 4 free
//          -> A (first of the A/E tie); full.
//   row 1: buffer [C D E F]; F cut 12 -> 8 (= T, nanochat's max_tokens) on entry -> F;
//          refill [C D E G], 1 free -> nothing fits; 1 pad slot (slot T, a target only).
//   row 2: buffer [C D E G] -> G (7); refill [C D E H], 2 free -> nothing fits; 2 pad slots.
TEST(BestFitPackerTest, PacksTinyExampleByHand) {
  VectorStream stream({
      Conv({1, 2, 3, 4}, {1, 1, 0, 1}),  // A: mask[0] = 1, yet its first token is no target
      Conv({11, 12, 13, 14, 15}, {0, 0, 1, 1, 1}),            // B
      Conv({21, 22, 23, 24, 25}, {0, 0, 0, 0, 1}),            // C
      Conv({31, 32, 33}, {0, 0, 1}),                          // D
      Conv({41, 42, 43, 44}, {0, 0, 0, 1}),                   // E
      Conv({51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62},  // F
           {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
      Conv({71, 72, 73, 74, 75, 76, 77}, {0, 0, 0, 1, 1, 1, 1}),  // G
      Conv({81, 82, 83, 84, 85}, {0, 0, 0, 0, 1}),                // H
  });
  BestFitPacker packer = Make(3, 8, 4);
  absl::StatusOr<Batch> batch = packer.Pack(std::ref(stream));
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
  EXPECT_EQ(batch->inputs, (std::vector<int32_t>{11, 12, 13, 14, 15, 1,  2,  3,   //
                                                 51, 52, 53, 54, 55, 56, 57, 58,  //
                                                 71, 72, 73, 74, 75, 76, 77, kPad}));
  // Row 0, t = 4: input 15 (B's last) would predict 1 (A's first, mask 1): crosses a
  // boundary, so -1. t = 7: input 3 predicts 4, which sits in slot T = 8.
  EXPECT_EQ(batch->targets, (std::vector<int32_t>{X,  13, 14, 15, X,  2,  X,  4,   //
                                                  52, 53, 54, 55, 56, 57, 58, X,   //
                                                  X,  X,  74, 75, 76, 77, X,  X}));
  EXPECT_EQ(batch->segment_ids, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1,  //
                                                      0, 0, 0, 0, 0, 0, 0, 0,  //
                                                      0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(batch->positions, (std::vector<int32_t>{0, 1, 2, 3, 4, 0, 1, 2,  //
                                                    0, 1, 2, 3, 4, 5, 6, 7,  //
                                                    0, 1, 2, 3, 4, 5, 6, 0}));
  // F, cut to T ids, supervises T-1 = 7 targets, as nanochat's render + shift does.
  EXPECT_EQ(batch->supervised_tokens, 5 + 7 + 4);
  EXPECT_EQ(batch->truncated_rows, 1);
  EXPECT_EQ(batch->conversations, 4);
  EXPECT_EQ(batch->content_positions, 8 + 8 + 7);
  EXPECT_EQ(stream.pulled(), 8u);
  EXPECT_EQ(packer.buffered(), 4);  // C D E H wait for the next batch
}

TEST(BestFitPackerTest, LengthOneConversationInLastSlotIsTargetOnly) {
  // T = 4: A (4 tokens) then B (1 token) fill the 5 slots exactly; B is only a target slot,
  // and a cross-boundary one, so nothing predicts it.
  VectorStream stream({Conv({1, 2, 3, 4}, {0, 1, 1, 1}), Conv({9}, {1}), Conv({7, 7}, {0, 1})});
  BestFitPacker packer = Make(1, 4, 2);
  absl::StatusOr<Batch> batch = packer.Pack(std::ref(stream));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->inputs, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(batch->targets, (std::vector<int32_t>{2, 3, 4, X}));
  EXPECT_EQ(batch->segment_ids, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(batch->conversations, 2);
  EXPECT_EQ(batch->supervised_tokens, 3);
  EXPECT_EQ(packer.buffered(), 1);  // the third, refilled before B was picked
}

TEST(BestFitPackerTest, ErrorsAreReportedNotSkipped) {
  EXPECT_FALSE(BestFitPacker::Create({4, 8, kPad, 0}).ok());
  EXPECT_FALSE(BestFitPacker::Create({4, 8, -1, 100}).ok());
  EXPECT_FALSE(BestFitPacker::Create({0, 8, kPad, 100}).ok());

  BestFitPacker packer = Make(1, 8, 2);
  VectorStream empty({Conv({}, {}), Conv({1}, {0})});
  EXPECT_NE(packer.Pack(std::ref(empty)).status().message().find("no tokens"), std::string::npos);
  VectorStream ragged({Conv({1, 2}, {0})});
  EXPECT_NE(packer.Pack(std::ref(ragged)).status().message().find("2 ids but 1 mask"),
            std::string::npos);
  VectorStream short_stream({Conv({1, 2}, {0, 1})});
  EXPECT_EQ(packer.Pack(std::ref(short_stream)).status().code(), absl::StatusCode::kOutOfRange);
}

// ---- Properties on random data, checked from the batch alone. ----

// Conversation c's token i has id c * 1000 + i, so every input names its conversation and
// offset. Lengths 2..50 (a length-1 conversation in the last slot would leave no input to
// see); masks random, including at token 0.
std::vector<RenderedConversation> TaggedConversations(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<RenderedConversation> out(count);
  for (int c = 0; c < count; ++c) {
    const int n = 2 + static_cast<int>(rng() % 49);
    for (int i = 0; i < n; ++i) {
      out[c].ids.push_back(c * 1000 + i);
      out[c].mask.push_back(static_cast<uint8_t>(rng() % 2));
    }
  }
  return out;
}

// Best fit re-derived on lengths only: the conversation ids placed in each row.
std::vector<std::vector<int>> ReferenceRows(const std::vector<RenderedConversation>& all, int rows,
                                            int T, int buffer_size) {
  std::vector<std::vector<int>> out(rows);
  std::vector<int> buffer;  // conversation ids, arrival order
  size_t next = 0;
  for (int r = 0; r < rows; ++r) {
    int free_slots = T + 1;
    while (free_slots > 0) {
      while (static_cast<int>(buffer.size()) < buffer_size) buffer.push_back(next++);
      int best = -1, best_len = 0;
      for (int i = 0; i < static_cast<int>(buffer.size()); ++i) {
        const int len = std::min<int>(all[buffer[i]].ids.size(), T);
        if (len <= free_slots && len > best_len) best = i, best_len = len;
      }
      if (best < 0) break;
      out[r].push_back(buffer[best]);
      free_slots -= best_len;
      buffer.erase(buffer.begin() + best);
    }
  }
  return out;
}

void CheckPackedBatches(int B, int T, int buffer_size, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "B=" << B << " T=" << T << " buffer=" << buffer_size);
  const std::vector<RenderedConversation> all = TaggedConversations(3000, seed);
  const int batches = 25;
  const std::vector<std::vector<int>> want_rows = ReferenceRows(all, B * batches, T, buffer_size);
  VectorStream stream(all);
  BestFitPacker packer = Make(B, T, buffer_size);
  std::map<int, int> seen;  // conversation id -> times placed
  int64_t cropped = 0, truncated = 0;
  for (int k = 0; k < batches; ++k) {
    absl::StatusOr<Batch> batch = packer.Pack(std::ref(stream));
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_EQ(batch->B, B);
    ASSERT_EQ(batch->T, T);
    ASSERT_EQ(batch->inputs.size(), static_cast<size_t>(B) * T);
    ASSERT_TRUE(ValidateBatch(*batch).ok()) << ValidateBatch(*batch);
    truncated += batch->truncated_rows;
    for (int b = 0; b < B; ++b) {
      std::vector<int> row_convs;
      int filled = 0;  // slots holding conversation tokens
      for (int t = 0; t < T; ++t) {
        const size_t o = batch->Offset(b, t);
        const int32_t in = batch->inputs[o];
        const int32_t seg = batch->segment_ids[o];
        if (in == kPad) {
          // Padding: its own segment, one after the last conversation, never a target.
          EXPECT_EQ(seg, static_cast<int>(row_convs.size())) << "row " << b << " t " << t;
          EXPECT_EQ(batch->targets[o], X);
          continue;
        }
        const int c = in / 1000, i = in % 1000;
        if (batch->positions[o] == 0) {
          row_convs.push_back(c);  // a new conversation starts here, at its token 0
          ++seen[c];
          cropped += all[c].ids.size() > static_cast<size_t>(T);
        }
        ASSERT_FALSE(row_convs.empty());
        EXPECT_EQ(c, row_convs.back()) << "a conversation was split inside row " << b;
        EXPECT_EQ(seg, static_cast<int>(row_convs.size()) - 1);
        EXPECT_EQ(batch->positions[o], i);
        ++filled;
        // Target: the conversation's next token if it is inside the (cropped) conversation
        // and supervised; -1 at the boundary.
        const int len = std::min<int>(all[c].ids.size(), T);
        const int32_t want = i + 1 < len && all[c].mask[i + 1] ? all[c].ids[i + 1] : X;
        EXPECT_EQ(batch->targets[o], want) << "row " << b << " t " << t;
      }
      EXPECT_EQ(batch->positions[batch->Offset(b, 0)], 0) << "row must start at a boundary";
      EXPECT_EQ(row_convs, want_rows[k * B + b]) << "batch " << k << " row " << b;
    }
  }
  for (const auto& [c, times] : seen) EXPECT_EQ(times, 1) << "conversation " << c;
  EXPECT_EQ(truncated, cropped);
}

TEST(BestFitPackerTest, PropertiesHoldOnRandomConversations) {
  CheckPackedBatches(4, 32, 100, 1);  // nanochat's buffer; lengths up to 50 > T get cut to T
  CheckPackedBatches(2, 16, 3, 2);    // tiny buffer: frequent padding
  CheckPackedBatches(3, 64, 1, 3);    // buffer of 1: sequential first fit
}

}  // namespace
}  // namespace gpt_sft::data
