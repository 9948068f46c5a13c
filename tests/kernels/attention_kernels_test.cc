// The flash-style attention kernels (forward, and backward from the forward's lse or
// recomputing it) on OpenCL against the interpreter: plain causal and packed rows with
// segment ids, multi-head and grouped-query, T off the tile sizes. Tolerance: 2e-5 of the
// largest reference value (softmax sums over up to 40 keys in another order).
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

constexpr double kTolerance = 2e-5;

void ExpectClose(const std::string& ir, const KernelRun& run) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    EXPECT_GT(d.max_reference, 0) << d.name;
    EXPECT_LE(d.max_rel_error, kTolerance) << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

/// Forward and backward of one attention of q [B, T, H, D], k/v [B, T, Hkv, D].
std::string AttentionIr(int B, int T, int H, int Hkv, int D, bool segments) {
  std::string ir = R"(
    func.func @f(%q: tensor<BxTxHxDxf32> {gpt.name = "q"}, %k: tensor<BxTxGxDxf32> {gpt.name = "k"},
                 %v: tensor<BxTxGxDxf32> {gpt.name = "v"}, %do: tensor<BxTxHxDxf32> {gpt.name = "dout"}SEGARG)
        -> (tensor<BxTxHxDxf32> {gpt.name = "out"}, tensor<BxTxHxDxf32> {gpt.name = "dq"},
            tensor<BxTxGxDxf32> {gpt.name = "dk"}, tensor<BxTxGxDxf32> {gpt.name = "dv"}) {
      %o = gpt.attention %q, %k, %vSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>SEGTYPE
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %doSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>SEGTYPE
      return %o, %dq, %dk, %dv : tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>
    })";
  ir = absl::StrReplaceAll(ir, {{"SEGARG", segments ? ", %seg: tensor<BxTxi32> {gpt.name = \"segments\"}" : ""},
                                {"SEGTYPE", segments ? ", tensor<BxTxi32>" : ""},
                                {"SEG", segments ? ", segments %seg" : ""}});
  return absl::StrReplaceAll(ir, {{"B", std::to_string(B)}, {"T", std::to_string(T)}, {"H", std::to_string(H)},
                                  {"G", std::to_string(Hkv)}, {"D", std::to_string(D)}});
}

/// Rows of 2-3 conversations each: segment ids 0, 1, 2 over consecutive stretches.
Tensor Segments(int B, int T) {
  Tensor t = Tensor::Empty(runtime::DType::kI32, {B, T});
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < T; ++i) t.data<int32_t>()[b * T + i] = b == 0 ? (i < T / 3 ? 0 : 1) : (i < 7 ? 0 : i < 20 ? 1 : 2);
  }
  return t;
}

TEST(AttentionKernelsTest, PlainCausalMultiHead) { ExpectClose(AttentionIr(2, 40, 2, 2, 16, false), {}); }

TEST(AttentionKernelsTest, PackedRowsWithGroupedQueryHeads) {
  KernelRun run;
  run.inputs["segments"] = Segments(2, 40);
  ExpectClose(AttentionIr(2, 40, 4, 2, 32, true), run);
}

TEST(AttentionKernelsTest, HeadDim64OverSeveralTiles) {
  KernelRun run;
  run.inputs["segments"] = Segments(2, 70);
  ExpectClose(AttentionIr(2, 70, 2, 1, 64, true), run);
}

// The backward alone: its `out` is an argument, not a forward's result, so it recomputes the
// forward for the log-sum-exp.
TEST(AttentionKernelsTest, BackwardRecomputesTheForward) {
  ExpectClose(R"(
    func.func @f(%q: tensor<1x24x2x16xf32> {gpt.name = "q"}, %k: tensor<1x24x2x16xf32> {gpt.name = "k"},
                 %v: tensor<1x24x2x16xf32> {gpt.name = "v"}, %o: tensor<1x24x2x16xf32> {gpt.name = "out"},
                 %do: tensor<1x24x2x16xf32> {gpt.name = "dout"})
        -> (tensor<1x24x2x16xf32> {gpt.name = "dq"}, tensor<1x24x2x16xf32> {gpt.name = "dk"},
            tensor<1x24x2x16xf32> {gpt.name = "dv"}) {
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
      return %dq, %dk, %dv : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
    })", {});
}

}  // namespace
}  // namespace gpt_sft::tests
