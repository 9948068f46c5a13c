// The flash-style attention kernels (compiler/lowering/gpu/attention_*.cc) on OpenCL against
// the interpreter: the forward and its backward (from the forward's kept lse, or recomputing
// it), plain causal and packed rows with segment ids (2-3 segments a row, ids that recur),
// multi-head, grouped-query (H = 4, Hkv = 2) and multi-query, T off every tile size (40, 130),
// head dims 16, 32 and 64, peaked softmaxes.
//
// Tolerances, relative to the largest reference value of each result (f32), about ten
// times the largest error seen here (out 2.4e-7, gradients 5.4e-7):
//   out       2e-6  (a softmax-weighted mean: the online rescaling and the exp/division
//                    round differently from the interpreter's double row statistics);
//   dq/dk/dv  5e-6  (sums over up to T keys / T x H/Hkv queries of products of recomputed
//                    probabilities, in another order than the interpreter's tile gemms).
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/kernels/kernel_harness.h"

namespace gpt_sft::tests {
namespace {

using runtime::Tensor;

constexpr double kForwardTolerance = 2e-6;
constexpr double kBackwardTolerance = 5e-6;

/// Every result within its tolerance of the interpreter's; the results named in `zero` are
/// zero in exact arithmetic (rounding noise on both sides), so they are held to an
/// absolute 1e-6 instead.
void ExpectClose(const std::string& ir, const KernelRun& run, const std::set<std::string>& zero = {}) {
  std::string why;
  if (!OpenClAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  absl::StatusOr<std::vector<ResultComparison>> diffs = CompareOpenClWithInterpreter(ir, run);
  ASSERT_TRUE(diffs.ok()) << diffs.status();
  for (const ResultComparison& d : *diffs) {
    if (zero.count(d.name)) {
      EXPECT_LE(d.max_reference, 1e-6) << d.name;
      EXPECT_LE(d.max_abs_error, 1e-6) << d.name;
      continue;
    }
    const double tolerance = d.name == "out" ? kForwardTolerance : kBackwardTolerance;
    std::cout << d.name << ": max rel error " << d.max_rel_error << " (abs " << d.max_abs_error << " of "
              << d.max_reference << ")\n";
    EXPECT_GT(d.max_reference, 0) << d.name << " is all zero: the test checks nothing";
    EXPECT_LE(d.max_rel_error, tolerance)
        << d.name << ": max abs error " << d.max_abs_error << " of " << d.max_reference;
  }
}

struct Case {
  int B, T, H, Hkv, D;
  bool segments;
};

/// Forward and backward of one attention of q [B, T, H, D], k/v [B, T, Hkv, D]: results out,
/// dq, dk, dv (the backward finds the forward's lse).
std::string AttentionIr(const Case& c) {
  std::string ir = R"(
    func.func @f(%q: tensor<BxTxHxDxf32> {gpt.name = "q"}, %k: tensor<BxTxGxDxf32> {gpt.name = "k"},
                 %v: tensor<BxTxGxDxf32> {gpt.name = "v"}, %do: tensor<BxTxHxDxf32> {gpt.name = "dout"}SEGARG)
        -> (tensor<BxTxHxDxf32> {gpt.name = "out"}, tensor<BxTxHxDxf32> {gpt.name = "dq"},
            tensor<BxTxGxDxf32> {gpt.name = "dk"}, tensor<BxTxGxDxf32> {gpt.name = "dv"}) {
      %o = gpt.attention %q, %k, %vSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>SEGTYPE
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %doSEG : tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>SEGTYPE
      return %o, %dq, %dk, %dv : tensor<BxTxHxDxf32>, tensor<BxTxHxDxf32>, tensor<BxTxGxDxf32>, tensor<BxTxGxDxf32>
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

/// [B, T] ids from stretches: row b is stretches[b % size] (lengths summing to T), the n-th
/// stretch of a row holding id n (or ids[n] when given).
Tensor Segments(int B, int T, const std::vector<std::vector<int>>& stretches, const std::vector<int>& ids = {}) {
  Tensor t = Tensor::Empty(runtime::DType::kI32, {B, T});
  for (int b = 0; b < B; ++b) {
    int i = 0, n = 0;
    for (int length : stretches[b % stretches.size()]) {
      for (int e = 0; e < length; ++e) t.data<int32_t>()[b * T + i++] = ids.empty() ? n : ids[n];
      ++n;
    }
    EXPECT_EQ(i, T) << "stretches of row " << b << " do not cover T";
  }
  return t;
}

/// Packed rows of 2-3 conversations each.
Tensor PackedRows(int B, int T) { return Segments(B, T, {{T / 3, T - T / 3}, {7, 13, T - 20}}); }

KernelRun RunFor(const Case& c) {
  KernelRun run;
  if (c.segments) run.inputs["segments"] = PackedRows(c.B, c.T);
  return run;
}

class AttentionKernelsTest : public testing::TestWithParam<Case> {};

TEST_P(AttentionKernelsTest, ForwardAndBackwardMatchTheInterpreter) {
  ExpectClose(AttentionIr(GetParam()), RunFor(GetParam()));
}

// T = 40 is off the 64 query rows a workgroup owns and off the staged key rows (64 for
// D <= 32, 56 for D = 64); T = 130 spans three query tiles and three key tiles.
INSTANTIATE_TEST_SUITE_P(Shapes, AttentionKernelsTest,
                         testing::Values(Case{2, 40, 2, 2, 16, false}, Case{2, 40, 2, 2, 16, true},  // MHA, D = 16
                                         Case{2, 40, 4, 2, 16, false}, Case{2, 40, 4, 2, 16, true},  // GQA, D = 16
                                         Case{2, 40, 2, 2, 32, false}, Case{2, 40, 4, 2, 32, true},  // D = 32
                                         Case{1, 40, 4, 2, 64, false}, Case{1, 40, 4, 2, 64, true},  // GQA, D = 64
                                         Case{2, 130, 2, 1, 64, false},
                                         Case{2, 130, 2, 1, 64, true}),  // MQA, several tiles
                         [](const testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return absl::StrCat("B", c.B, "T", c.T, "H", c.H, "Hkv", c.Hkv, "D", c.D,
                                               c.segments ? "Packed" : "Causal");
                         });

// One token: it sees only itself, so out = v, dv = dout, and dq = dk = 0 exactly (P = 1,
// dP = delta).
TEST(AttentionKernelsTest, OneToken) { ExpectClose(AttentionIr(Case{1, 1, 2, 1, 16, false}), {}, {"dq", "dk"}); }

// Segments that leave whole tile pairs unable to meet (skipped) next to ones that meet
// partly: row 0 one long conversation then a short one, row 1 three.
TEST(AttentionKernelsTest, TilePairsOfDisjointSegmentsAreSkipped) {
  const Case c{2, 130, 4, 2, 32, true};
  KernelRun run;
  run.inputs["segments"] = Segments(c.B, c.T, {{70, 60}, {20, 80, 30}});
  ExpectClose(AttentionIr(c), run);
}

// Visibility is id equality, not adjacency: an id that comes back later in the row sees its
// earlier stretch (the interpreter's rule), and ids need not start at 0 or be ordered.
TEST(AttentionKernelsTest, RecurringAndUnorderedSegmentIds) {
  const Case c{2, 40, 4, 2, 16, true};
  KernelRun run;
  run.inputs["segments"] = Segments(c.B, c.T, {{10, 10, 20}, {5, 30, 5}}, {7, -3, 7});
  ExpectClose(AttentionIr(c), run);
}

// Large scores (q of magnitude up to 6): peaked softmaxes whose running maximum moves
// between key tiles, so the online rescaling matters.
TEST(AttentionKernelsTest, PeakedSoftmax) {
  const Case c{1, 130, 2, 2, 16, true};
  KernelRun run = RunFor(c);
  Tensor q = Tensor::Empty(runtime::DType::kF32, {c.B, c.T, c.H, c.D});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> pick(-6.0f, 6.0f);
  for (int64_t i = 0; i < q.numel(); ++i) q.data<float>()[i] = pick(rng);
  run.inputs["q"] = q;
  ExpectClose(AttentionIr(c), run);
}

// The backward alone: its `out` is an argument, not a forward's result, so it recomputes the
// forward for the log-sum-exp (and reads `out` as given for delta).
TEST(AttentionKernelsTest, BackwardRecomputesTheForward) {
  KernelRun run;
  run.inputs["segments"] = PackedRows(2, 40);
  ExpectClose(R"(
    func.func @f(%q: tensor<2x40x4x32xf32> {gpt.name = "q"}, %k: tensor<2x40x2x32xf32> {gpt.name = "k"},
                 %v: tensor<2x40x2x32xf32> {gpt.name = "v"}, %o: tensor<2x40x4x32xf32> {gpt.name = "o"},
                 %do: tensor<2x40x4x32xf32> {gpt.name = "dout"}, %seg: tensor<2x40xi32> {gpt.name = "segments"})
        -> (tensor<2x40x4x32xf32> {gpt.name = "dq"}, tensor<2x40x2x32xf32> {gpt.name = "dk"},
            tensor<2x40x2x32xf32> {gpt.name = "dv"}) {
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg : tensor<2x40x4x32xf32>, tensor<2x40x2x32xf32>, tensor<2x40x2x32xf32>, tensor<2x40x4x32xf32>, tensor<2x40x4x32xf32>, tensor<2x40xi32>
      return %dq, %dk, %dv : tensor<2x40x4x32xf32>, tensor<2x40x2x32xf32>, tensor<2x40x2x32xf32>
    })",
              run);
}

// `out` is a forward's result, but of other queries: its lse is not this backward's, so the
// backward recomputes it (the interpreter's rule) while delta reads that other `out`.
TEST(AttentionKernelsTest, BackwardOfAnotherForwardRecomputes) {
  ExpectClose(R"(
    func.func @f(%q: tensor<1x40x2x16xf32> {gpt.name = "q"}, %q2: tensor<1x40x2x16xf32> {gpt.name = "q2"},
                 %k: tensor<1x40x2x16xf32> {gpt.name = "k"}, %v: tensor<1x40x2x16xf32> {gpt.name = "v"},
                 %do: tensor<1x40x2x16xf32> {gpt.name = "dout"})
        -> (tensor<1x40x2x16xf32> {gpt.name = "out"}, tensor<1x40x2x16xf32> {gpt.name = "dq"},
            tensor<1x40x2x16xf32> {gpt.name = "dk"}, tensor<1x40x2x16xf32> {gpt.name = "dv"}) {
      %o = gpt.attention %q2, %k, %v : tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>
      %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>
      return %o, %dq, %dk, %dv : tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>
    })",
              {});
}

}  // namespace
}  // namespace gpt_sft::tests
