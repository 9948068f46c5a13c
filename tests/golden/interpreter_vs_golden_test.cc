// The interpreted training step (builder -> gpt-autodiff -> Interpreter, driven by
// trainer/eager_step) against the PyTorch reference's golden files: the loss of each
// optimizer step, every parameter's gradient at step 0, and the parameters after 1 and 3
// optimizer steps, for padded rows (plain causal IR), packed rows (segment ids and
// positions) and 2 micro-steps of accumulation. float32; relative error at most 1e-6 for
// the loss, 1e-5 for gradients and 1e-6 for parameters (measured at most 4.4e-8, 9.0e-7 and
// 6.0e-8; tightened from the first issue's 1e-5 and 1e-4, which rotary tables that are not
// nanochat's bf16 ones passed on the loss: 6e-6 off).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/params/param_store.h"
#include "tests/golden/golden_file.h"
#include "trainer/eager_step.h"
#include "trainer/eval/logits_evaluator.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

// Absolute, on logits of magnitude up to 4.6 (the softcap is 15): float32 rounding of the forward
// (measured 2.4e-6).
constexpr double kLogitTolerance = 1e-5;

// ||a - b|| / ||b|| over the whole tensor.
double RelativeError(const float* a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) num += double(a[i] - b[i]) * (a[i] - b[i]), den += double(b[i]) * b[i];
  return std::sqrt(num / std::max(den, 1e-30));
}

// Micro-batch m of a golden [M, B, T] i32 tensor, as a [B, T] tensor.
Tensor Micro(const GoldenFile& g, const std::string& name, int m) {
  const GoldenTensor& t = g.tensors.at(name);
  const int64_t B = t.shape[1], T = t.shape[2];
  std::vector<int32_t> rows(t.i32.begin() + m * B * T, t.i32.begin() + (m + 1) * B * T);
  return Tensor::FromVector<int32_t>({B, T}, rows);
}

// Padded rows are one conversation each: segment 0 and positions 0..T-1 everywhere, which
// is what the plain causal IR assumes.
bool IsPlainCausal(const GoldenFile& g) {
  const GoldenTensor& seg = g.tensors.at("segment_ids");
  const GoldenTensor& pos = g.tensors.at("positions");
  const int64_t T = pos.shape[2];
  for (int64_t i = 0; i < pos.numel(); ++i) {
    if (seg.i32[i] != 0 || pos.i32[i] != i % T) return false;
  }
  return true;
}

class InterpreterVsGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(InterpreterVsGolden, LossGradientsAndThreeOptimizerSteps) {
  absl::StatusOr<GoldenFile> g = GoldenFile::Load("tests/golden/" + GetParam() + ".gold");
  ASSERT_TRUE(g.ok()) << g.status();
  const nlohmann::json header = nlohmann::json::parse(g->header_json);
  const GoldenTensor& inputs = g->tensors.at("inputs");
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromJson(g->config_json);
  config.batch_size = inputs.shape[1];
  config.seq_len = inputs.shape[2];
  config.grad_accum_steps = header.at("grad_accum_steps").get<int>();
  config.packed = !IsPlainCausal(*g);
  if (GetParam() == "padded" || GetParam() == "packed") {
    EXPECT_EQ(config.packed, GetParam() == "packed");
  }

  runtime::ParamStore store = *runtime::ParamStore::Create(config.model);
  for (runtime::Param& p : store.params()) {  // the reference's torch.Generator draw
    const std::vector<float>& init = g->tensors.at("init/" + p.name).f32;
    ASSERT_EQ(static_cast<int64_t>(init.size()), p.numel()) << p.name;
    std::copy(init.begin(), init.end(), p.data());
  }
  runtime::InterpreterOptions options;
  options.num_threads = 2;
  absl::StatusOr<std::unique_ptr<trainer::EagerStep>> step = trainer::EagerStep::Create(config, &store, options);
  ASSERT_TRUE(step.ok()) << step.status();

  const int num_iterations = header.at("optimizer").at("num_iterations").get<int>();
  const std::vector<double> losses = header.at("losses_float64").get<std::vector<double>>();
  double worst_grad = 0, worst_param = 0;
  for (int it = 0; it < 3; ++it) {
    double loss = 0;
    for (int m = 0; m < config.grad_accum_steps; ++m) {
      trainer::StepBatch batch{Micro(*g, "inputs", m), Micro(*g, "targets", m)};
      if (config.packed) batch.segment_ids = Micro(*g, "segment_ids", m), batch.positions = Micro(*g, "positions", m);
      absl::StatusOr<double> micro = (*step)->MicroStep(batch);
      ASSERT_TRUE(micro.ok()) << micro.status();
      loss += *micro / config.grad_accum_steps;
    }
    std::cout << GetParam() << " step " << it << ": loss " << loss << " (reference " << losses[it] << ", relative error "
              << std::abs(loss - losses[it]) / losses[it] << ")\n";
    EXPECT_LT(std::abs(loss - losses[it]) / losses[it], 1e-6) << "step " << it;
    if (it == 0) {
      for (size_t i = 0; i < store.params().size(); ++i) {
        const runtime::Param& p = store.params()[i];
        const double err = RelativeError((*step)->grad(i).data<float>(), g->tensors.at("grad/" + p.name).f32);
        worst_grad = std::max(worst_grad, err);
        EXPECT_LT(err, 1e-5) << "grad/" << p.name;
      }
    }
    ASSERT_TRUE((*step)->OptimizerStep(1.0 - double(it) / num_iterations).ok());
    if (it == 0 || it == 2) {
      const std::string prefix = it == 0 ? "step1/" : "step3/";
      for (const runtime::Param& p : store.params()) {
        const double err = RelativeError(p.data(), g->tensors.at(prefix + p.name).f32);
        worst_param = std::max(worst_param, err);
        EXPECT_LT(err, 1e-6) << prefix << p.name;
      }
    }
  }
  EXPECT_EQ((*step)->steps_taken(), 3);
  std::cout << GetParam() << ": worst relative error of a gradient " << worst_grad << ", of a parameter "
            << worst_param << "\n";
}

// The float32 forward (trainer/eval/logits_evaluator, the interpreter) against the golden's
// float64 logits of micro-batch 0 at the initial weights, conversation by conversation (a
// packed segment is a conversation from position 0, so it is evaluated alone). Both rotate by
// nanochat's bf16 rotary tables; with the unrounded tables this project used before, the
// logits differ by up to 3.5e-3 (padded) and 5e-3 (packed), far outside the tolerance.
TEST_P(InterpreterVsGolden, Float32LogitsMatchTheReferenceConversationByConversation) {
  absl::StatusOr<GoldenFile> g = GoldenFile::Load("tests/golden/" + GetParam() + ".gold");
  ASSERT_TRUE(g.ok()) << g.status();
  runtime::ParamStore store = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(g->config_json));
  for (runtime::Param& p : store.params()) {
    const std::vector<float>& init = g->tensors.at("init/" + p.name).f32;
    std::copy(init.begin(), init.end(), p.data());
  }
  runtime::InterpreterOptions options;
  options.num_threads = 2;
  auto evaluator = trainer::LogitsEvaluator::Create(&store, options);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  const GoldenTensor& golden = g->tensors.at("logits");  // [B, T, V]
  const int64_t B = golden.shape[0], T = golden.shape[1], V = golden.shape[2];
  const std::vector<int32_t>& inputs = g->tensors.at("inputs").i32;  // micro-batch 0 comes first
  const std::vector<int32_t>& segments = g->tensors.at("segment_ids").i32;
  double worst = 0;
  int64_t compared = 0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t start = 0, end = 0; start < T; start = end) {
      for (end = start + 1; end < T && segments[b * T + end] == segments[b * T + start];) ++end;
      const std::vector<int32_t> ids(inputs.begin() + b * T + start, inputs.begin() + b * T + end);
      absl::StatusOr<Tensor> logits = (*evaluator)->Logits(ids);  // [end - start, V]
      ASSERT_TRUE(logits.ok()) << logits.status();
      for (int64_t i = 0; i < (end - start) * V; ++i) {
        const double err = std::abs(double(logits->data<float>()[i]) - golden.f32[(b * T + start) * V + i]);
        worst = std::max(worst, err);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, B * T * V);
  EXPECT_LT(worst, kLogitTolerance) << "the largest |logit - reference|";
  std::cout << GetParam() << ": largest |logit - reference| " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, InterpreterVsGolden, ::testing::Values("padded", "packed", "accum2"));

}  // namespace
}  // namespace gpt_sft::tests
