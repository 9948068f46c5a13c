// The optimizer's Muon at the CPU benchmark config's shapes (depth 4: 16 matrices [256, 256],
// 4 of [1024, 256], 4 of [256, 1024]), one MuonUpdate per matrix (the interpreter's launches,
// and the compiled step's before it grouped them) against MuonGroupUpdate per shape (the
// compiled step's muon_group), fp32 and with Newton-Schulz in bf16 (--dtype=bfloat16), in one
// process: the ratio of the rows is the grouping's gain. 2 threads (--threads=N to change).
#include <cstdint>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/kernels/cpu/benchmark_main.h"
#include "runtime/kernels/cpu/muon_group.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {
namespace {

struct Shape {
  int64_t count, rows, cols;
};
constexpr Shape kShapes[] = {{16, 256, 256}, {4, 1024, 256}, {4, 256, 1024}};

/// Every matrix of the step's Muon: parameter, momentum buffer, gradient.
struct Matrices {
  std::vector<std::vector<std::vector<float>>> param, buf, grad;  // [shape][matrix]
  Matrices() {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.f, 0.02f);
    auto random = [&](int64_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = d(rng);
      return v;
    };
    for (const Shape& s : kShapes) {
      param.emplace_back(), buf.emplace_back(), grad.emplace_back();
      for (int64_t i = 0; i < s.count; ++i) {
        param.back().push_back(random(s.rows * s.cols));
        buf.back().push_back(random(s.rows * s.cols));
        grad.back().push_back(random(s.rows * s.cols));
      }
    }
  }
};

constexpr double kLr = 0.02, kMomentum = 0.95;

void BM_MuonPerMatrix(benchmark::State& state) {
  const bool bf16 = state.range(0) != 0;
  Matrices m;
  std::vector<float> scratch(MuonScratchSize(1024, 256));
  for (auto _ : state) {
    for (size_t s = 0; s < std::size(kShapes); ++s) {
      for (int64_t i = 0; i < kShapes[s].count; ++i) {
        MuonUpdate(m.param[s][i].data(), m.buf[s][i].data(), m.grad[s][i].data(), kShapes[s].rows, kShapes[s].cols,
                   MuonHyper{kLr, kMomentum, bf16}, scratch.data());
      }
    }
  }
  state.SetLabel(bf16 ? "bf16 Newton-Schulz" : "fp32");
}
BENCHMARK(BM_MuonPerMatrix)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MuonGroupPerShape(benchmark::State& state) {
  const bool bf16 = state.range(0) != 0;
  Matrices m;
  const int slots = MuonGroupSlots(16, NumThreads());
  std::vector<float> scratch(slots * MuonGroupSlotStride(1024, 256, sizeof(float)));
  std::vector<std::vector<MuonGroupMatrix<float>>> groups(std::size(kShapes));
  for (size_t s = 0; s < std::size(kShapes); ++s) {
    for (int64_t i = 0; i < kShapes[s].count; ++i) {
      groups[s].push_back({m.param[s][i].data(), m.buf[s][i].data(), m.grad[s][i].data(), kLr});
    }
  }
  for (auto _ : state) {
    for (size_t s = 0; s < std::size(kShapes); ++s) {
      MuonGroupUpdate(groups[s].data(), kShapes[s].count, kShapes[s].rows, kShapes[s].cols, kMomentum, bf16,
                      scratch.data(), MuonGroupSlots(kShapes[s].count, NumThreads()));
    }
  }
  state.SetLabel(bf16 ? "bf16 Newton-Schulz" : "fp32");
}
BENCHMARK(BM_MuonGroupPerShape)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpt_sft::runtime::kernels

int main(int argc, char** argv) { return gpt_sft::runtime::kernels::RunKernelBenchmarks(argc, argv); }
