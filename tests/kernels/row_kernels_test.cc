// The row generators (compiler/lowering/gpu: rms_norm_kernels.cc, cross_entropy_kernels.cc)
// on OpenCL against the interpreter: RMSNorm and its gradient over long, short and tiny rows
// (one or several rows per workgroup, a last workgroup with padding rows), cross-entropy and
// its gradient with ignored targets, no counted target at all, another ignore_index, from the
// loss's row stats or its own, and the softcap-gradient epilogue absorbed or not.
// Tolerance, relative to the largest reference value: 1e-5 for everything here (row sums of
// up to 1000 terms in f32 tree order against the interpreter's sequential double sums, and
// exp/log of the device's math library); observed on PoCL: at most 1.8e-7.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

constexpr double kTolerance = 1e-5;

/// Every result within `tolerance`; those named in `may_be_zero` may be all zero (else an
/// all-zero reference means the test checks nothing).
void ExpectClose(const std::string& ir, const KernelRun& run, const std::set<std::string>& may_be_zero = {}) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    if (!may_be_zero.count(d.name)) {
      EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    }
    EXPECT_LE(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

Tensor Ints(runtime::Shape shape, int32_t lo, int32_t hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(lo, hi - 1);
  Tensor t = Tensor::Empty(runtime::DType::kI32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = pick(rng);
  return t;
}

// Rows of 96 (one per workgroup of 128), 1000 (256 work-items striding), 16 (eight per
// workgroup: 30 rows leave padding rows in the last one) and 5, with the op's eps.
TEST(RowKernelsTest, RmsNormAndItsGradient) {
  ExpectClose(R"(
    func.func @f(%x: tensor<6x7x96xf32> {gpt.name = "x"}, %dy: tensor<6x7x96xf32> {gpt.name = "dy"},
                 %q: tensor<2x5x3x16xf32> {gpt.name = "q"}, %dq: tensor<2x5x3x16xf32> {gpt.name = "dq"},
                 %w: tensor<3x1000xf32> {gpt.name = "w"}, %dw: tensor<3x1000xf32> {gpt.name = "dw"},
                 %s: tensor<9x5xf32> {gpt.name = "s"})
        -> (tensor<6x7x96xf32> {gpt.name = "y"}, tensor<6x7x96xf32> {gpt.name = "dx"},
            tensor<2x5x3x16xf32> {gpt.name = "qn"}, tensor<2x5x3x16xf32> {gpt.name = "dqn"},
            tensor<3x1000xf32> {gpt.name = "wn"}, tensor<3x1000xf32> {gpt.name = "dwn"},
            tensor<9x5xf32> {gpt.name = "sn"}) {
      %y = gpt.rms_norm %x : tensor<6x7x96xf32>
      %dx = gpt.rms_norm_grad %x, %dy : tensor<6x7x96xf32>, tensor<6x7x96xf32>
      %qn = gpt.rms_norm %q : tensor<2x5x3x16xf32>
      %dqn = gpt.rms_norm_grad %q, %dq : tensor<2x5x3x16xf32>, tensor<2x5x3x16xf32>
      %wn = gpt.rms_norm %w {eps = 1.0e-01 : f64} : tensor<3x1000xf32>
      %dwn = gpt.rms_norm_grad %w, %dw {eps = 1.0e-01 : f64} : tensor<3x1000xf32>, tensor<3x1000xf32>
      %sn = gpt.rms_norm %s : tensor<9x5xf32>
      return %y, %dx, %qn, %dqn, %wn, %dwn, %sn : tensor<6x7x96xf32>, tensor<6x7x96xf32>, tensor<2x5x3x16xf32>,
          tensor<2x5x3x16xf32>, tensor<3x1000xf32>, tensor<3x1000xf32>, tensor<9x5xf32>
    })", {});
}

// The loss and the gradient of the same logits: the gradient reads the loss's row stats.
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
    })", run);
}

// Each op alone (the gradient computes its own stats); rows of 1000 and of 10 (eight rows
// per workgroup, 13 rows: padding rows); targets at the first and last column.
TEST(RowKernelsTest, CrossEntropyAloneOverLongAndShortRows) {
  KernelRun run;
  Tensor wide = Ints({6}, -1, 1000, 11), narrow = Ints({13}, -1, 10, 12);
  wide.data<int32_t>()[0] = 0;
  wide.data<int32_t>()[1] = 999;
  narrow.data<int32_t>()[2] = 9;
  run.inputs["wide_targets"] = wide;
  run.inputs["narrow_targets"] = narrow;
  ExpectClose(R"(
    func.func @f(%a: tensor<6x1000xf32> {gpt.name = "a"}, %wide_targets: tensor<6xi32> {gpt.name = "wide_targets"},
                 %b: tensor<13x10xf32> {gpt.name = "b"}, %narrow_targets: tensor<13xi32> {gpt.name = "narrow_targets"},
                 %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<f32> {gpt.name = "wide_loss"}, tensor<13x10xf32> {gpt.name = "narrow_grad"},
            tensor<6x1000xf32> {gpt.name = "wide_grad"}, tensor<f32> {gpt.name = "narrow_loss"}) {
      %wl = gpt.cross_entropy %a, %wide_targets : tensor<6x1000xf32>, tensor<6xi32>
      %ng = gpt.cross_entropy_grad %b, %narrow_targets, %dloss : tensor<13x10xf32>, tensor<13xi32>, tensor<f32>
      %wg = gpt.cross_entropy_grad %a, %wide_targets, %dloss : tensor<6x1000xf32>, tensor<6xi32>, tensor<f32>
      %nl = gpt.cross_entropy %b, %narrow_targets : tensor<13x10xf32>, tensor<13xi32>
      return %wl, %ng, %wg, %nl : tensor<f32>, tensor<13x10xf32>, tensor<6x1000xf32>, tensor<f32>
    })", run);
}

// No target counts: the loss is 0 and the gradient all zero, not 0/0.
TEST(RowKernelsTest, CrossEntropyWithEveryTargetIgnored) {
  KernelRun run;
  run.inputs["targets"] = Ints({12}, -1, 0, 4);
  ExpectClose(R"(
    func.func @f(%logits: tensor<12x50xf32> {gpt.name = "logits"}, %targets: tensor<12xi32> {gpt.name = "targets"},
                 %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<f32> {gpt.name = "loss"}, tensor<12x50xf32> {gpt.name = "dlogits"}) {
      %loss = gpt.cross_entropy %logits, %targets : tensor<12x50xf32>, tensor<12xi32>
      %g = gpt.cross_entropy_grad %logits, %targets, %dloss : tensor<12x50xf32>, tensor<12xi32>, tensor<f32>
      return %loss, %g : tensor<f32>, tensor<12x50xf32>
    })", run, {"loss", "dlogits"});
}

// ignore_index 3: the rows whose target is 3 do not count.
TEST(RowKernelsTest, CrossEntropyWithAnotherIgnoreIndex) {
  KernelRun run;
  run.inputs["targets"] = Ints({30}, 0, 8, 6);  // about one row in eight is 3
  ExpectClose(R"(
    func.func @f(%logits: tensor<30x64xf32> {gpt.name = "logits"}, %targets: tensor<30xi32> {gpt.name = "targets"},
                 %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<f32> {gpt.name = "loss"}, tensor<30x64xf32> {gpt.name = "dlogits"}) {
      %loss = gpt.cross_entropy %logits, %targets {ignore_index = 3 : i64} : tensor<30x64xf32>, tensor<30xi32>
      %g = gpt.cross_entropy_grad %logits, %targets, %dloss {ignore_index = 3 : i64}
          : tensor<30x64xf32>, tensor<30xi32>, tensor<f32>
      return %loss, %g : tensor<f32>, tensor<30x64xf32>
    })", run);
}

// The gradient's only reader is the softcap's gradient at the same logits: one fused kernel
// writes the softcap gradient (compiler/lowering/gpu/test/row_kernels.mlir checks that).
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
    })", run);
}

// Not absorbed: the gradient has a second reader (it is returned too), and a softcap_grad
// whose y is not the logits the cross-entropy differentiated.
TEST(RowKernelsTest, CrossEntropyGradWithoutTheEpilogue) {
  KernelRun run;
  run.inputs["targets"] = Ints({24}, -1, 96, 8);
  ExpectClose(R"(
    func.func @f(%x: tensor<24x96xf32> {gpt.name = "x"}, %other: tensor<24x96xf32> {gpt.name = "other"},
                 %targets: tensor<24xi32> {gpt.name = "targets"}, %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<24x96xf32> {gpt.name = "g"}, tensor<24x96xf32> {gpt.name = "dx"},
            tensor<24x96xf32> {gpt.name = "dz"}) {
      %y = gpt.softcap %x {cap = 3.0 : f64} : tensor<24x96xf32>
      %g = gpt.cross_entropy_grad %y, %targets, %dloss : tensor<24x96xf32>, tensor<24xi32>, tensor<f32>
      %dx = gpt.softcap_grad %y, %g {cap = 3.0 : f64} : tensor<24x96xf32>, tensor<24x96xf32>
      %h = gpt.cross_entropy_grad %y, %targets, %dloss : tensor<24x96xf32>, tensor<24xi32>, tensor<f32>
      %z = gpt.softcap %other {cap = 3.0 : f64} : tensor<24x96xf32>
      %dz = gpt.softcap_grad %z, %h {cap = 3.0 : f64} : tensor<24x96xf32>, tensor<24x96xf32>
      return %g, %dx, %dz : tensor<24x96xf32>, tensor<24x96xf32>, tensor<24x96xf32>
    })", run);
}

// Placed by hand as gpt-plan-buffers could: the fused output [2048, 4096) takes the bytes of
// the targets (a copy of the argument) and of dloss (a product), which die at the
// cross-entropy: both are copied aside before the fused kernel overwrites them.
TEST(RowKernelsTest, SoftcapEpilogueOverInputsItOverwrites) {
  KernelRun run;
  run.plan = false;
  run.inputs["targets"] = Ints({8}, -1, 64, 14);
  ExpectClose(R"(
    func.func @f(%y: tensor<8x64xf32> {gpt.name = "y"}, %targets: tensor<8xi32> {gpt.name = "targets"},
                 %s: tensor<f32> {gpt.name = "s"})
        -> (tensor<8x64xf32> {gpt.name = "dx"}) attributes {gpt.arena_bytes = 4096 : i64} {
      %t = gpt.reshape %targets to [-1] {gpt.offsets = array<i64: 2048>} : tensor<8xi32>
      %d = gpt.mul %s, %s {gpt.offsets = array<i64: 2304>} : tensor<f32>, tensor<f32>
      %g = gpt.cross_entropy_grad %y, %t, %d {gpt.offsets = array<i64: 0>} : tensor<8x64xf32>, tensor<8xi32>, tensor<f32>
      %dx = gpt.softcap_grad %y, %g {cap = 15.0 : f64, gpt.offsets = array<i64: 2048>} : tensor<8x64xf32>, tensor<8x64xf32>
      return %dx : tensor<8x64xf32>
    })", run);
}

// Placed by hand: the fused output is the very bytes of the logits (the softcap's output,
// in place): each element is read before the same work-item overwrites it.
TEST(RowKernelsTest, SoftcapEpilogueInPlaceOverTheLogits) {
  KernelRun run;
  run.plan = false;
  run.inputs["targets"] = Ints({8}, -1, 64, 15);
  ExpectClose(R"(
    func.func @f(%x: tensor<8x64xf32> {gpt.name = "x"}, %targets: tensor<8xi32> {gpt.name = "targets"},
                 %dloss: tensor<f32> {gpt.name = "dloss"})
        -> (tensor<f32> {gpt.name = "loss"}, tensor<8x64xf32> {gpt.name = "dx"}) attributes {gpt.arena_bytes = 4352 : i64} {
      %y = gpt.softcap %x {cap = 1.5 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xf32>
      %loss = gpt.cross_entropy %y, %targets {gpt.offsets = array<i64: 4096>} : tensor<8x64xf32>, tensor<8xi32>
      %g = gpt.cross_entropy_grad %y, %targets, %dloss {gpt.offsets = array<i64: 2048>} : tensor<8x64xf32>, tensor<8xi32>, tensor<f32>
      %dx = gpt.softcap_grad %y, %g {cap = 1.5 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xf32>, tensor<8x64xf32>
      return %loss, %dx : tensor<f32>, tensor<8x64xf32>
    })", run);
}

}  // namespace
}  // namespace gpt_sft::tests
