// The lm_head's loss and its gradient down to dx at the CPU benchmark config's shapes
// (N = 8192 rows of C = 256, vocab V = 8192, float32), fused (LinearSoftcapCrossEntropyWithGrad,
// what the compiled step runs) against the unfused chain the interpreter runs (matmul,
// softcap + loss, the loss gradient through the softcap, dx = dy w), in one process: the
// ratio of the two rows is the fusion's gain. 2 threads (--threads=N to change).
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/kernels/cpu/benchmark_main.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/linear_cross_entropy.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr LinearLossShape kShape{8192, 8192, 256};
constexpr float kCap = 15.f;

struct Operands {
  std::vector<float> x, w, wt, dy, dx, dw;
  std::vector<int32_t> targets;
  Operands() : x(kShape.N * kShape.C), w(kShape.V * kShape.C), wt(kShape.C * kShape.V), dy(kShape.N * kShape.V),
               dx(kShape.N * kShape.C), dw(kShape.V * kShape.C), targets(kShape.N) {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.f, 1.f);
    for (float& v : x) v = d(rng);
    for (float& v : w) v = 0.3f * d(rng);
    for (int64_t v = 0; v < kShape.V; ++v)
      for (int64_t c = 0; c < kShape.C; ++c) wt[c * kShape.V + v] = w[v * kShape.C + c];
    for (int64_t n = 0; n < kShape.N; ++n) targets[n] = n % 5 == 0 ? -1 : static_cast<int32_t>((n * 131) % kShape.V);
  }
};

void BM_LmHeadLossUnfused(benchmark::State& state) {
  Operands o;
  std::vector<float> logits(kShape.N * kShape.V), y(kShape.N * kShape.V);
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(kShape.N));
  for (auto _ : state) {
    Matmul(o.x.data(), o.w.data(), logits.data(), kShape.N, kShape.V, kShape.C);
    benchmark::DoNotOptimize(
        SoftcapCrossEntropy(logits.data(), kCap, y.data(), o.targets.data(), kShape.N, kShape.V, scratch.get()).loss);
    CrossEntropySoftcapGrad(y.data(), o.targets.data(), kShape.N, kShape.V, 1.0, kCap, o.dy.data());
    Matmul(o.dy.data(), o.wt.data(), o.dx.data(), kShape.N, kShape.C, kShape.V);
  }
}
BENCHMARK(BM_LmHeadLossUnfused)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LmHeadLossFused(benchmark::State& state) {
  Operands o;
  const ScratchBuffer scratch(LinearSoftcapCrossEntropyWorkspaceBytes<float>(kShape));
  for (auto _ : state) {
    benchmark::DoNotOptimize(LinearSoftcapCrossEntropyWithGrad(o.x.data(), o.w.data(),
                                                               o.targets.data(), kShape, kCap, 1.0, o.dy.data(),
                                                               o.dx.data(), scratch.get())
                                 .loss);
  }
}
BENCHMARK(BM_LmHeadLossFused)->Unit(benchmark::kMillisecond)->UseRealTime();

// Under bf16 autocast (the bf16 matmuls' kernel, matmul_bf16.h): the unfused chain the
// interpreter runs and the fused launch the compiled step runs (dy written prepared for the
// bf16 GEMMs), each with the weight gradient that reads dy.
void BM_LmHeadLossBf16Unfused(benchmark::State& state) {
  Operands o;
  std::vector<float> logits(kShape.N * kShape.V);
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(kShape.N));
  for (auto _ : state) {
    MatmulBf16Inputs(o.x.data(), o.w.data(), logits.data(), kShape.N, kShape.V, kShape.C);
    benchmark::DoNotOptimize(SoftcapBf16CrossEntropy(logits.data(), kCap, /*round_input=*/true, logits.data(),
                                                     o.targets.data(), kShape.N, kShape.V, scratch.get())
                                 .loss);
    CrossEntropyBf16SoftcapGrad(logits.data(), o.targets.data(), kShape.N, kShape.V, 1.0, kCap, o.dy.data());
    MatmulBf16Inputs(o.dy.data(), o.wt.data(), o.dx.data(), kShape.N, kShape.C, kShape.V);
    MatmulGradWeightBf16Inputs(o.dy.data(), o.x.data(), o.dw.data(), kShape.N, kShape.V, kShape.C, false);
  }
  state.SetLabel(Bf16GemmDescription());
}
BENCHMARK(BM_LmHeadLossBf16Unfused)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LmHeadLossBf16Fused(benchmark::State& state) {
  Operands o;
  const ScratchBuffer scratch(LinearSoftcapBf16CrossEntropyWorkspaceBytes(ActiveBf16Gemm(), kShape));
  for (auto _ : state) {
    benchmark::DoNotOptimize(LinearSoftcapBf16CrossEntropyWithGrad(ActiveBf16Gemm(), o.x.data(), o.w.data(),
                                                                   o.targets.data(), kShape, kCap, 1.0,
                                                                   o.dy.data(), LinearLossDy::kPreparedSlabs, o.dx.data(),
                                                                   scratch.get())
                                 .loss);
    MatmulGradWeightBf16PreparedDySlabs(o.dy.data(), o.x.data(), o.dw.data(), kShape.N, kShape.V, kShape.C, false);
  }
  state.SetLabel(Bf16GemmDescription());
}
BENCHMARK(BM_LmHeadLossBf16Fused)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpt_sft::runtime::kernels

int main(int argc, char** argv) { return gpt_sft::runtime::kernels::RunKernelBenchmarks(argc, argv); }
