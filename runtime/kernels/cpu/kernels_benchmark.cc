// The CPU kernels at the CPU benchmark config's shapes (depth 4, width 256, 2 heads of 128,
// vocab 8192, [4, 2048], float32): GFLOP/s of the matmuls and the time of the ops that the
// compiled path must fuse or tile. Threads: whatever OpenBLAS uses (OPENBLAS_NUM_THREADS).
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/rms_norm.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kB = 4, kT = 2048, kC = 256, kH = 2, kD = 128, kV = 8192, kBT = kB * kT;

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 0.1f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// y[BT, N] = x[BT, K] @ w[N, K]^T for the model's Linear shapes: (N, K) as args.
void BM_Matmul(benchmark::State& state) {
  const int64_t N = state.range(0), K = state.range(1);
  std::vector<float> x = Random(kBT * K, 1), w = Random(N * K, 2), y(kBT * N);
  for (auto _ : state) Matmul(x.data(), w.data(), y.data(), kBT, N, K);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kBT * N * K, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Matmul)->Args({kC, kC})->Args({4 * kC, kC})->Args({kC, 4 * kC})->Args({kV, kC})->Unit(benchmark::kMillisecond);

void BM_RmsNorm(benchmark::State& state) {
  std::vector<float> x = Random(kBT * kC, 3), y(kBT * kC);
  for (auto _ : state) RmsNorm(x.data(), y.data(), kBT, kC);
}
BENCHMARK(BM_RmsNorm)->Unit(benchmark::kMillisecond);

void BM_CrossEntropy(benchmark::State& state) {
  std::vector<float> logits = Random(kBT * kV, 4);
  std::vector<int32_t> targets(kBT);
  for (int64_t i = 0; i < kBT; ++i) targets[i] = static_cast<int32_t>(i % kV);
  for (auto _ : state) benchmark::DoNotOptimize(CrossEntropy(logits.data(), targets.data(), kBT, kV).loss);
}
BENCHMARK(BM_CrossEntropy)->Unit(benchmark::kMillisecond);

// The reference attention: exact and single-threaded. Causal FLOPs: 2 * 2 * B H T^2/2 D.
void BM_AttentionForward(benchmark::State& state) {
  const int64_t n = kBT * kH * kD;
  std::vector<float> q = Random(n, 5), k = Random(n, 6), v = Random(n, 7), out(n), lse(kB * kH * kT);
  for (auto _ : state) Attention(q.data(), k.data(), v.data(), nullptr, {kB, kT, kH, kH, kD}, out.data(), lse.data());
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kB * kH * kT * kT * kD, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_AttentionForward)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace gpt_sft::runtime::kernels
