#include "runtime/kernels/cpu/linear_cross_entropy.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/onednn_gemm.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/same_bits.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

template <typename T>
std::vector<T> Random(int64_t n, uint32_t seed, double scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<T> v(n);
  for (T& x : v) x = T(d(rng));
  return v;
}

std::vector<int32_t> Targets(int64_t N, int64_t V, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(N);
  for (int64_t n = 0; n < N; ++n) t[n] = n % 7 == 3 ? -1 : static_cast<int32_t>(rng() % V);
  return t;
}

// w [V, C] transposed: the [C, V] copy the step's transpose makes for dx's product.
template <typename T>
std::vector<T> Transposed(const std::vector<T>& w, LinearLossShape s) {
  std::vector<T> wt(s.C * s.V);
  for (int64_t v = 0; v < s.V; ++v)
    for (int64_t c = 0; c < s.C; ++c) wt[c * s.V + v] = w[v * s.C + c];
  return wt;
}

template <typename T>
struct Outputs {
  double loss = 0;
  std::vector<T> dy, dx;
};

// The unfused chain the compiled step and the interpreter run: the lm_head matmul, softcap +
// loss, the loss's gradient through the softcap, the transpose, dx = dy (w^T)^T.
template <typename T>
Outputs<T> Unfused(const std::vector<T>& x, const std::vector<T>& w, const std::vector<int32_t>& targets,
                   LinearLossShape s, T cap, double dloss) {
  std::vector<T> logits(s.N * s.V), y(s.N * s.V);
  const std::vector<T> wt = Transposed(w, s);
  Outputs<T> out{0, std::vector<T>(s.N * s.V), std::vector<T>(s.N * s.C)};
  Matmul(x.data(), w.data(), logits.data(), s.N, s.V, s.C);
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(s.N));
  out.loss = SoftcapCrossEntropy(logits.data(), cap, y.data(), targets.data(), s.N, s.V, scratch.get()).loss;
  CrossEntropySoftcapGrad(y.data(), targets.data(), s.N, s.V, dloss, cap, out.dy.data());
  Matmul(out.dy.data(), wt.data(), out.dx.data(), s.N, s.C, s.V);
  return out;
}

template <typename T>
Outputs<T> Fused(const std::vector<T>& x, const std::vector<T>& w, const std::vector<int32_t>& targets,
                 LinearLossShape s, T cap, double dloss) {
  Outputs<T> out{0, std::vector<T>(s.N * s.V), std::vector<T>(s.N * s.C)};
  const ScratchBuffer scratch(LinearSoftcapCrossEntropyWorkspaceBytes<T>(s));
  out.loss = LinearSoftcapCrossEntropyWithGrad(x.data(), w.data(), targets.data(), s, cap, dloss,
                                               out.dy.data(), out.dx.data(), scratch.get())
                 .loss;
  return out;
}

template <typename T>
void ExpectFusedIsUnfused(LinearLossShape s, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "N " << s.N << " V " << s.V << " C " << s.C);
  const std::vector<T> x = Random<T>(s.N * s.C, seed, 1.0), w = Random<T>(s.V * s.C, seed + 1, 0.5);
  const std::vector<int32_t> targets = Targets(s.N, s.V, seed + 2);
  const T cap = T(15);
  const double dloss = 0.75;
  const Outputs<T> want = Unfused(x, w, targets, s, cap, dloss), got = Fused(x, w, targets, s, cap, dloss);
  EXPECT_EQ(std::memcmp(&want.loss, &got.loss, sizeof(double)), 0) << want.loss << " vs " << got.loss;
  ExpectSameBits(want.dy, got.dy, "dy");
  ExpectSameBits(want.dx, got.dx, "dx");
  EXPECT_TRUE(std::isfinite(got.loss));
  EXPECT_GT(got.loss, 0.0);
}

// One BLAS call (small), several blocks with a short last one, and the benchmark's rows.
TEST(LinearSoftcapCrossEntropy, EqualsTheUnfusedChainBitForBit) {
  ExpectFusedIsUnfused<float>({37, 50, 16}, 1);
  ExpectFusedIsUnfused<float>({1000, 700, 64}, 2);
  ExpectFusedIsUnfused<double>({1000, 300, 32}, 3);
  ExpectFusedIsUnfused<float>({2048, 2048, 128}, 4);
  ExpectFusedIsUnfused<float>({512, 8192, 256}, 6);  // the demo model's lm_head: dx sums 8192 products
}

// The thread count changes who computes which block, not the bits (the unfused kernels' own
// guarantee, kept).
TEST(LinearSoftcapCrossEntropy, SameBitsOnOneAndThreeThreads) {
  const LinearLossShape s{1200, 500, 48};
  const int saved = NumThreads();
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    ExpectFusedIsUnfused<float>(s, 5);
  }
  SetNumThreads(saved);
}

// Every target ignored: loss 0 and zero gradients, as the unfused kernels give.
TEST(LinearSoftcapCrossEntropy, AllTargetsIgnored) {
  const LinearLossShape s{64, 40, 8};
  const std::vector<float> x = Random<float>(s.N * s.C, 6, 1.0), w = Random<float>(s.V * s.C, 7, 0.5);
  const std::vector<int32_t> targets(s.N, -1);
  const Outputs<float> got = Fused(x, w, targets, s, 15.0f, 1.0);
  EXPECT_EQ(got.loss, 0.0);
  for (float v : got.dy) ASSERT_EQ(v, 0.0f);
  for (float v : got.dx) ASSERT_EQ(v, 0.0f);
}

// SFT targets: a prompt (ignored), answers (counted) with ignored stretches between them,
// and padding (ignored) filling the last two Gemm blocks of rows and part of the one before.
std::vector<int32_t> SftTargets(LinearLossShape s, uint32_t seed) {
  std::vector<int32_t> t = Targets(s.N, s.V, seed);
  const int64_t block = GemmBlockRows(s.N, s.V, s.C);
  auto ignore = [&](int64_t a, int64_t b) { std::fill(t.begin() + a, t.begin() + std::min(b, s.N), -1); };
  ignore(0, 150);
  ignore(300, 330);
  ignore(s.N - 2 * block - 100, s.N);
  return t;
}

// Rows of the padding's blocks (the last block is whole: N is a multiple of the block).
constexpr LinearLossShape kSftShape{2432, 300, 32};

void PoisonPadding(std::vector<float>& x, LinearLossShape s) {
  const int64_t block = GemmBlockRows(s.N, s.V, s.C);
  for (int64_t n = s.N - 2 * block; n < s.N; ++n) x[n * s.C] = std::numeric_limits<float>::quiet_NaN();
}

// Blocks whose targets are all ignored are skipped, the rest is the unfused chain's bits:
// proven by NaNs in the skipped rows' hidden states, which a computed row carries into dy.
TEST(LinearSoftcapCrossEntropy, SkipsBlocksOfIgnoredTargetsWithTheSameBits) {
  const LinearLossShape s = kSftShape;
  ASSERT_EQ(s.N % GemmBlockRows(s.N, s.V, s.C), 0);
  std::vector<float> x = Random<float>(s.N * s.C, 31, 1.0);
  const std::vector<float> w = Random<float>(s.V * s.C, 32, 0.5);
  const std::vector<int32_t> targets = SftTargets(s, 33);
  const Outputs<float> want = Unfused(x, w, targets, s, 15.0f, 1.0);
  PoisonPadding(x, s);
  const Outputs<float> got = Fused(x, w, targets, s, 15.0f, 1.0);
  EXPECT_EQ(std::memcmp(&want.loss, &got.loss, sizeof(double)), 0) << want.loss << " vs " << got.loss;
  ExpectSameBits(want.dy, got.dy, "dy");
  ExpectSameBits(want.dx, got.dx, "dx");
}

// --- under bf16 autocast --------------------------------------------------------------------

// The unfused bf16 chain the compiled step runs: the lm_head's bf16 product, the bf16 softcap
// absorbing the logits' rounding with its loss, the loss's gradient rounded and carried through
// the softcap, dx = dy (w^T)^T as a bf16 product.
Outputs<float> UnfusedBf16(Bf16Gemm kernel, const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& wt, const std::vector<int32_t>& targets, LinearLossShape s,
                           float cap, double dloss) {
  std::vector<float> logits(s.N * s.V);
  Outputs<float> out{0, std::vector<float>(s.N * s.V), std::vector<float>(s.N * s.C)};
  GemmBf16Inputs(kernel, false, true, s.N, s.V, s.C, x.data(), s.C, w.data(), s.C, false, logits.data(), s.V);
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(s.N));
  out.loss = SoftcapBf16CrossEntropy(logits.data(), cap, /*round_input=*/true, logits.data(), targets.data(), s.N,
                                     s.V, scratch.get())
                 .loss;
  CrossEntropyBf16SoftcapGrad(logits.data(), targets.data(), s.N, s.V, dloss, cap, out.dy.data());
  GemmBf16Inputs(kernel, false, true, s.N, s.C, s.V, out.dy.data(), s.V, wt.data(), s.V, false, out.dx.data(), s.C);
  return out;
}

// dy f32, or prepared for the kernel (row-major or in slabs): then out.dy holds the prepared bytes.
Outputs<float> FusedBf16(Bf16Gemm kernel, const std::vector<float>& x, const std::vector<float>& w,
                         const std::vector<int32_t>& targets, LinearLossShape s,
                         float cap, double dloss, LinearLossDy dy_layout = LinearLossDy::kF32) {
  Outputs<float> out{0, std::vector<float>(s.N * s.V), std::vector<float>(s.N * s.C)};
  const ScratchBuffer scratch(LinearSoftcapBf16CrossEntropyWorkspaceBytes(kernel, s));
  out.loss = LinearSoftcapBf16CrossEntropyWithGrad(kernel, x.data(), w.data(), targets.data(), s, cap,
                                                   dloss, out.dy.data(), dy_layout, out.dx.data(), scratch.get())
                 .loss;
  return out;
}

// The bytes of `v` prepared for `kernel`, padded to whole floats (as a prepared dy sits in an
// f32 buffer).
std::vector<float> Prepared(Bf16Gemm kernel, const std::vector<float>& v) {
  std::vector<float> out(v.size());
  PrepareBf16Operand(kernel, v.data(), static_cast<int64_t>(v.size()), out.data());
  const size_t used = v.size() * Bf16PreparedElementBytes(kernel) / sizeof(float);
  std::fill(out.begin() + used, out.end(), 0.0f);
  return out;
}


// The inputs are f32 (not bf16 values): the products round them, as the compiled step's
// elided roundings rely on; w^T is its own buffer (the step's transpose), as unfused.
void ExpectFusedBf16IsUnfused(Bf16Gemm kernel, LinearLossShape s, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "N " << s.N << " V " << s.V << " C " << s.C);
  const std::vector<float> x = Random<float>(s.N * s.C, seed, 1.0), w = Random<float>(s.V * s.C, seed + 1, 0.5);
  const std::vector<float> wt = Transposed(w, s);
  const std::vector<int32_t> targets = Targets(s.N, s.V, seed + 2);
  const float cap = 15.0f;
  const double dloss = 0.75;
  const Outputs<float> want = UnfusedBf16(kernel, x, w, wt, targets, s, cap, dloss);
  const Outputs<float> got = FusedBf16(kernel, x, w, targets, s, cap, dloss);
  EXPECT_EQ(std::memcmp(&want.loss, &got.loss, sizeof(double)), 0) << want.loss << " vs " << got.loss;
  ExpectSameBits(want.dy, got.dy, "dy");
  ExpectSameBits(want.dx, got.dx, "dx");
  EXPECT_TRUE(std::isfinite(got.loss));
  EXPECT_GT(got.loss, 0.0);
  // dy written prepared: its bytes are the unfused dy's prepared, the loss and dx the same,
  // and the weight gradient read from them is the unfused one's.
  Outputs<float> prepared = FusedBf16(kernel, x, w, targets, s, cap, dloss, LinearLossDy::kPreparedRows);
  EXPECT_EQ(std::memcmp(&want.loss, &prepared.loss, sizeof(double)), 0);
  ExpectSameBits(want.dx, prepared.dx, "dx (dy prepared)");
  prepared.dy.resize(s.N * s.V * Bf16PreparedElementBytes(kernel) / sizeof(float));
  std::vector<float> want_prepared = Prepared(kernel, want.dy);
  want_prepared.resize(prepared.dy.size());
  ExpectSameBits(want_prepared, prepared.dy, "prepared dy");
  std::vector<float> dw(s.V * s.C), dw_prepared(s.V * s.C);
  GemmBf16Inputs(kernel, true, false, s.V, s.C, s.N, want.dy.data(), s.V, x.data(), s.C, false, dw.data(), s.C);
  GemmBf16PreparedA(kernel, true, false, s.V, s.C, s.N, prepared.dy.data(), s.V, x.data(), s.C, false,
                    dw_prepared.data(), s.C);
  ExpectSameBits(dw, dw_prepared, "dw from the prepared dy");
  // dy in the weight gradient's slabs: the loss and dx the same, and the weight gradient that
  // reads the slabs in place the unfused one's.
  Outputs<float> slabs = FusedBf16(kernel, x, w, targets, s, cap, dloss, LinearLossDy::kPreparedSlabs);
  EXPECT_EQ(std::memcmp(&want.loss, &slabs.loss, sizeof(double)), 0);
  ExpectSameBits(want.dx, slabs.dx, "dx (dy in slabs)");
  std::vector<float> dw_slabs(s.V * s.C);
  GemmBf16WeightGradOfDySlabs(kernel, slabs.dy.data(), x.data(), dw_slabs.data(), s.N, s.V, s.C, false);
  ExpectSameBits(dw, dw_slabs, "dw from dy in slabs");
}

TEST(LinearSoftcapBf16CrossEntropy, EqualsTheUnfusedChainBitForBitOnEachKernel) {
  for (Bf16Gemm kernel : SupportedBf16Gemms()) {
    SCOPED_TRACE(Bf16GemmName(kernel));
    ExpectFusedBf16IsUnfused(kernel, {37, 50, 16}, 11);
    ExpectFusedBf16IsUnfused(kernel, {1000, 700, 64}, 12);
    ExpectFusedBf16IsUnfused(kernel, {2048, 2048, 128}, 13);
    ExpectFusedBf16IsUnfused(kernel, {512, 8192, 256}, 14);  // the demo model's lm_head: dx sums 8192 products
  }
}

TEST(LinearSoftcapBf16CrossEntropy, SameBitsOnOneAndThreeThreads) {
  const int saved = NumThreads();
  for (int threads : {1, 3}) {
    SetNumThreads(threads);
    for (Bf16Gemm kernel : SupportedBf16Gemms()) ExpectFusedBf16IsUnfused(kernel, {1200, 500, 48}, 15);
  }
  SetNumThreads(saved);
}

TEST(LinearSoftcapBf16CrossEntropy, SkipsBlocksOfIgnoredTargetsWithTheSameBits) {
  const LinearLossShape s = kSftShape;
  const std::vector<float> x = Random<float>(s.N * s.C, 41, 1.0);
  const std::vector<float> w = Random<float>(s.V * s.C, 42, 0.5);
  const std::vector<float> wt = Transposed(w, s);
  const std::vector<int32_t> targets = SftTargets(s, 43);
  std::vector<float> poisoned = x;
  PoisonPadding(poisoned, s);
  for (Bf16Gemm kernel : SupportedBf16Gemms()) {
    SCOPED_TRACE(Bf16GemmName(kernel));
    const Outputs<float> want = UnfusedBf16(kernel, x, w, wt, targets, s, 15.0f, 1.0);
    for (bool prepared : {false, true}) {
      Outputs<float> got = FusedBf16(kernel, poisoned, w, targets, s, 15.0f, 1.0,
                                     prepared ? LinearLossDy::kPreparedRows : LinearLossDy::kF32);
      EXPECT_EQ(std::memcmp(&want.loss, &got.loss, sizeof(double)), 0) << want.loss << " vs " << got.loss;
      ExpectSameBits(want.dx, got.dx, "dx");
      if (!prepared) {
        ExpectSameBits(want.dy, got.dy, "dy");
        // In slabs, the skipped blocks' zeros land in every slab: the weight gradient is the same.
        const Outputs<float> slabs = FusedBf16(kernel, poisoned, w, targets, s, 15.0f, 1.0,
                                               LinearLossDy::kPreparedSlabs);
        ExpectSameBits(want.dx, slabs.dx, "dx (dy in slabs)");
        std::vector<float> dw(s.V * s.C), dw_slabs(s.V * s.C);
        GemmBf16Inputs(kernel, true, false, s.V, s.C, s.N, want.dy.data(), s.V, x.data(), s.C, false, dw.data(), s.C);
        GemmBf16WeightGradOfDySlabs(kernel, slabs.dy.data(), x.data(), dw_slabs.data(), s.N, s.V, s.C, false);
        ExpectSameBits(dw, dw_slabs, "dw from dy in slabs");
      } else {
        got.dy.resize(s.N * s.V * Bf16PreparedElementBytes(kernel) / sizeof(float));
        std::vector<float> want_prepared = Prepared(kernel, want.dy);
        want_prepared.resize(got.dy.size());
        ExpectSameBits(want_prepared, got.dy, "prepared dy");
      }
    }
  }
}

// The fusion must round: dropping the logits' rounding (or the cotangent's) changes bits,
// so this comparison can fail.
TEST(LinearSoftcapBf16CrossEntropy, DiffersFromTheF32Chain) {
  const LinearLossShape s{64, 300, 32};
  const std::vector<float> x = Random<float>(s.N * s.C, 21, 1.0), w = Random<float>(s.V * s.C, 22, 0.5);
  const std::vector<int32_t> targets = Targets(s.N, s.V, 23);
  const Outputs<float> bf16 = FusedBf16(Bf16Gemm::kFp32, x, w, targets, s, 15.0f, 1.0);
  const Outputs<float> f32 = Fused<float>(x, w, targets, s, 15.0f, 1.0);
  EXPECT_NE(bf16.dy, f32.dy);
  EXPECT_NEAR(bf16.loss, f32.loss, 2e-2 * f32.loss);
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
