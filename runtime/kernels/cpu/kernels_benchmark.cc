// The CPU kernels at the CPU benchmark config's shapes (depth 4, width C=256, H=2 heads of
// D=128, vocab V=8192, [B,T] = [4, 2048], float32), on 2 threads (kernels' pool and
// OpenBLAS: SetNumThreads(2); override with --threads=N before the benchmark flags).
// Counters: FLOP/s where the FLOPs are well defined (matmul: 2MNK; causal attention:
// 4 B H D T(T+1)/2 forward, 2.5x that backward as FlashAttention counts), B/s for the
// memory-bound rows.
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/kernels/cpu/amx_gemm_bf16.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/benchmark_main.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/onednn_gemm.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/tile_gemm.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kB = 4, kT = 2048, kC = 256, kH = 2, kD = 128, kV = 8192, kBT = kB * kT;

std::vector<float> Random(int64_t n, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void Rate(benchmark::State& state, const char* name, double per_iteration) {
  state.counters[name] =
      benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// The model's Linear shapes as (N, K): y[BT, N] = x[BT, K] w[N, K]^T, and both VJPs.
void BM_Matmul(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  std::vector<float> x = Random(kBT * K, 1), w = Random(N * K, 2), y(kBT * N);
  for (auto _ : state) Matmul(x.data(), w.data(), y.data(), kBT, N, K);
  Rate(state, "FLOP/s", 2.0 * kBT * N * K);
}
void BM_MatmulGradInput(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  std::vector<float> dy = Random(kBT * N, 1), w = Random(N * K, 2), dx(kBT * K);
  for (auto _ : state) MatmulGradInput(dy.data(), w.data(), dx.data(), kBT, N, K);
  Rate(state, "FLOP/s", 2.0 * kBT * N * K);
}
void BM_MatmulGradWeight(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  std::vector<float> dy = Random(kBT * N, 1), x = Random(kBT * K, 2), dw(N * K);
  for (auto _ : state) MatmulGradWeight(dy.data(), x.data(), dw.data(), kBT, N, K, true);
  Rate(state, "FLOP/s", 2.0 * kBT * N * K);
}
#define MODEL_LINEARS(bm) \
  BENCHMARK(bm)->Args({kC, kC})->Args({4 * kC, kC})->Args({kC, 4 * kC})->Args({kV, kC})->Unit(benchmark::kMillisecond)->UseRealTime()
MODEL_LINEARS(BM_Matmul);
MODEL_LINEARS(BM_MatmulGradInput);
MODEL_LINEARS(BM_MatmulGradWeight);

// The same on bf16 values (--dtype=bfloat16), by each kernel (range 2: 0 oneDNN, 1 the fp32
// fallback, 2 our AMX GEMM), labelled with what ran. The VJP's dx is a matmul by the
// transposed weight, so (N, K) also takes the lm_head's dx shape (C, V).
std::vector<float> RandomBf16(int64_t n, uint32_t seed) {
  std::vector<float> v = Random(n, seed);
  for (float& x : v) x = RoundToBf16(x);
  return v;
}
Bf16Gemm KernelArg(benchmark::State& state) {
  const Bf16Gemm kernel = state.range(2) == 0 ? Bf16Gemm::kOneDnn : state.range(2) == 1 ? Bf16Gemm::kFp32 : Bf16Gemm::kAmx;
  if (!Bf16GemmSupported(kernel)) state.SkipWithError("this CPU cannot run this kernel");
  return kernel;
}
std::string KernelLabel(Bf16Gemm kernel) {
  if (kernel == Bf16Gemm::kFp32) return "fp32 sgemm";
  if (kernel == Bf16Gemm::kAmx) return "amx (own AMX tiles)";
  std::string used;
  for (const std::string& impl : OneDnnKernelsUsed()) used += (used.empty() ? "" : ",") + impl;
  return "onednn[" + used + "]";
}
void BM_MatmulBf16(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  const Bf16Gemm kernel = KernelArg(state);
  std::vector<float> x = RandomBf16(kBT * K, 1), w = RandomBf16(N * K, 2), y(kBT * N);
  for (auto _ : state) GemmBf16Inputs(kernel, false, true, kBT, N, K, x.data(), K, w.data(), K, false, y.data(), N);
  Rate(state, "FLOP/s", 2.0 * kBT * N * K);
  state.SetLabel(KernelLabel(kernel));
}
void BM_MatmulGradWeightBf16(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  const Bf16Gemm kernel = KernelArg(state);
  std::vector<float> dy = RandomBf16(kBT * N, 1), x = RandomBf16(kBT * K, 2), dw(N * K);
  for (auto _ : state) GemmBf16Inputs(kernel, true, false, N, K, kBT, dy.data(), N, x.data(), K, true, dw.data(), K);
  Rate(state, "FLOP/s", 2.0 * kBT * N * K);
  state.SetLabel(KernelLabel(kernel));
}
void ModelLinearsBf16(benchmark::internal::Benchmark* b) {
  for (int64_t kernel : {0, 1, 2})
    for (auto [n, k] : {std::pair{kC, kC}, {4 * kC, kC}, {kC, 4 * kC}, {kV, kC}, {kC, kV}}) b->Args({n, k, kernel});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_MatmulBf16)->Apply(ModelLinearsBf16);
BENCHMARK(BM_MatmulGradWeightBf16)->Apply(ModelLinearsBf16);

// One row block of a bf16 GEMM on one thread, operands already bf16 bits (what the step's
// prepared operands hand the kernel): oneDNN's primitive (range 3: 0) against our AMX GEMM
// (1, B packed once outside the loop, as a GEMM's blocks share it). Ranges: trans_a, M, N, K.
void BM_Bf16GemmBlock(benchmark::State& state) {
  const bool trans_a = state.range(0) != 0, amx = state.range(4) != 0;
  const int64_t M = state.range(1), N = state.range(2), K = state.range(3);
  if (amx ? !AmxGemmBf16Supported() : !OneDnnHasBf16DotProduct()) return state.SkipWithError("not on this CPU");
  std::vector<uint16_t> a(M * K), b(N * K);
  std::mt19937 rng(5);
  for (auto& x : a) x = static_cast<uint16_t>(0x3f00 + rng() % 256);
  for (auto& x : b) x = static_cast<uint16_t>(0xbf00 + rng() % 256);
  const ScratchBuffer packed_bytes(amx ? AmxPackedBBytes(N, K) : 0);  // on a cache line, as the step's
  uint32_t* packed = reinterpret_cast<uint32_t*>(packed_bytes.get().data);
  if (amx) AmxPackB(/*trans_b=*/true, N, K, b.data(), K, 0, AmxPackedBBlocks(N), packed);
  std::vector<float> c(M * N);
  const int64_t lda = trans_a ? M : K;
  for (auto _ : state) {
    if (amx) {
      AmxGemmBf16(trans_a, M, N, K, a.data(), lda, packed, false, c.data(), N);
    } else {
      OneDnnGemmBf16(trans_a, /*trans_b=*/true, M, N, K, a.data(), lda, b.data(), K, false, c.data(), N);
    }
  }
  Rate(state, "FLOP/s", 2.0 * M * N * K);
  state.SetLabel(amx ? "amx (own AMX tiles)" : "onednn");
}
BENCHMARK(BM_Bf16GemmBlock)
    ->ArgsProduct({{0}, {1024}, {256, 1024}, {256, 1024}, {0, 1}})
    ->ArgsProduct({{1}, {128}, {256, 1024}, {kBT}, {0, 1}})
    ->Args({1, 1024, 256, kBT, 0})
    ->Args({1, 1024, 256, kBT, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RmsNorm(benchmark::State& state) {
  std::vector<float> x = Random(kBT * kC, 3), y(kBT * kC);
  for (auto _ : state) RmsNorm(x.data(), y.data(), kBT, kC);
  Rate(state, "B/s", 2.0 * kBT * kC * sizeof(float));
}
BENCHMARK(BM_RmsNorm)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RmsNormGrad(benchmark::State& state) {
  std::vector<float> x = Random(kBT * kC, 3), dy = Random(kBT * kC, 4), dx(kBT * kC);
  for (auto _ : state) RmsNormGrad(x.data(), dy.data(), dx.data(), kBT, kC);
  Rate(state, "B/s", 3.0 * kBT * kC * sizeof(float));
}
BENCHMARK(BM_RmsNormGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

std::vector<int32_t> Targets() {
  std::vector<int32_t> targets(kBT);
  for (int64_t i = 0; i < kBT; ++i) targets[i] = i % 5 == 0 ? -1 : static_cast<int32_t>((i * 131) % kV);
  return targets;
}

void BM_CrossEntropy(benchmark::State& state) {
  std::vector<float> logits = Random(kBT * kV, 4, 3.f);
  const std::vector<int32_t> targets = Targets();
  for (auto _ : state) benchmark::DoNotOptimize(CrossEntropy(logits.data(), targets.data(), kBT, kV).loss);
  Rate(state, "B/s", 1.0 * kBT * kV * sizeof(float));
}
BENCHMARK(BM_CrossEntropy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CrossEntropyGrad(benchmark::State& state) {
  std::vector<float> logits = Random(kBT * kV, 4, 3.f), dlogits(kBT * kV);
  const std::vector<int32_t> targets = Targets();
  for (auto _ : state) CrossEntropyGrad(logits.data(), targets.data(), kBT, kV, 1.0, dlogits.data());
  Rate(state, "B/s", 2.0 * kBT * kV * sizeof(float));
}
BENCHMARK(BM_CrossEntropyGrad)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Softcap(benchmark::State& state) {
  std::vector<float> logits = Random(kBT * kV, 4, 3.f), y(kBT * kV);
  for (auto _ : state) Softcap(logits.data(), y.data(), kBT * kV, 15.f);
  Rate(state, "B/s", 2.0 * kBT * kV * sizeof(float));
}
BENCHMARK(BM_Softcap)->Unit(benchmark::kMillisecond)->UseRealTime();

// One attention tile product on one thread, operands in cache: (m, n, k) =
// (64, 64, 128) for S = Q K^T, (64, 128, 64) for P V.
void BM_TileGemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2), c(m * n);
  for (auto _ : state) {
    TileGemm<float>(m, n, k, a.data(), k, b.data(), n, c.data(), n, true);
    benchmark::ClobberMemory();
  }
  Rate(state, "FLOP/s", 2.0 * m * n * k);
}
BENCHMARK(BM_TileGemm)->Args({64, 64, 128})->Args({64, 128, 64});

// The same on bf16 values by tile_gemm_bf16.h's kernels, packing included: arg 3 is 0 for
// AMX, 1 for AVX512_BF16 (each skipped where the CPU lacks it), 2 for the fp32 FMA fallback.
void BM_TileGemmBf16(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const Bf16TileKernel kernel = state.range(3) == 0   ? Bf16TileKernel::kAmx
                                : state.range(3) == 1 ? Bf16TileKernel::kDpBf16
                                                      : Bf16TileKernel::kFp32;
  if (!Bf16TileKernelSupported(kernel)) return state.SkipWithError("this CPU cannot run the kernel");
  std::vector<float> a = Random(m * k, 1), b = Random(k * n, 2), c(m * n);
  RoundBf16(a.data(), a.data(), m * k);
  RoundBf16(b.data(), b.data(), k * n);
  std::vector<uint16_t> scratch(TileGemmBf16ScratchElements(m, n, k));
  for (auto _ : state) {
    TileGemmBf16(m, n, k, a.data(), k, false, b.data(), n, c.data(), n, true, scratch.data(), kernel);
    benchmark::ClobberMemory();
  }
  Rate(state, "FLOP/s", 2.0 * m * n * k);
}
BENCHMARK(BM_TileGemmBf16)->ArgsProduct({{64}, {64}, {128}, {0, 1, 2}})->ArgsProduct({{64}, {128}, {64}, {0, 1, 2}});

// Attention on q, k, v [4, 2048, 2, 128] as after QK-norm (unit rms rows). Arg 0: plain
// causal; arg 1: best-fit packed rows (segments of 300 tokens, the last one shorter).
struct AttentionInputs {
  std::vector<float> q, k, v, dout, out, lse, dq, dk, dv;
  std::vector<int32_t> seg;
  AttentionInputs(bool packed)
      : q(Random(kBT * kH * kD, 5)), k(Random(kBT * kH * kD, 6)), v(Random(kBT * kH * kD, 7)),
        dout(Random(kBT * kH * kD, 8, 1e-3f)), out(kBT * kH * kD), lse(kB * kH * kT), dq(q.size()), dk(q.size()),
        dv(q.size()) {
    if (packed)
      for (int64_t i = 0; i < kBT; ++i) seg.push_back(static_cast<int32_t>((i % kT) / 300));
  }
  const int32_t* segments() const { return seg.empty() ? nullptr : seg.data(); }
};
constexpr AttentionShape kAttn{kB, kT, kH, kH, kD};
constexpr double kAttnForwardFlops = 4.0 * kB * kH * kD * (kT * (kT + 1) / 2.0);

void BM_AttentionForward(benchmark::State& state) {
  AttentionInputs in(state.range(0) == 1);
  for (auto _ : state)
    Attention(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(), in.lse.data());
  Rate(state, "FLOP/s", kAttnForwardFlops);  // for packed rows: causal-equivalent FLOPs
}
BENCHMARK(BM_AttentionForward)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

void BM_AttentionBackward(benchmark::State& state) {
  AttentionInputs in(state.range(0) == 1);
  Attention(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(), in.lse.data());
  for (auto _ : state)
    AttentionGrad(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(), in.lse.data(),
                  in.dout.data(), in.dq.data(), in.dk.data(), in.dv.data());
  Rate(state, "FLOP/s", 2.5 * kAttnForwardFlops);
}
BENCHMARK(BM_AttentionBackward)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

void BM_AttentionForwardBackward(benchmark::State& state) {
  AttentionInputs in(false);
  for (auto _ : state) {
    Attention(in.q.data(), in.k.data(), in.v.data(), nullptr, kAttn, in.out.data(), in.lse.data());
    AttentionGrad(in.q.data(), in.k.data(), in.v.data(), nullptr, kAttn, in.out.data(), in.lse.data(),
                  in.dout.data(), in.dq.data(), in.dk.data(), in.dv.data());
  }
  Rate(state, "FLOP/s", 3.5 * kAttnForwardFlops);
}
BENCHMARK(BM_AttentionForwardBackward)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

// The same under bf16 autocast: q, k, v, dout rounded to bf16 values, attention.h's
// *Bf16Inputs kernels (tile products by tile_gemm_bf16.h's kernel: the context's
// bf16_tile_gemm; GPT_SFT_CPU_BF16_TILE=amx|dpbf16|fp32 picks one). Arg as above.
struct Bf16AttentionInputs : AttentionInputs {
  explicit Bf16AttentionInputs(bool packed) : AttentionInputs(packed) {
    for (std::vector<float>* x : {&q, &k, &v, &dout}) RoundBf16(x->data(), x->data(), int64_t(x->size()));
  }
};

void BM_AttentionForwardBf16(benchmark::State& state) {
  Bf16AttentionInputs in(state.range(0) == 1);
  for (auto _ : state)
    AttentionBf16Inputs(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(), in.lse.data());
  Rate(state, "FLOP/s", kAttnForwardFlops);
}
BENCHMARK(BM_AttentionForwardBf16)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

void BM_AttentionBackwardBf16(benchmark::State& state) {
  Bf16AttentionInputs in(state.range(0) == 1);
  AttentionBf16Inputs(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(), in.lse.data());
  for (auto _ : state)
    AttentionGradBf16Inputs(in.q.data(), in.k.data(), in.v.data(), in.segments(), kAttn, in.out.data(),
                            in.lse.data(), in.dout.data(), in.dq.data(), in.dk.data(), in.dv.data());
  Rate(state, "FLOP/s", 2.5 * kAttnForwardFlops);
}
BENCHMARK(BM_AttentionBackwardBf16)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

// The step's real sequence: the q projection (OpenBLAS threads), then attention (the pool).
// Compare with the sum of the two rows alone to see the pools get in each other's way.
void BM_MatmulThenAttentionForward(benchmark::State& state) {
  AttentionInputs in(false);
  std::vector<float> x = Random(kBT * kC, 1), w = Random(kC * kC, 2), y(kBT * kC);
  for (auto _ : state) {
    Matmul(x.data(), w.data(), y.data(), kBT, kC, kC);
    Attention(in.q.data(), in.k.data(), in.v.data(), nullptr, kAttn, in.out.data(), in.lse.data());
  }
}
BENCHMARK(BM_MatmulThenAttentionForward)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

}  // namespace
}  // namespace gpt_sft::runtime::kernels

int main(int argc, char** argv) {
  return gpt_sft::runtime::kernels::RunKernelBenchmarks(
      argc, argv,
      {{"tile_gemm", gpt_sft::runtime::kernels::TileGemmKernelName()},
       {"bf16_tile_gemm", gpt_sft::runtime::kernels::Bf16TileKernelName()}});
}
