// The rotary generators (compiler/lowering/gpu/rotary_kernels.cc) on OpenCL against the
// interpreter: positions given per token (packed rows whose positions restart at every
// conversation, up to T - 1, the table's bound) and implicit (t itself), the rotation and its
// gradient, the default base and another.
// Tolerance 1e-6 of the largest reference value: cos and sin are the interpreter's own values
// (compile-time tables of the same function, model/rotary_table.h), so only the
// two products and one sum of each output round, possibly contracted to an fma on the device
// (observed on PoCL: bit-identical).
// The bf16 rotary (round_bf16) rounds every product and sum, so nothing is left to contract:
// it must agree exactly.
#include <gtest/gtest.h>

#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

constexpr double kTolerance = 1e-6;

void ExpectClose(const std::string& ir, const KernelRun& run) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_LE(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

/// Positions [B, T] of rows packed with conversations of the given lengths (row by row;
/// each row's lengths sum to T): 0, 1, ... restarting at every conversation.
Tensor PackedPositions(int64_t T, const std::vector<std::vector<int>>& rows) {
  Tensor positions = Tensor::Empty(runtime::DType::kI32, {static_cast<int64_t>(rows.size()), T});
  int32_t* p = positions.data<int32_t>();
  for (const std::vector<int>& lengths : rows) {
    for (int length : lengths) {
      for (int t = 0; t < length; ++t) *p++ = t;
    }
  }
  return positions;
}

TEST(RotaryKernelsTest, PackedPositionsAndTheGradient) {
  KernelRun run;
  run.inputs["positions"] = PackedPositions(12, {{5, 7}, {9, 3}});
  ExpectClose(R"(
    func.func @f(%x: tensor<2x12x3x16xf32> {gpt.name = "x"}, %positions: tensor<2x12xi32> {gpt.name = "positions"})
        -> (tensor<2x12x3x16xf32> {gpt.name = "y"}, tensor<2x12x3x16xf32> {gpt.name = "dx"},
            tensor<2x12x3x16xf32> {gpt.name = "y_plain"}, tensor<2x12x3x16xf32> {gpt.name = "dx_plain"}) {
      %y = gpt.rotary %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      %dx = gpt.rotary_grad %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      %p = gpt.rotary %x : tensor<2x12x3x16xf32>
      %dp = gpt.rotary_grad %x : tensor<2x12x3x16xf32>
      return %y, %dx, %p, %dp : tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>
    })", run);
}

// A longer row whose last conversation reaches position T - 1 = 99 (angles up to 99 rad for
// j = 0), one head of 64, and base 500 (every frequency matters).
TEST(RotaryKernelsTest, PositionsUpToTheTableBoundAndAnotherBase) {
  KernelRun run;
  run.inputs["positions"] = PackedPositions(100, {{100}, {1, 30, 69}});
  ExpectClose(R"(
    func.func @f(%x: tensor<2x100x1x64xf32> {gpt.name = "x"}, %positions: tensor<2x100xi32> {gpt.name = "positions"})
        -> (tensor<2x100x1x64xf32> {gpt.name = "y"}, tensor<2x100x1x64xf32> {gpt.name = "dx"}) {
      %y = gpt.rotary %x, positions %positions {base = 500.0 : f64} : tensor<2x100x1x64xf32>, tensor<2x100xi32>
      %dx = gpt.rotary_grad %x, positions %positions {base = 500.0 : f64} : tensor<2x100x1x64xf32>, tensor<2x100xi32>
      return %y, %dx : tensor<2x100x1x64xf32>, tensor<2x100x1x64xf32>
    })", run);
}

TEST(RotaryKernelsTest, Bf16RoundingIsExact) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  KernelRun run;
  run.inputs["positions"] = PackedPositions(12, {{5, 7}, {12}});
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(R"(
    func.func @f(%x: tensor<2x12x3x16xf32> {gpt.name = "x"}, %positions: tensor<2x12xi32> {gpt.name = "positions"})
        -> (tensor<2x12x3x16xf32> {gpt.name = "y"}, tensor<2x12x3x16xf32> {gpt.name = "dx"}) {
      %y = gpt.rotary %x, positions %positions {round_bf16} : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      %dx = gpt.rotary_grad %x, positions %positions {round_bf16} : tensor<2x12x3x16xf32>, tensor<2x12xi32>
      return %y, %dx : tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>
    })", run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_EQ(d.max_abs_error, 0.0) << d.name;
  }
}

}  // namespace
}  // namespace gpt_sft::tests
