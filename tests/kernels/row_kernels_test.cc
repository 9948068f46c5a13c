// The row generators (RMSNorm and its gradient, cross-entropy and its gradient with and
// without the softcap epilogue) and the layout, embedding and rotary generators on OpenCL
// against the interpreter. Tolerances, relative to the largest reference value: 1e-5 for
// one-pass ops (fp32 rounding of a few operations), 5e-5 for ops with row sums over up to a
// few hundred terms (tree order differs from the interpreter's sequential double sums).
#include <gtest/gtest.h>

#include <random>

#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

void ExpectClose(const std::string& ir, const KernelRun& run, double tolerance) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_LE(d.max_rel_error, tolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

Tensor Ints(runtime::Shape shape, int32_t lo, int32_t hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(lo, hi - 1);
  Tensor t = Tensor::Empty(runtime::DType::kI32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = pick(rng);
  return t;
}

TEST(RowKernelsTest, RmsNormAndItsGradient) {
  ExpectClose(R"(
    func.func @f(%x: tensor<6x7x96xf32> {gpt.name = "x"}, %dy: tensor<6x7x96xf32> {gpt.name = "dy"},
                 %q: tensor<2x5x3x16xf32> {gpt.name = "q"})
        -> (tensor<6x7x96xf32> {gpt.name = "y"}, tensor<6x7x96xf32> {gpt.name = "dx"},
            tensor<2x5x3x16xf32> {gpt.name = "qn"}) {
      %y = gpt.rms_norm %x : tensor<6x7x96xf32>
      %dx = gpt.rms_norm_grad %x, %dy : tensor<6x7x96xf32>, tensor<6x7x96xf32>
      %qn = gpt.rms_norm %q : tensor<2x5x3x16xf32>
      return %y, %dx, %qn : tensor<6x7x96xf32>, tensor<6x7x96xf32>, tensor<2x5x3x16xf32>
    })", {}, 5e-5);
}

TEST(RowKernelsTest, CrossEntropyWithIgnoredTargets) {
  KernelRun run;
  Tensor targets = Ints({40}, 0, 300, 3);
  for (int i : {0, 7, 8, 39}) targets.data<int32_t>()[i] = -1;
  run.inputs["targets"] = targets;
  ExpectClose(R"(
    func.func @f(%logits: tensor<40x300xf32> {gpt.name = "logits"}, %targets: tensor<40xi32> {gpt.name = "targets"},
                 %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<f32> {gpt.name = "loss"}, tensor<40x300xf32> {gpt.name = "dlogits"}) {
      %loss = gpt.cross_entropy %logits, %targets : tensor<40x300xf32>, tensor<40xi32>
      %g = gpt.cross_entropy_grad %logits, %targets, %dloss : tensor<40x300xf32>, tensor<40xi32>, tensor<f32>
      return %loss, %g : tensor<f32>, tensor<40x300xf32>
    })", run, 5e-5);
}

// The gradient's only reader is the softcap's gradient at the same logits: one fused kernel.
TEST(RowKernelsTest, CrossEntropyGradWithTheSoftcapEpilogue) {
  KernelRun run;
  run.inputs["targets"] = Ints({2, 20}, -1, 128, 5);
  ExpectClose(R"(
    func.func @f(%x: tensor<2x20x128xf32> {gpt.name = "x"}, %targets: tensor<2x20xi32> {gpt.name = "targets"})
        -> (tensor<f32> {gpt.name = "loss"}, tensor<2x20x128xf32> {gpt.name = "dx"}) {
      %seed = arith.constant dense<0.5> : tensor<f32>
      %y = gpt.softcap %x {cap = 2.0 : f64} : tensor<2x20x128xf32>
      %l = gpt.reshape %y to [-1, 128] : tensor<2x20x128xf32>
      %t = gpt.reshape %targets to [-1] : tensor<2x20xi32>
      %loss = gpt.cross_entropy %l, %t : tensor<40x128xf32>, tensor<40xi32>
      %g = gpt.cross_entropy_grad %l, %t, %seed : tensor<40x128xf32>, tensor<40xi32>, tensor<f32>
      %g3 = gpt.reshape %g to [2, 20, 128] : tensor<40x128xf32>
      %dx = gpt.softcap_grad %y, %g3 {cap = 2.0 : f64} : tensor<2x20x128xf32>, tensor<2x20x128xf32>
      return %loss, %dx : tensor<f32>, tensor<2x20x128xf32>
    })", run, 5e-5);
}

TEST(LayoutKernelsTest, Transposes) {
  ExpectClose(R"(
    func.func @f(%w: tensor<37x45xf32> {gpt.name = "w"}, %x: tensor<2x3x5x7xf32> {gpt.name = "x"})
        -> (tensor<45x37xf32> {gpt.name = "wt"}, tensor<5x2x7x3xf32> {gpt.name = "xp"}) {
      %wt = gpt.transpose %w [1, 0] : tensor<37x45xf32>
      %xp = gpt.transpose %x [2, 0, 3, 1] : tensor<2x3x5x7xf32>
      return %wt, %xp : tensor<45x37xf32>, tensor<5x2x7x3xf32>
    })", {}, 0);
}

TEST(EmbeddingKernelsTest, GatherAndScatterAddWithRepeatedIds) {
  KernelRun run;
  run.inputs["ids"] = Ints({3, 50}, 0, 20, 9);  // 150 tokens over 20 ids: every id repeats
  ExpectClose(R"(
    func.func @f(%table: tensor<20x24xf32> {gpt.name = "table"}, %ids: tensor<3x50xi32> {gpt.name = "ids"},
                 %dy: tensor<3x50x24xf32> {gpt.name = "dy"})
        -> (tensor<3x50x24xf32> {gpt.name = "out"}, tensor<20x24xf32> {gpt.name = "dtable"}) {
      %out = gpt.embedding %table[%ids] : tensor<20x24xf32>, tensor<3x50xi32>
      %dt = gpt.embedding_grad %ids, %dy, vocab 20 : tensor<3x50xi32>, tensor<3x50x24xf32>
      return %out, %dt : tensor<3x50x24xf32>, tensor<20x24xf32>
    })", run, 0);
}

TEST(RotaryKernelsTest, PackedPositionsAndTheGradient) {
  KernelRun run;
  // Two rows, each two conversations: positions restart.
  Tensor positions = Tensor::Empty(runtime::DType::kI32, {2, 12});
  for (int t = 0; t < 12; ++t) {
    positions.data<int32_t>()[t] = t < 5 ? t : t - 5;
    positions.data<int32_t>()[12 + t] = t < 9 ? t : t - 9;
  }
  run.inputs["positions"] = positions;
  ExpectClose(R"(
    func.func @f(%x: tensor<2x12x3x16xf32> {gpt.name = "x"}, %positions: tensor<2x12xi32> {gpt.name = "positions"})
        -> (tensor<2x12x3x16xf32> {gpt.name = "y"}, tensor<2x12x3x16xf32> {gpt.name = "dx"},
            tensor<2x12x3x16xf32> {gpt.name = "y_plain"}) {
      %y = gpt.rotary %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      %dx = gpt.rotary_grad %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      %p = gpt.rotary %x : tensor<2x12x3x16xf32>
      return %y, %dx, %p : tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>
    })", run, 1e-6);
}

}  // namespace
}  // namespace gpt_sft::tests
