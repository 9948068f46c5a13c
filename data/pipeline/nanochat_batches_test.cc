// Our batches of the user conversations in data/testdata/chats.jsonl (system messages,
// assistant parts, a conversation longer than a row) against what nanochat's own code makes
// of them: render_conversation, the TaskMixture order, the init collate (--packing=pad) and
// HEAD's best-fit loader (--packing=bestfit), run by nanochat_batches_golden.py.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/read_file.h"
#include "data/collate/loader.h"
#include "data/conversation/render.h"
#include "data/pipeline/pad_token.h"
#include "data/pipeline/task_source.h"
#include "data/pipeline/training_data.h"
#include "data/tokenizer/tokenizer.h"
#include "gtest/gtest.h"

namespace gpt_sft::data {
namespace {

using nlohmann::json;

class NanochatBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> text = base::ReadFile("data/testdata/nanochat_batches.json");
    ASSERT_TRUE(text.ok()) << text.status();
    golden_ = json::parse(*text);
    absl::StatusOr<Tokenizer> tok = Tokenizer::Load(golden_["tokenizer"].get<std::string>());
    ASSERT_TRUE(tok.ok()) << tok.status();
    tokenizer_ = std::make_shared<const Tokenizer>(*std::move(tok));
    TrainingDataOptions options;
    options.jsonl = {golden_["jsonl"].get<std::string>()};
    options.val_jsonl = {"data/testdata/chats_val.jsonl"};
    options.builtin_tasks = false;
    absl::StatusOr<TrainingData> data = BuildTrainingData(options);
    ASSERT_TRUE(data.ok()) << data.status();
    data_ = *std::move(data);
  }

  json golden_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  TrainingData data_;
};

TEST_F(NanochatBatchesTest, RenderEqualsNanochatsRenderConversation) {
  const json& renders = golden_["renders"];
  const Task& task = *data_.train->tasks().at(0);
  ASSERT_EQ(task.size(), static_cast<int64_t>(renders.size()));
  for (size_t i = 0; i < renders.size(); ++i) {
    absl::StatusOr<Example> ex = task.Get(static_cast<int64_t>(i));
    ASSERT_TRUE(ex.ok()) << ex.status();
    absl::StatusOr<RenderedConversation> r = RenderConversation(ex->conversation, *tokenizer_, 1 << 20);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->ids, renders[i]["ids"].get<std::vector<int32_t>>()) << "line " << i + 1;
    EXPECT_EQ(r->mask, renders[i]["mask"].get<std::vector<uint8_t>>()) << "line " << i + 1;
  }
}

TEST_F(NanochatBatchesTest, MixtureOrderEqualsNanochatsTaskMixture) {
  const std::vector<int64_t> order = golden_["mixture_order"].get<std::vector<int64_t>>();
  ASSERT_EQ(data_.train->size(), static_cast<int64_t>(order.size()));
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(data_.train->Locate(i).second, order[i]) << "row " << i;
}

// nanochat's init collate is as wide as the batch's longest conversation less one; ours is
// always T wide. Where nanochat has a column the two must be equal; past it ours is padding.
TEST_F(NanochatBatchesTest, BatchesEqualNanochatsCollate) {
  for (const json& c : golden_["cases"]) {
    const std::string packing_name = c["packing"].get<std::string>();
    SCOPED_TRACE(packing_name + " B=" + std::to_string(c["B"].get<int>()) + " T=" + std::to_string(c["T"].get<int>()));
    LoaderOptions options;
    options.B = c["B"].get<int>();
    options.T = c["T"].get<int>();
    options.packing = *ParsePacking(packing_name);
    options.pad_id = PadTokenId(options.packing, *tokenizer_);
    TaskSource source(data_.train, tokenizer_, 4 * (options.T + 1));
    absl::StatusOr<std::unique_ptr<BatchLoader>> loader = BatchLoader::Create(&source, options);
    ASSERT_TRUE(loader.ok()) << loader.status();
    int64_t truncated = 0;
    for (size_t k = 0; k < c["batches"].size(); ++k) {
      const json& want = c["batches"][k];
      absl::StatusOr<Batch> batch = (*loader)->Next();
      ASSERT_TRUE(batch.ok()) << batch.status();
      truncated += batch->truncated_rows;
      ASSERT_EQ(static_cast<int>(want["inputs"].size()), options.B);
      for (int b = 0; b < options.B; ++b) {
        const std::vector<int32_t> inputs = want["inputs"][b].get<std::vector<int32_t>>();
        const std::vector<int32_t> targets = want["targets"][b].get<std::vector<int32_t>>();
        const std::vector<int32_t> mask = want["mask"][b].get<std::vector<int32_t>>();
        const int width = static_cast<int>(inputs.size());
        ASSERT_LE(width, options.T);
        for (int t = 0; t < options.T; ++t) {
          const size_t o = batch->Offset(b, t);
          const bool nanochat_has = t < width;
          EXPECT_EQ(batch->inputs[o], nanochat_has ? inputs[t] : options.pad_id) << "batch " << k << " row " << b << " t " << t;
          EXPECT_EQ(batch->targets[o], nanochat_has ? targets[t] : -1) << "batch " << k << " row " << b << " t " << t;
          EXPECT_EQ(batch->targets[o] >= 0, nanochat_has && mask[t] == 1) << "batch " << k << " row " << b << " t " << t;
        }
      }
    }
    EXPECT_GT(truncated, 0) << "the golden should include the conversation longer than a row";
  }
}

}  // namespace
}  // namespace gpt_sft::data
