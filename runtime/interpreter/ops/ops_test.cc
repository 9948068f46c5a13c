// Every op family run through the interpreter on small IR, against the kernels called
// directly (the interpreter must add nothing but shapes, checks and buffers).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/ops/dense_attention.h"
#include "runtime/interpreter/test_module.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/kernels/cpu/round_bf16.h"

namespace gpt_sft::runtime {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
using testing::TestModule;

std::vector<float> RandomF(size_t n, uint32_t seed, double scale = 1.0) {
  std::vector<double> d = k::testing::Random(n, seed, scale);
  return std::vector<float>(d.begin(), d.end());
}

Tensor RandomTensor(Shape shape, uint32_t seed, double scale = 1.0) {
  return Tensor::FromVector<float>(shape, RandomF(NumElements(shape), seed, scale));
}

/// Parses `ir`, runs @f on `args`, expects success.
std::vector<Tensor> RunF(const std::string& ir, std::vector<Tensor> args, const std::string& fn = "f") {
  auto module = TestModule::Parse(ir);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  auto interpreter = (*module)->NewInterpreter();
  auto results = interpreter->Run(fn, std::move(args));
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? *results : std::vector<Tensor>{};
}

absl::Status RunStatus(const std::string& ir, std::vector<Tensor> args) {
  auto module = TestModule::Parse(ir);
  if (!module.ok()) return module.status();
  return (*module)->NewInterpreter()->Run("f", std::move(args)).status();
}

void ExpectEq(const Tensor& t, const std::vector<float>& expected) {
  ASSERT_EQ(t.dtype(), DType::kF32);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size()));
  EXPECT_EQ(t.ToVector<float>(), expected);
}

// --- matmul --------------------------------------------------------------------------------

TEST(MatmulOps, MatmulWithDynamicLeadingDims) {
  const std::string ir = R"(
    func.func @f(%x: tensor<?x?x8xf32>, %w: tensor<5x8xf32>) -> tensor<?x?x5xf32> {
      %y = gpt.matmul %x, %w : tensor<?x?x8xf32>, tensor<5x8xf32>
      return %y : tensor<?x?x5xf32>
    })";
  for (int64_t t : {3, 7}) {
    Tensor x = RandomTensor({2, t, 8}, 1), w = RandomTensor({5, 8}, 2);
    std::vector<float> expected(2 * t * 5);
    k::Matmul(x.data<float>(), w.data<float>(), expected.data(), 2 * t, 5, 8);
    auto results = RunF(ir, {x, w});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].shape(), (Shape{2, t, 5}));
    ExpectEq(results[0], expected);
  }
}

TEST(MatmulOps, WeightGrad) {
  const std::string ir = R"(
    func.func @f(%dy: tensor<2x3x5xf32>, %x: tensor<2x3x8xf32>) -> tensor<5x8xf32> {
      %dw = gpt.matmul_weight_grad %dy, %x : tensor<2x3x5xf32>, tensor<2x3x8xf32>
      return %dw : tensor<5x8xf32>
    })";
  Tensor dy = RandomTensor({2, 3, 5}, 3), x = RandomTensor({2, 3, 8}, 4);
  std::vector<float> expected(40);
  k::MatmulGradWeight(dy.data<float>(), x.data<float>(), expected.data(), 6, 5, 8, false);
  ExpectEq(RunF(ir, {dy, x})[0], expected);
}

TEST(MatmulOps, ContractionMismatchNamesTheOpAndShapes) {
  const std::string ir = R"(
    func.func @f(%x: tensor<2x?xf32>, %w: tensor<5x8xf32>) -> tensor<2x5xf32> {
      %y = gpt.matmul %x, %w : tensor<2x?xf32>, tensor<5x8xf32>
      return %y : tensor<2x5xf32>
    })";
  absl::Status s = RunStatus(ir, {RandomTensor({2, 7}, 1), RandomTensor({5, 8}, 2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("gpt.matmul at"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[2,7] f32"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[5,8] f32"), std::string::npos) << s;
}

// --- elementwise ---------------------------------------------------------------------------

TEST(ElementwiseOps, AllSixAgainstTheKernels) {
  const std::string ir = R"(
    func.func @f(%a: tensor<3x?xf32>, %b: tensor<3x?xf32>)
        -> (tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>) {
      %add = gpt.add %a, %b : tensor<3x?xf32>, tensor<3x?xf32>
      %mul = gpt.mul %a, %b : tensor<3x?xf32>, tensor<3x?xf32>
      %rs = gpt.relu_square %a : tensor<3x?xf32>
      %rsg = gpt.relu_square_grad %a, %b : tensor<3x?xf32>, tensor<3x?xf32>
      %sc = gpt.softcap %a {cap = 2.0 : f64} : tensor<3x?xf32>
      %scg = gpt.softcap_grad %sc, %b {cap = 2.0 : f64} : tensor<3x?xf32>, tensor<3x?xf32>
      return %add, %mul, %rs, %rsg, %sc, %scg
          : tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>
    })";
  const int64_t n = 3 * 11;
  Tensor a = RandomTensor({3, 11}, 5, 3.0), b = RandomTensor({3, 11}, 6);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  std::vector<std::vector<float>> expected(6, std::vector<float>(n));
  k::Add(pa, pb, expected[0].data(), n);
  k::Mul(pa, pb, expected[1].data(), n);
  k::ReluSquare(pa, expected[2].data(), n);
  k::ReluSquareGrad(pa, pb, expected[3].data(), n);
  k::Softcap(pa, expected[4].data(), n, 2.0f);
  k::SoftcapGrad(expected[4].data(), pb, expected[5].data(), n, 2.0f);
  auto results = RunF(ir, {a, b});
  ASSERT_EQ(results.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    ExpectEq(results[i], expected[i]);
  }
}

TEST(ElementwiseOps, ShapeMismatchAtRunTime) {
  const std::string ir = R"(
    func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
      %y = gpt.add %a, %b : tensor<?xf32>, tensor<?xf32>
      return %y : tensor<?xf32>
    })";
  absl::Status s = RunStatus(ir, {RandomTensor({3}, 1), RandomTensor({4}, 2)});
  EXPECT_NE(s.message().find("gpt.add"), std::string::npos) << s;
  EXPECT_NE(s.message().find("[3] f32 and [4] f32"), std::string::npos) << s;
}

TEST(ElementwiseOps, Float64) {
  const std::string ir = R"(
    func.func @f(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
      %y = gpt.mul %a, %b : tensor<4xf64>, tensor<4xf64>
      return %y : tensor<4xf64>
    })";
  auto results =
      RunF(ir, {Tensor::FromVector<double>({4}, {1, 2, 3, 4}), Tensor::FromVector<double>({4}, {2, 2, 2, 0.5})});
  EXPECT_EQ(results[0].ToVector<double>(), (std::vector<double>{2, 4, 6, 2}));
}

TEST(ElementwiseOps, RoundBf16OfAnArgumentAndInPlaceOfAnIntermediate) {
  // %r rounds an argument (a copy: the caller keeps %a); %s rounds %m, which dies there (in place).
  const std::string ir = R"(
    func.func @f(%a: tensor<5x?xf32>, %b: tensor<5x?xf32>) -> (tensor<5x?xf32>, tensor<5x?xf32>) {
      %r = gpt.round_bf16 %a : tensor<5x?xf32>
      %m = gpt.mul %a, %b : tensor<5x?xf32>, tensor<5x?xf32>
      %s = gpt.round_bf16 %m : tensor<5x?xf32>
      return %r, %s : tensor<5x?xf32>, tensor<5x?xf32>
    })";
  const int64_t n = 5 * 7;
  Tensor a = RandomTensor({5, 7}, 11, 3.0), b = RandomTensor({5, 7}, 12);
  const std::vector<float> a_before = a.ToVector<float>();
  std::vector<float> product(n), expected_r(n), expected_s(n);
  k::Mul(a.data<float>(), b.data<float>(), product.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    expected_r[i] = k::RoundToBf16(a_before[i]);
    expected_s[i] = k::RoundToBf16(product[i]);
  }
  ASSERT_NE(expected_r, a_before) << "random values that are already bf16 would test nothing";
  auto results = RunF(ir, {a, b});
  ASSERT_EQ(results.size(), 2u);
  ExpectEq(results[0], expected_r);
  ExpectEq(results[1], expected_s);
  EXPECT_EQ(a.ToVector<float>(), a_before);
}

// --- norm ----------------------------------------------------------------------------------

TEST(NormOps, RmsNormAndGradWithEps) {
  const std::string ir = R"(
    func.func @f(%x: tensor<2x3x16xf32>, %dy: tensor<2x3x16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
      %y = gpt.rms_norm %x {eps = 1.0e-03 : f64} : tensor<2x3x16xf32>
      %dx = gpt.rms_norm_grad %x, %dy {eps = 1.0e-03 : f64} : tensor<2x3x16xf32>, tensor<2x3x16xf32>
      return %y, %dx : tensor<2x3x16xf32>, tensor<2x3x16xf32>
    })";
  Tensor x = RandomTensor({2, 3, 16}, 7), dy = RandomTensor({2, 3, 16}, 8);
  std::vector<float> y(96), dx(96);
  k::RmsNorm(x.data<float>(), y.data(), 6, 16, 1e-3f);
  k::RmsNormGrad(x.data<float>(), dy.data<float>(), dx.data(), 6, 16, 1e-3f);
  auto results = RunF(ir, {x, dy});
  ExpectEq(results[0], y);
  ExpectEq(results[1], dx);
}

// --- rotary --------------------------------------------------------------------------------

TEST(RotaryOps, WithAndWithoutPositions) {
  const std::string ir = R"(
    func.func @f(%x: tensor<2x5x3x8xf32>, %pos: tensor<2x5xi32>)
        -> (tensor<2x5x3x8xf32>, tensor<2x5x3x8xf32>, tensor<2x5x3x8xf32>) {
      %a = gpt.rotary %x, positions %pos : tensor<2x5x3x8xf32>, tensor<2x5xi32>
      %b = gpt.rotary %x {base = 100.0 : f64} : tensor<2x5x3x8xf32>
      %c = gpt.rotary_grad %x, positions %pos : tensor<2x5x3x8xf32>, tensor<2x5xi32>
      return %a, %b, %c : tensor<2x5x3x8xf32>, tensor<2x5x3x8xf32>, tensor<2x5x3x8xf32>
    })";
  Tensor x = RandomTensor({2, 5, 3, 8}, 9);
  std::vector<int32_t> pos = {0, 1, 2, 0, 1, 3, 4, 5, 6, 7};
  std::vector<int32_t> iota = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
  const k::RotaryShape s{2, 5, 3, 8};
  std::vector<float> a(240), b(240), c(240);
  k::Rotary(x.data<float>(), pos.data(), a.data(), s);
  k::Rotary(x.data<float>(), iota.data(), b.data(), s, 100.0);
  k::RotaryGrad(x.data<float>(), pos.data(), c.data(), s);
  auto results = RunF(ir, {x, Tensor::FromVector<int32_t>({2, 5}, pos)});
  ExpectEq(results[0], a);
  ExpectEq(results[1], b);
  ExpectEq(results[2], c);
}

// --- attention -----------------------------------------------------------------------------

constexpr char kAttentionIr[] = R"(
    func.func @f(%q: tensor<2x?x4x8xf32>, %k: tensor<2x?x2x8xf32>, %v: tensor<2x?x2x8xf32>,
                 %seg: tensor<2x?xi32>, %do: tensor<2x?x4x8xf32>)
        -> (tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>) {
      %o = gpt.attention %q, %k, %v, segments %seg
          : tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?xi32>
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg
          : tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x4x8xf32>,
            tensor<2x?x4x8xf32>, tensor<2x?xi32>
      return %o, %dq, %dk, %dv : tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>
    }
    func.func @grad_only(%q: tensor<2x?x4x8xf32>, %k: tensor<2x?x2x8xf32>, %v: tensor<2x?x2x8xf32>,
                         %seg: tensor<2x?xi32>, %o: tensor<2x?x4x8xf32>, %do: tensor<2x?x4x8xf32>)
        -> (tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>) {
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg
          : tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x4x8xf32>,
            tensor<2x?x4x8xf32>, tensor<2x?xi32>
      return %dq, %dk, %dv : tensor<2x?x4x8xf32>, tensor<2x?x2x8xf32>, tensor<2x?x2x8xf32>
    })";

struct AttentionCase {
  Tensor q, k, v, seg, dout;
  std::vector<float> out, lse, dq, dk, dv;
};

AttentionCase MakeAttentionCase(int64_t T) {
  AttentionCase c;
  c.q = RandomTensor({2, T, 4, 8}, 10);
  c.k = RandomTensor({2, T, 2, 8}, 11);
  c.v = RandomTensor({2, T, 2, 8}, 12);
  c.dout = RandomTensor({2, T, 4, 8}, 13);
  std::vector<int32_t> seg(2 * T);
  for (int64_t i = 0; i < 2 * T; ++i) seg[i] = static_cast<int32_t>((i % T) * 3 / T);  // three segments per row
  c.seg = Tensor::FromVector<int32_t>({2, T}, seg);
  const k::AttentionShape s{2, T, 4, 2, 8};
  c.out.resize(2 * T * 32);
  c.lse.resize(2 * 4 * T);
  c.dq.resize(2 * T * 32);
  c.dk.resize(2 * T * 16);
  c.dv.resize(2 * T * 16);
  k::Attention(c.q.data<float>(), c.k.data<float>(), c.v.data<float>(), seg.data(), s, c.out.data(), c.lse.data());
  k::AttentionGrad(c.q.data<float>(), c.k.data<float>(), c.v.data<float>(), seg.data(), s, c.out.data(),
                   c.lse.data(), c.dout.data<float>(), c.dq.data(), c.dk.data(), c.dv.data());
  return c;
}

TEST(AttentionOps, ForwardAndGradUseTheSavedLse) {
  AttentionCase c = MakeAttentionCase(9);
  auto results = RunF(kAttentionIr, {c.q, c.k, c.v, c.seg, c.dout});
  ASSERT_EQ(results.size(), 4u);
  ExpectEq(results[0], c.out);
  ExpectEq(results[1], c.dq);
  ExpectEq(results[2], c.dk);
  ExpectEq(results[3], c.dv);
}

TEST(AttentionOps, GradRecomputesTheForwardWhenOutIsAnArgument) {
  AttentionCase c = MakeAttentionCase(70);  // more than one kAttentionBlock
  Tensor out = Tensor::FromVector<float>({2, 70, 4, 8}, c.out);
  auto results = RunF(kAttentionIr, {c.q, c.k, c.v, c.seg, out, c.dout}, "grad_only");
  ASSERT_EQ(results.size(), 3u);
  ExpectEq(results[0], c.dq);
  ExpectEq(results[1], c.dk);
  ExpectEq(results[2], c.dv);
}

// Under bf16 autocast (the module attribute gpt-autocast-bf16 sets) q, k, v and dout are
// bf16 values: the ops run the *Bf16Inputs kernels, whose rounded probabilities make them
// differ from the f32 ones.
TEST(AttentionOps, UnderBf16AutocastRunTheBf16Kernels) {
  std::string ir = std::string("module attributes {gpt.autocast = \"bf16\"} {") + kAttentionIr + "}";
  const int64_t T = 70;
  AttentionCase c = MakeAttentionCase(T);
  for (Tensor* t : {&c.q, &c.k, &c.v, &c.dout}) k::RoundBf16(t->data<float>(), t->data<float>(), t->numel());
  const k::AttentionShape s{2, T, 4, 2, 8};
  std::vector<float> out(2 * T * 32), lse(2 * 4 * T), dq(2 * T * 32), dk(2 * T * 16), dv(2 * T * 16);
  const int32_t* seg = c.seg.data<int32_t>();
  k::AttentionBf16Inputs(c.q.data<float>(), c.k.data<float>(), c.v.data<float>(), seg, s, out.data(), lse.data());
  k::AttentionGradBf16Inputs(c.q.data<float>(), c.k.data<float>(), c.v.data<float>(), seg, s, out.data(),
                             lse.data(), c.dout.data<float>(), dq.data(), dk.data(), dv.data());
  auto results = RunF(ir, {c.q, c.k, c.v, c.seg, c.dout});
  ASSERT_EQ(results.size(), 4u);
  ExpectEq(results[0], out);
  ExpectEq(results[1], dq);
  ExpectEq(results[2], dk);
  ExpectEq(results[3], dv);
  std::vector<float> f32_out(out.size()), f32_lse(lse.size());
  k::Attention(c.q.data<float>(), c.k.data<float>(), c.v.data<float>(), seg, s, f32_out.data(), f32_lse.data());
  EXPECT_NE(f32_out, out) << "the f32 kernel gives the bf16 kernel's bits: the test cannot tell them apart";
}

TEST(AttentionOps, ExplicitScaleEqualsScaledQueries) {
  const std::string ir = R"(
    func.func @f(%q: tensor<1x6x2x4xf32>, %k: tensor<1x6x2x4xf32>, %v: tensor<1x6x2x4xf32>) -> tensor<1x6x2x4xf32> {
      %o = gpt.attention %q, %k, %v {scale = 1.0 : f64}
          : tensor<1x6x2x4xf32>, tensor<1x6x2x4xf32>, tensor<1x6x2x4xf32>
      return %o : tensor<1x6x2x4xf32>
    })";
  Tensor q = RandomTensor({1, 6, 2, 4}, 14), kk = RandomTensor({1, 6, 2, 4}, 15), v = RandomTensor({1, 6, 2, 4}, 16);
  std::vector<float> q2 = q.ToVector<float>(), out(48), lse(12);
  for (float& x : q2) x *= 2.0f;  // scale 1 = the kernel's 1/sqrt(4) on 2q
  k::Attention(q2.data(), kk.data<float>(), v.data<float>(), nullptr, {1, 6, 2, 2, 4}, out.data(), lse.data());
  ExpectEq(RunF(ir, {q, kk, v})[0], out);
}

TEST(AttentionOps, NonCausalRunsTheDenseDefinition) {
  const std::string ir = R"(
    func.func @f(%q: tensor<1x6x2x4xf32>, %k: tensor<1x6x1x4xf32>, %do: tensor<1x6x2x4xf32>)
        -> (tensor<1x6x2x4xf32>, tensor<1x6x2x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x1x4xf32>) {
      %o = gpt.attention %q, %k, %k {causal = false}
          : tensor<1x6x2x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x1x4xf32>
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %k, %o, %do {causal = false}
          : tensor<1x6x2x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x2x4xf32>, tensor<1x6x2x4xf32>
      return %o, %dq, %dk, %dv : tensor<1x6x2x4xf32>, tensor<1x6x2x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x1x4xf32>
    })";
  Tensor q = RandomTensor({1, 6, 2, 4}, 1), kk = RandomTensor({1, 6, 1, 4}, 2), dout = RandomTensor({1, 6, 2, 4}, 3);
  const k::AttentionShape s{1, 6, 2, 1, 4};
  std::vector<float> out(48), lse(12), dq(48), dk(24), dv(24);
  interp::DenseAttention(q.data<float>(), kk.data<float>(), kk.data<float>(), nullptr, s, false, 0.5, out.data(),
                         lse.data());
  interp::DenseAttentionGrad(q.data<float>(), kk.data<float>(), kk.data<float>(), nullptr, s, false, 0.5,
                             out.data(), lse.data(), dout.data<float>(), dq.data(), dk.data(), dv.data());
  auto results = RunF(ir, {q, kk, dout});
  ASSERT_EQ(results.size(), 4u);
  ExpectEq(results[0], out);
  ExpectEq(results[1], dq);
  ExpectEq(results[2], dk);
  ExpectEq(results[3], dv);
  // Non-causal: the first query sees the last key, so its output is not v[0].
  EXPECT_NE(results[0].data<float>()[0], kk.data<float>()[0]);
}

// --- embedding -----------------------------------------------------------------------------

TEST(EmbeddingOps, GatherAndScatterAdd) {
  const std::string ir = R"(
    func.func @f(%table: tensor<6x4xf32>, %ids: tensor<2x3xi32>, %dy: tensor<2x3x4xf32>)
        -> (tensor<2x3x4xf32>, tensor<6x4xf32>) {
      %x = gpt.embedding %table[%ids] : tensor<6x4xf32>, tensor<2x3xi32>
      %dt = gpt.embedding_grad %ids, %dy, vocab 6 : tensor<2x3xi32>, tensor<2x3x4xf32>
      return %x, %dt : tensor<2x3x4xf32>, tensor<6x4xf32>
    })";
  Tensor table = RandomTensor({6, 4}, 17), dy = RandomTensor({2, 3, 4}, 18);
  std::vector<int32_t> ids = {5, 0, 2, 2, 2, 1};
  std::vector<float> x(24), dt(24, 0.0f);
  k::Embedding(table.data<float>(), ids.data(), x.data(), 6, 4);
  k::EmbeddingGrad(dy.data<float>(), ids.data(), dt.data(), 6, 4);
  auto results = RunF(ir, {table, Tensor::FromVector<int32_t>({2, 3}, ids), dy});
  ExpectEq(results[0], x);
  ExpectEq(results[1], dt);
}

TEST(EmbeddingOps, IdOutOfRangeIsAnError) {
  const std::string ir = R"(
    func.func @f(%table: tensor<6x4xf32>, %ids: tensor<3xi32>) -> tensor<3x4xf32> {
      %x = gpt.embedding %table[%ids] : tensor<6x4xf32>, tensor<3xi32>
      return %x : tensor<3x4xf32>
    })";
  absl::Status s = RunStatus(ir, {RandomTensor({6, 4}, 1), Tensor::FromVector<int32_t>({3}, {0, 6, 1})});
  EXPECT_NE(s.message().find("id 6 at flat index 1"), std::string::npos) << s;
}

// --- loss ----------------------------------------------------------------------------------

TEST(LossOps, CrossEntropyAndGrad) {
  const std::string ir = R"(
    func.func @f(%logits: tensor<5x7xf32>, %t: tensor<5xi32>, %dloss: tensor<f32>) -> (tensor<f32>, tensor<5x7xf32>) {
      %loss = gpt.cross_entropy %logits, %t : tensor<5x7xf32>, tensor<5xi32>
      %dl = gpt.cross_entropy_grad %logits, %t, %dloss : tensor<5x7xf32>, tensor<5xi32>, tensor<f32>
      return %loss, %dl : tensor<f32>, tensor<5x7xf32>
    })";
  Tensor logits = RandomTensor({5, 7}, 19, 3.0);
  std::vector<int32_t> t = {3, -1, 0, 6, -1};
  std::vector<float> dl(35);
  const double loss = k::CrossEntropy(logits.data<float>(), t.data(), 5, 7).loss;
  k::CrossEntropyGrad(logits.data<float>(), t.data(), 5, 7, 0.25, dl.data());
  auto results = RunF(ir, {logits, Tensor::FromVector<int32_t>({5}, t), Tensor::Scalar<float>(0.25f)});
  ASSERT_EQ(results[0].rank(), 0);
  EXPECT_EQ(results[0].ToVector<float>()[0], static_cast<float>(loss));
  ExpectEq(results[1], dl);
}

TEST(LossOps, AnotherIgnoreIndexActsLikeMinusOne) {
  const std::string ir = R"(
    func.func @f(%logits: tensor<4x5xf32>, %t: tensor<4xi32>) -> tensor<f32> {
      %loss = gpt.cross_entropy %logits, %t {ignore_index = 9 : i64} : tensor<4x5xf32>, tensor<4xi32>
      return %loss : tensor<f32>
    })";
  Tensor logits = RandomTensor({4, 5}, 20);
  std::vector<int32_t> kernel_targets = {1, -1, 4, -1};
  const double loss = k::CrossEntropy(logits.data<float>(), kernel_targets.data(), 4, 5).loss;
  auto results = RunF(ir, {logits, Tensor::FromVector<int32_t>({4}, {1, 9, 4, 9})});
  EXPECT_EQ(results[0].ToVector<float>()[0], static_cast<float>(loss));
}

// --- shape ---------------------------------------------------------------------------------

TEST(ShapeOps, ReshapeInfersMinusOneAndSharesTheBuffer) {
  const std::string ir = R"(
    func.func @f(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
      %y = gpt.reshape %x to [-1, 3] : tensor<?x6xf32>
      return %y : tensor<?x3xf32>
    })";
  Tensor x = RandomTensor({4, 6}, 21);
  auto results = RunF(ir, {x});
  EXPECT_EQ(results[0].shape(), (Shape{8, 3}));
  EXPECT_EQ(results[0].raw_data(), x.raw_data());
}

TEST(ShapeOps, ReshapeOfIdsFlattensTargets) {
  const std::string ir = R"(
    func.func @f(%t: tensor<2x?xi32>) -> tensor<?xi32> {
      %y = gpt.reshape %t to [-1] : tensor<2x?xi32>
      return %y : tensor<?xi32>
    })";
  auto results = RunF(ir, {Tensor::FromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, -1})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].ShapeString(), "[6] i32");
  EXPECT_EQ(results[0].ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, -1}));
}

TEST(ShapeOps, ReshapeOfTheWrongCountIsAnError) {
  const std::string ir = R"(
    func.func @f(%x: tensor<?x6xf32>) -> tensor<4x5xf32> {
      %y = gpt.reshape %x to [4, 5] : tensor<?x6xf32>
      return %y : tensor<4x5xf32>
    })";
  absl::Status s = RunStatus(ir, {RandomTensor({3, 6}, 1)});
  EXPECT_NE(s.message().find("cannot reshape [3,6] f32 (18 elements) to [4,5]"), std::string::npos) << s;
}

/// out[i...] = x[perm...] by the definition, for any rank.
std::vector<float> NaiveTranspose(const std::vector<float>& x, const Shape& dims, const std::vector<int64_t>& perm) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  Shape out_dims(rank), stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) stride[i] = stride[i + 1] * dims[i + 1];
  for (int64_t i = 0; i < rank; ++i) out_dims[i] = dims[perm[i]];
  std::vector<float> out(x.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i) src += index[i] * stride[perm[i]];
    out[o] = x[src];
    for (int64_t i = rank - 1; i >= 0 && ++index[i] == out_dims[i]; --i) index[i] = 0;
  }
  return out;
}

TEST(ShapeOps, TransposeMatchesTheDefinition) {
  const std::string ir = R"(
    func.func @f(%w: tensor<37x70xf32>, %x: tensor<3x4x5x6xf32>)
        -> (tensor<70x37xf32>, tensor<6x3x5x4xf32>, tensor<4x3x5x6xf32>) {
      %a = gpt.transpose %w [1, 0] : tensor<37x70xf32>
      %b = gpt.transpose %x [3, 0, 2, 1] : tensor<3x4x5x6xf32>
      %c = gpt.transpose %x [1, 0, 2, 3] : tensor<3x4x5x6xf32>
      return %a, %b, %c : tensor<70x37xf32>, tensor<6x3x5x4xf32>, tensor<4x3x5x6xf32>
    })";
  Tensor w = RandomTensor({37, 70}, 22), x = RandomTensor({3, 4, 5, 6}, 23);
  auto results = RunF(ir, {w, x});
  ASSERT_EQ(results.size(), 3u);
  ExpectEq(results[0], NaiveTranspose(w.ToVector<float>(), {37, 70}, {1, 0}));
  ExpectEq(results[1], NaiveTranspose(x.ToVector<float>(), {3, 4, 5, 6}, {3, 0, 2, 1}));
  ExpectEq(results[2], NaiveTranspose(x.ToVector<float>(), {3, 4, 5, 6}, {1, 0, 2, 3}));
}

// --- optimizers ----------------------------------------------------------------------------

TEST(OptimizerOps, AdamwReadsLrAndStepAtRunTime) {
  const std::string ir = R"(
    func.func @f(%p: tensor<3x4xf32>, %g: tensor<3x4xf32>, %m: tensor<3x4xf32>, %v: tensor<3x4xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
      %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t {weight_decay = 0.1 : f64}
          : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<f32>, tensor<f32>
      return %p1, %m1, %v1 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
    })";
  Tensor p = RandomTensor({3, 4}, 24), g = RandomTensor({3, 4}, 25), m = RandomTensor({3, 4}, 26, 0.1);
  std::vector<float> v_init = RandomF(12, 27);
  for (float& x : v_init) x = x * x;
  Tensor v = Tensor::FromVector<float>({3, 4}, v_init);
  std::vector<float> ep = p.ToVector<float>(), em = m.ToVector<float>(), ev = v.ToVector<float>();
  k::AdamWHyper hyper{0.01, 0.8, 0.95, 1e-10, 0.1, 3};
  k::AdamWUpdate(ep.data(), em.data(), ev.data(), g.data<float>(), 12, hyper);
  const std::vector<float> p_before = p.ToVector<float>();
  auto results = RunF(ir, {p, g, m, v, Tensor::Scalar<float>(0.01f), Tensor::Scalar<float>(3.0f)});
  ASSERT_EQ(results.size(), 3u);
  // lr is read from an f32 tensor: the kernel above saw 0.01 as a double.
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(results[0].data<float>()[i], ep[i], 1e-7) << i;
    EXPECT_EQ(results[1].data<float>()[i], em[i]) << i;
    EXPECT_EQ(results[2].data<float>()[i], ev[i]) << i;
  }
  // The caller kept p: value semantics, so p itself is unchanged.
  EXPECT_EQ(p.ToVector<float>(), p_before);
}

TEST(OptimizerOps, MuonAgainstTheKernel) {
  const std::string ir = R"(
    func.func @f(%p: tensor<6x4xf32>, %g: tensor<6x4xf32>, %b: tensor<6x4xf32>, %lr: tensor<f32>)
        -> (tensor<6x4xf32>, tensor<6x4xf32>) {
      %p1, %b1 = gpt.muon_update %p, %g, %b, %lr : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<f32>
      return %p1, %b1 : tensor<6x4xf32>, tensor<6x4xf32>
    })";
  Tensor p = RandomTensor({6, 4}, 28), g = RandomTensor({6, 4}, 29), b = RandomTensor({6, 4}, 30);
  std::vector<float> ep = p.ToVector<float>(), eb = b.ToVector<float>(), scratch(k::MuonScratchSize(6, 4));
  k::MuonUpdate(ep.data(), eb.data(), g.data<float>(), 6, 4, k::MuonHyper{0.5f, 0.95}, scratch.data());
  auto results = RunF(ir, {p, g, b, Tensor::Scalar<float>(0.5f)});
  ExpectEq(results[0], ep);
  ExpectEq(results[1], eb);
}

// --- constants -----------------------------------------------------------------------------

TEST(ConstantOps, SplatDenseRankZeroAndTypes) {
  const std::string ir = R"(
    func.func @f() -> (tensor<2x3xf32>, tensor<3xi32>, tensor<f64>, tensor<2xf64>) {
      %a = arith.constant dense<1.5> : tensor<2x3xf32>
      %b = arith.constant dense<[4, -1, 7]> : tensor<3xi32>
      %c = arith.constant dense<0.25> : tensor<f64>
      %d = arith.constant dense<[1.0, 2.0]> : tensor<2xf64>
      return %a, %b, %c, %d : tensor<2x3xf32>, tensor<3xi32>, tensor<f64>, tensor<2xf64>
    })";
  auto results = RunF(ir, {});
  ASSERT_EQ(results.size(), 4u);
  ExpectEq(results[0], std::vector<float>(6, 1.5f));
  EXPECT_EQ(results[1].ToVector<int32_t>(), (std::vector<int32_t>{4, -1, 7}));
  EXPECT_EQ(results[2].rank(), 0);
  EXPECT_EQ(results[2].ToVector<double>()[0], 0.25);
  EXPECT_EQ(results[3].ToVector<double>(), (std::vector<double>{1.0, 2.0}));
}

// --- collectives ---------------------------------------------------------------------------

TEST(CollectiveOps, IdentityOnASingleRank) {
  const std::string ir = R"(
    func.func @f(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
      %a = gpt.all_reduce avg %x over "dp" : tensor<4x3xf32>
      %b = gpt.reduce_scatter sum %x over "dp", size 1, dim 0 : tensor<4x3xf32>
      %c = gpt.all_gather %x over "dp", size 1, dim 1 : tensor<4x3xf32>
      return %a, %b, %c : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
    })";
  Tensor x = RandomTensor({4, 3}, 31);
  auto results = RunF(ir, {x});
  for (const Tensor& r : results) ExpectEq(r, x.ToVector<float>());
}

TEST(CollectiveOps, GroupSizeMustMatchTheWorld) {
  const std::string ir = R"(
    func.func @f(%x: tensor<8x3xf32>) -> tensor<1x3xf32> {
      %b = gpt.reduce_scatter sum %x over "dp", size 8, dim 0 : tensor<8x3xf32>
      return %b : tensor<1x3xf32>
    })";
  absl::Status s = RunStatus(ir, {RandomTensor({8, 3}, 1)});
  EXPECT_NE(s.message().find("group_size 8 but group \"dp\" has 1 ranks"), std::string::npos) << s;
}

/// A world whose collectives are counted, to show the injection point is used.
class CountingCollectives : public SingleRankCollectives {
 public:
  absl::StatusOr<Tensor> AllReduce(std::string_view group, Reduction reduction, const Tensor& x,
                                   CachingAllocator* allocator) override {
    ++calls;
    last_reduction = reduction;
    return SingleRankCollectives::AllReduce(group, reduction, x, allocator);
  }
  int calls = 0;
  Reduction last_reduction = Reduction::kSum;
};

TEST(CollectiveOps, InjectedCollectivesAreCalled) {
  auto module = TestModule::Parse(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = gpt.all_reduce max %x over "dp" : tensor<2xf32>
      return %a : tensor<2xf32>
    })");
  ASSERT_TRUE(module.ok()) << module.status();
  auto collectives = std::make_shared<CountingCollectives>();
  InterpreterOptions options;
  options.collectives = collectives;
  auto results = (*module)->NewInterpreter(options)->Run("f", {RandomTensor({2}, 1)});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(collectives->calls, 1);
  EXPECT_EQ(collectives->last_reduction, Reduction::kMax);
}

}  // namespace
}  // namespace gpt_sft::runtime
