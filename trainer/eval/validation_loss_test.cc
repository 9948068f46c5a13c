#include "trainer/eval/validation_loss.h"

#include <cmath>
#include <random>

#include "data/collate/in_memory_source.h"
#include "data/collate/loader.h"
#include "gtest/gtest.h"
#include "runtime/params/param_store.h"
#include "trainer/batch_tensors.h"

namespace gpt_sft::trainer {
namespace {

constexpr int kVocab = 97, kB = 2, kT = 16;

compiler::ModelConfig TinyModel() { return *compiler::ModelConfig::FromDepth(1, kVocab, 64, 32, 2); }

// A random [kB, kT] batch; row b supervises its first `supervised[b]` targets.
data::Batch RandomBatch(uint32_t seed, std::vector<int> supervised = {kT, kT / 2}) {
  std::mt19937 rng(seed);
  data::Batch b = data::NewBatch(kB, kT);
  for (int r = 0; r < kB; ++r) {
    for (int t = 0; t < kT; ++t) {
      b.inputs[b.Offset(r, t)] = static_cast<int32_t>(rng() % kVocab);
      b.positions[b.Offset(r, t)] = t;
      if (t < supervised[r]) b.targets[b.Offset(r, t)] = static_cast<int32_t>(rng() % kVocab);
    }
  }
  b.supervised_tokens = data::CountSupervised(b);
  return b;
}

// Rendered conversations of 5..14 random ids: a prompt (mask 0), then a reply (mask 1).
std::vector<data::RenderedConversation> Conversations(int count) {
  std::mt19937 rng(42);
  std::vector<data::RenderedConversation> out;
  for (int c = 0; c < count; ++c) {
    data::RenderedConversation conv;
    const int n = 5 + static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) {
      conv.ids.push_back(static_cast<int32_t>(rng() % kVocab));
      conv.mask.push_back(i >= n / 2 ? 1 : 0);
    }
    out.push_back(conv);
  }
  return out;
}

std::unique_ptr<EagerStep> StepFor(runtime::ParamStore* params, bool packed = false) {
  compiler::StepConfig config;
  config.model = params->config();
  config.batch_size = kB;
  config.seq_len = kT;
  config.packed = packed;
  absl::StatusOr<std::unique_ptr<EagerStep>> step = EagerStep::Create(config, params);
  EXPECT_TRUE(step.ok()) << step.status();
  return step.ok() ? *std::move(step) : nullptr;
}

TEST(ValidationLoss, ZeroLmHeadGivesLnVocab) {
  runtime::ParamStore params = *runtime::ParamStore::Create(TinyModel());
  params.InitNanochat(7);  // nanochat's init: lm_head = 0, so every logit is 0
  std::unique_ptr<EagerStep> step = StepFor(&params);
  ASSERT_NE(step, nullptr);
  std::vector<data::Batch> batches = {RandomBatch(1), RandomBatch(2), RandomBatch(3)};
  absl::StatusOr<ValidationLossResult> r = ValidationLoss(*step, VectorSource(&batches), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->mean_loss, std::log(double(kVocab)), 1e-5);
  EXPECT_EQ(r->batches, 3);
  EXPECT_EQ(r->supervised_tokens, 3 * (kT + kT / 2));
}

TEST(ValidationLoss, MeanOfPerBatchLossesNotOfTokens) {
  runtime::ParamStore params = *runtime::ParamStore::Create(TinyModel());
  params.InitNanochat(7, /*zero_output_projections=*/false);
  std::unique_ptr<EagerStep> step = StepFor(&params);
  ASSERT_NE(step, nullptr);
  // Different supervised counts per batch: the batch mean and the token mean differ.
  std::vector<data::Batch> batches = {RandomBatch(1, {kT, kT}), RandomBatch(2, {1, 0}), RandomBatch(3, {3, 5})};
  std::vector<double> direct;
  for (const data::Batch& b : batches) direct.push_back(*step->Loss(ToStepBatch(b, false)));
  absl::StatusOr<ValidationLossResult> r = ValidationLoss(*step, VectorSource(&batches), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->mean_loss, (direct[0] + direct[1] + direct[2]) / 3);
  EXPECT_EQ(r->losses, direct);
  EXPECT_GT(std::abs(direct[0] - direct[1]), 1e-3);  // the weights are not trivial
  // No gradient was touched.
  for (size_t i = 0; i < params.params().size(); ++i) {
    const runtime::Tensor& g = step->grad(i);
    for (int64_t k = 0; k < g.numel(); ++k) ASSERT_EQ(g.data<float>()[k], 0.0f) << i;
  }
}

// The loader the trainer uses, both packings: the mean of EagerStep::Loss over the same
// first batches (a second loader over the same source yields the same batches).
TEST(ValidationLoss, OverABatchLoaderBothPackings) {
  runtime::ParamStore params = *runtime::ParamStore::Create(TinyModel());
  params.InitNanochat(7, /*zero_output_projections=*/false);
  data::InMemoryConversationSource source(Conversations(20));
  for (data::Packing packing : {data::Packing::kPad, data::Packing::kBestFit}) {
    const bool packed = packing == data::Packing::kBestFit;
    std::unique_ptr<EagerStep> step = StepFor(&params, packed);
    ASSERT_NE(step, nullptr);
    data::LoaderOptions options;
    options.B = kB;
    options.T = kT;
    options.packing = packing;
    options.pad_id = kVocab - 1;
    std::unique_ptr<data::BatchLoader> loader = *data::BatchLoader::Create(&source, options);
    std::unique_ptr<data::BatchLoader> replay = *data::BatchLoader::Create(&source, options);
    absl::StatusOr<ValidationLossResult> r = ValidationLoss(*step, LoaderSource(loader.get()), 4);
    ASSERT_TRUE(r.ok()) << r.status();
    double sum = 0;
    bool any_packed_row = false;
    for (int i = 0; i < 4; ++i) {
      data::Batch b = *replay->Next();
      any_packed_row = any_packed_row || !IsPlainCausal(b);
      sum += *step->Loss(ToStepBatch(b, packed));
    }
    EXPECT_EQ(any_packed_row, packed);
    EXPECT_EQ(r->batches, 4);
    EXPECT_NEAR(r->mean_loss, sum / 4, 1e-12);
    EXPECT_TRUE(std::isfinite(r->mean_loss));
  }
}

TEST(ValidationLoss, SkipsBatchesWithoutTargets) {
  runtime::ParamStore params = *runtime::ParamStore::Create(TinyModel());
  params.InitNanochat(7, false);
  std::unique_ptr<EagerStep> step = StepFor(&params);
  ASSERT_NE(step, nullptr);
  std::vector<data::Batch> batches = {RandomBatch(1), RandomBatch(2, {0, 0})};
  absl::StatusOr<ValidationLossResult> r = ValidationLoss(*step, VectorSource(&batches), 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->batches, 1);
  EXPECT_EQ(r->empty_batches, 1);
  EXPECT_DOUBLE_EQ(r->mean_loss, *step->Loss(ToStepBatch(batches[0], false)));

  std::vector<data::Batch> empty = {RandomBatch(2, {0, 0})};
  r = ValidationLoss(*step, VectorSource(&empty), 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ValidationLoss, ErrorsNameTheBatch) {
  runtime::ParamStore params = *runtime::ParamStore::Create(TinyModel());
  params.InitNanochat(7);
  std::unique_ptr<EagerStep> step = StepFor(&params);
  ASSERT_NE(step, nullptr);
  std::vector<data::Batch> batches = {RandomBatch(1), data::NewBatch(kB, kT + 1)};
  absl::StatusOr<ValidationLossResult> r = ValidationLoss(*step, VectorSource(&batches), 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("validation batch 1 is [2, 17]"), absl::string_view::npos) << r.status();
  r = ValidationLoss(*step, VectorSource(&batches), 3);  // the source runs out after batch 1 fails
  ASSERT_FALSE(r.ok());
  r = ValidationLoss(*step, VectorSource(&batches), 0);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<data::Batch> one = {RandomBatch(1)};
  r = ValidationLoss(*step, VectorSource(&one), 2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("validation batch 1: the batch source holds only 1"), absl::string_view::npos)
      << r.status();
}

}  // namespace
}  // namespace gpt_sft::trainer
