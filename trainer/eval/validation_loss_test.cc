#include "trainer/eval/validation_loss.h"

#include <cmath>
#include <random>

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

std::unique_ptr<EagerStep> StepFor(runtime::ParamStore* params) {
  compiler::StepConfig config;
  config.model = params->config();
  config.batch_size = kB;
  config.seq_len = kT;
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
