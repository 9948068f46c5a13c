// The warp-tile attention kernels (compiler/lowering/gpu/flash_attention_*.cc: attention
// under bf16 autocast on m16n8k16 bf16 tile products, emulated lane by lane in the PTX
// fragment layout on OpenCL) against the interpreter's bf16 attention, forward and backward:
// plain causal and packed rows, MHA, GQA and MQA, T off the 64-row tiles (40, 130), head
// dims 16, 64 and 128.
//
// q, k, v and dout are bf16 values, so every product is exact and only the order of the f32
// sums differs from the interpreter's. A last-bit difference in a score can still move the
// bf16 rounding of its probability (or of dS) by one bf16 step (2^-8 relative), which then
// reaches the sums it enters. Tolerances, relative to the largest reference value of each
// result, about ten times the largest error seen here (out 1.8e-7, gradients 5.2e-5):
//   out 2e-6, dq/dk/dv 5e-4.
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "model/round_to_bf16.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

constexpr double kForwardTolerance = 2e-6;
constexpr double kBackwardTolerance = 5e-4;

struct Case {
  int B, T, H, Hkv, D;
  bool segments;
};

/// Forward and backward of one attention under bf16 autocast: results out, dq, dk, dv.
std::string AttentionIr(const Case& c) {
  std::string ir = R"(
    module attributes {gpt.autocast = "bf16"} {
    func.func @f(%q: tensor<BxTxHxDxf32> {gpt.name = "q"}, %k: tensor<BxTxGxDxf32> {gpt.name = "k"},
                 %v: tensor<BxTxGxDxf32> {gpt.name = "v"}, %do: tensor<BxTxHxDxf32> {gpt.name = "dout"}SEGARG)
        -> (tensor<BxTxHxDxf32> {gpt.name = "out"}, tensor<BxTxHxDxf32> {gpt.name = "dq"},
            tensor<BxTxGxDxf32> {gpt.name = "dk"}, tensor<BxTxGxDxf32> {gpt.name = "dv"}) {
      %o = gpt.attention %q, %k, %vSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>SEGTYPE
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %doSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>SEGTYPE
      return %o, %dq, %dk, %dv : tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>
    }
    })";
  ir = absl::StrReplaceAll(ir, {{"SEGARG", c.segments ? ", %seg: tensor<BxTxi32> {gpt.name = \"segments\"}" : ""},
                                {"SEGTYPE", c.segments ? ", tensor<BxTxi32>" : ""},
                                {"SEG", c.segments ? ", segments %seg" : ""}});
  return absl::StrReplaceAll(ir, {{"B", std::to_string(c.B)},
                                  {"T", std::to_string(c.T)},
                                  {"H", std::to_string(c.H)},
                                  {"G", std::to_string(c.Hkv)},
                                  {"D", std::to_string(c.D)}});
}

/// Uniform [-range, range) values rounded to bf16: what autocast feeds attention.
Tensor Bf16Values(std::vector<int64_t> shape, uint64_t seed, double range = 1.0) {
  Tensor t = Tensor::Empty(runtime::DType::kF32, runtime::Shape(shape.begin(), shape.end()));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-range, range);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = compiler::RoundToBf16(static_cast<float>(uniform(rng)));
  return t;
}

/// Packed rows of 2-3 conversations each (row b: stretches[b % 2]).
Tensor PackedRows(int B, int T) {
  const std::vector<std::vector<int>> stretches{{T / 3, T - T / 3}, {7, 13, T - 20}};
  Tensor t = Tensor::Empty(runtime::DType::kI32, {B, T});
  for (int b = 0; b < B; ++b) {
    int i = 0, n = 0;
    for (int length : stretches[b % 2]) {
      for (int e = 0; e < length; ++e) t.data<int32_t>()[b * T + i++] = n;
      ++n;
    }
  }
  return t;
}

KernelRun RunFor(const Case& c, double q_range = 1.0) {
  KernelRun run;
  run.inputs["q"] = Bf16Values({c.B, c.T, c.H, c.D}, 1, q_range);
  run.inputs["k"] = Bf16Values({c.B, c.T, c.Hkv, c.D}, 2);
  run.inputs["v"] = Bf16Values({c.B, c.T, c.Hkv, c.D}, 3);
  run.inputs["dout"] = Bf16Values({c.B, c.T, c.H, c.D}, 4);
  if (c.segments) run.inputs["segments"] = PackedRows(c.B, c.T);
  return run;
}

void ExpectClose(const std::string& ir, const KernelRun& run) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    const double tolerance = d.name == "out" ? kForwardTolerance : kBackwardTolerance;
    std::cout << d.name << ": max rel error " << d.max_rel_error << " (abs " << d.max_abs_error << " of "
              << d.max_reference << ")\n";
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_LE(d.max_rel_error, tolerance)
        << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

class FlashAttentionKernelsTest : public testing::TestWithParam<Case> {};

TEST_P(FlashAttentionKernelsTest, ForwardAndBackwardMatchTheInterpreter) {
  ExpectClose(AttentionIr(GetParam()), RunFor(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlashAttentionKernelsTest,
                         testing::Values(Case{2, 40, 2, 2, 16, false}, Case{2, 40, 4, 2, 16, true},  // D = 16
                                         Case{1, 130, 4, 2, 64, false}, Case{2, 130, 2, 1, 64, true},  // GQA, MQA
                                         Case{1, 70, 2, 1, 128, true}),                                // D = 128
                         [](const testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return absl::StrCat("B", c.B, "T", c.T, "H", c.H, "Hkv", c.Hkv, "D", c.D,
                                               c.segments ? "Packed" : "Causal");
                         });

// Large scores (q up to 6): peaked softmaxes whose running maximum moves between key tiles.
TEST(FlashAttentionKernelsTest, PeakedSoftmax) {
  const Case c{1, 130, 2, 2, 16, true};
  ExpectClose(AttentionIr(c), RunFor(c, 6.0));
}

// The backward alone: its `out` is an argument, so it recomputes the forward (on the warp
// tiles) for the lse, and reads `out` as given for delta.
TEST(FlashAttentionKernelsTest, BackwardRecomputesTheForward) {
  const Case c{2, 40, 4, 2, 16, true};
  KernelRun run = RunFor(c);
  run.inputs["o"] = Bf16Values({c.B, c.T, c.H, c.D}, 5);
  ExpectClose(R"(
    module attributes {gpt.autocast = "bf16"} {
    func.func @f(%q: tensor<2x40x4x16xf32> {gpt.name = "q"}, %k: tensor<2x40x2x16xf32> {gpt.name = "k"},
                 %v: tensor<2x40x2x16xf32> {gpt.name = "v"}, %o: tensor<2x40x4x16xf32> {gpt.name = "o"},
                 %do: tensor<2x40x4x16xf32> {gpt.name = "dout"}, %seg: tensor<2x40xi32> {gpt.name = "segments"})
        -> (tensor<2x40x4x16xf32> {gpt.name = "dq"}, tensor<2x40x2x16xf32> {gpt.name = "dk"},
            tensor<2x40x2x16xf32> {gpt.name = "dv"}) {
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg : tensor<2x40x4x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x4x16xf32>, tensor<2x40x4x16xf32>, tensor<2x40xi32>
      return %dq, %dk, %dv : tensor<2x40x4x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x2x16xf32>
    }
    })",
              run);
}

}  // namespace
}  // namespace gpt_sft::tests
