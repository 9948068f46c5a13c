// The interpreted bf16 step (--dtype=bfloat16: gpt-autocast-bf16's rounding, builder ->
// gpt-autodiff -> Interpreter through trainer/eager_step) against bf16.gold, our PyTorch
// statement of nanochat's autocast (reference_gpt_bf16.py), on the padded case: the logits
// (trainer/eval/logits_evaluator), the loss and every parameter's gradient at the initial
// weights (padded.gold's init/*).
//
// Tolerances, and why. The forward rounds the same values at the same points as PyTorch (rotary
// and softcap included, through their round_bf16 attributes; attention's probabilities before
// P V, as flash attention does and the golden states), so the logits are bf16 values equal
// to the golden's but where a last-bit difference of f32 arithmetic (tanh, cos, exp, sums in
// another order) moves a value across a rounding boundary, and each such move in a hidden
// layer moves many logits: every later position of its row, since attention reads it. The
// probabilities add 4160 rounding points per layer, so such moves are no longer rare: fed the
// golden's own q, k, v, our attention gives its bf16 outputs in all but 1 of 16384 elements
// (layer 0; none in layer 1), and that one moves the rest of its row. Measured (oneDNN AMX
// or sgemm matmuls, AVX512_BF16 or fp32 tile products: the same figures): 73.2% of the
// logits bitwise equal, norm-wise error 2.7e-3 (f32 logits: 7.1e-3), so at least 65% equal
// and error at most 4e-3. The loss within 5e-5 (measured 3.0e-5; the f32 step's happens to
// land at 1.6e-5 of this golden, so the two are not compared). The backward differs from
// PyTorch's: there every intermediate cotangent is a bf16 tensor and cotangents of a value
// used twice are summed in bf16; here cotangents are rounded at the rounding points only
// (gpt.round_bf16's VJP, the bf16 rotary and softcap, attention's dS), f32 in between. So
// each gradient within 1e-2 norm-wise (measured at most 7.7e-3), and, summed over the
// parameters, well closer to the golden than the f32 step's (measured 0.076 against 0.140).
#include <algorithm>
#include <cmath>
#include <cstring>
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

constexpr double kLossTolerance = 5e-5, kGradTolerance = 1e-2;
constexpr double kEqualLogitsFraction = 0.65, kLogitTolerance = 4e-3;

bool IsBf16Value(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return (bits & 0xffffu) == 0;
}

// ||a - b|| / ||b|| over the whole tensor.
double RelativeError(const float* a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) num += double(a[i] - b[i]) * (a[i] - b[i]), den += double(b[i]) * b[i];
  return std::sqrt(num / std::max(den, 1e-30));
}

Tensor Rows(const GoldenFile& g, const std::string& name) {
  const GoldenTensor& t = g.tensors.at(name);
  return Tensor::FromVector<int32_t>({t.shape[1], t.shape[2]}, t.i32);
}

int64_t CountGradients(const GoldenFile& g) {
  return std::count_if(g.tensors.begin(), g.tensors.end(), [](const auto& t) { return t.first.rfind("grad/", 0) == 0; });
}

struct StepResult {
  double loss = 0;
  std::vector<double> grad_errors;  // per parameter, against the golden gradient
};

/// One micro-step of `dtype` from padded.gold's initial weights on bf16.gold's batch.
StepResult RunStep(compiler::ElementType dtype, const GoldenFile& golden, const GoldenFile& init) {
  StepResult r;
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromJson(golden.config_json);
  config.batch_size = golden.tensors.at("inputs").shape[1];
  config.seq_len = golden.tensors.at("inputs").shape[2];
  config.dtype = dtype;
  runtime::ParamStore store = *runtime::ParamStore::Create(config.model);
  for (runtime::Param& p : store.params()) {
    const std::vector<float>& values = init.tensors.at("init/" + p.name).f32;
    EXPECT_EQ(static_cast<int64_t>(values.size()), p.numel()) << p.name;
    std::copy(values.begin(), values.end(), p.data());
  }
  runtime::InterpreterOptions options;
  options.num_threads = 2;
  absl::StatusOr<std::unique_ptr<trainer::EagerStep>> step = trainer::EagerStep::Create(config, &store, options);
  EXPECT_TRUE(step.ok()) << step.status();
  if (!step.ok()) return r;
  absl::StatusOr<double> loss = (*step)->MicroStep(trainer::StepBatch{Rows(golden, "inputs"), Rows(golden, "targets")});
  EXPECT_TRUE(loss.ok()) << loss.status();
  r.loss = loss.ok() ? *loss : NAN;
  for (size_t i = 0; i < store.params().size(); ++i) {
    r.grad_errors.push_back(
        RelativeError((*step)->grad(i).data<float>(), golden.tensors.at("grad/" + store.params()[i].name).f32));
  }
  return r;
}

TEST(InterpreterBf16VsGolden, LossAndGradientsOfNanochatsAutocast) {
  absl::StatusOr<GoldenFile> golden = GoldenFile::Load("tests/golden/bf16.gold");
  ASSERT_TRUE(golden.ok()) << golden.status();
  absl::StatusOr<GoldenFile> init = GoldenFile::Load("tests/golden/padded.gold");
  ASSERT_TRUE(init.ok()) << init.status();
  // bf16.gold stores no weights of its own: it must be the padded case's batch.
  for (const char* name : {"inputs", "targets", "segment_ids", "positions"}) {
    EXPECT_EQ(golden->tensors.at(name).i32, init->tensors.at(name).i32) << name;
  }
  const nlohmann::json header = nlohmann::json::parse(golden->header_json);
  const double golden_loss = header.at("loss_bf16").get<double>();

  const StepResult bf16 = RunStep(compiler::ElementType::kBF16, *golden, *init);
  const StepResult f32 = RunStep(compiler::ElementType::kF32, *golden, *init);
  const int64_t golden_grads = CountGradients(*golden);
  ASSERT_EQ(static_cast<int64_t>(bf16.grad_errors.size()), golden_grads) << "one gradient per parameter";

  const double loss_error = std::abs(bf16.loss - golden_loss) / golden_loss;
  EXPECT_LT(loss_error, kLossTolerance) << "bf16 loss " << bf16.loss << ", golden " << golden_loss;
  double worst = 0, bf16_total = 0, f32_total = 0;
  runtime::ParamStore names = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(golden->config_json));
  for (size_t i = 0; i < bf16.grad_errors.size(); ++i) {
    EXPECT_LT(bf16.grad_errors[i], kGradTolerance) << "grad/" << names.params()[i].name;
    std::cout << "grad/" << names.params()[i].name << ": bf16 " << bf16.grad_errors[i] << ", f32 "
              << f32.grad_errors[i] << "\n";
    worst = std::max(worst, bf16.grad_errors[i]);
    bf16_total += bf16.grad_errors[i];
    f32_total += f32.grad_errors[i];
  }
  EXPECT_LT(1.5 * bf16_total, f32_total) << "the f32 step is about as close to the bf16 golden as the bf16 step";
  std::cout << "loss: bf16 " << bf16.loss << ", f32 " << f32.loss << ", golden " << golden_loss << " (relative error "
            << loss_error << ", f32's " << std::abs(f32.loss - golden_loss) / golden_loss << ")\n"
            << "gradients: worst relative error " << worst << "; summed over the parameters bf16 " << bf16_total
            << ", f32 " << f32_total << "\n";
}

/// Our logits [B*T*V] for `dtype` from padded.gold's weights on the golden batch, row by row.
std::vector<float> OurLogits(compiler::ElementType dtype, const GoldenFile& golden, const GoldenFile& init) {
  runtime::ParamStore store = *runtime::ParamStore::Create(*compiler::ModelConfig::FromJson(golden.config_json));
  for (runtime::Param& p : store.params()) {
    const std::vector<float>& values = init.tensors.at("init/" + p.name).f32;
    std::copy(values.begin(), values.end(), p.data());
  }
  auto evaluator = trainer::LogitsEvaluator::Create(&store, {}, dtype);
  EXPECT_TRUE(evaluator.ok()) << evaluator.status();
  if (!evaluator.ok()) return {};
  const GoldenTensor& inputs = golden.tensors.at("inputs");
  const int64_t B = inputs.shape[1], T = inputs.shape[2];
  std::vector<float> all;
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int32_t> row(inputs.i32.begin() + b * T, inputs.i32.begin() + (b + 1) * T);
    absl::StatusOr<Tensor> logits = (*evaluator)->Logits(row);  // [T, V]
    EXPECT_TRUE(logits.ok()) << logits.status();
    if (!logits.ok()) return {};
    all.insert(all.end(), logits->data<float>(), logits->data<float>() + logits->numel());
  }
  return all;
}

struct LogitStats {
  double equal_fraction = 0;  // bitwise equal to the golden's
  double error = 0;           // ||ours - golden|| / ||golden||
  int64_t not_bf16 = 0;       // elements that are not bf16 values
};

LogitStats Compare(const std::vector<float>& ours, const std::vector<float>& golden) {
  LogitStats s;
  int64_t equal = 0;
  for (size_t i = 0; i < golden.size(); ++i) {
    equal += ours[i] == golden[i];
    s.not_bf16 += !IsBf16Value(ours[i]);
  }
  s.equal_fraction = double(equal) / double(golden.size());
  s.error = RelativeError(ours.data(), golden);
  return s;
}

TEST(InterpreterBf16VsGolden, LogitsAreTheGoldensBf16Values) {
  absl::StatusOr<GoldenFile> golden = GoldenFile::Load("tests/golden/bf16.gold");
  ASSERT_TRUE(golden.ok()) << golden.status();
  absl::StatusOr<GoldenFile> init = GoldenFile::Load("tests/golden/padded.gold");
  ASSERT_TRUE(init.ok()) << init.status();
  const std::vector<float>& expected = golden->tensors.at("logits").f32;  // [B, T, V]
  const std::vector<float> bf16 = OurLogits(compiler::ElementType::kBF16, *golden, *init);
  const std::vector<float> f32 = OurLogits(compiler::ElementType::kF32, *golden, *init);
  ASSERT_EQ(bf16.size(), expected.size());
  ASSERT_EQ(f32.size(), expected.size());
  const LogitStats ours = Compare(bf16, expected), plain = Compare(f32, expected);
  EXPECT_EQ(ours.not_bf16, 0) << "logits that are not bf16 values";
  EXPECT_GE(ours.equal_fraction, kEqualLogitsFraction);
  EXPECT_LE(ours.error, kLogitTolerance);
  EXPECT_GT(plain.error, kLogitTolerance) << "f32 logits as close to the bf16 golden as bf16's";
  std::cout << "logits vs the golden: bf16 " << ours.equal_fraction << " bitwise equal, error " << ours.error
            << "; f32 " << plain.equal_fraction << " equal, error " << plain.error << "\n";
}

}  // namespace
}  // namespace gpt_sft::tests
