// The interpreter's own cost: an MLP block forward and backward (rms_norm, c_fc,
// relu_square, c_proj, residual, and their VJPs) at the CPU benchmark config's shapes
// ([B*T, C] = [8192, 256], hidden 4C), run through the Interpreter and as the same kernel
// calls written out by hand. The difference is dispatch, shape checks, the transpose the
// matmul VJP materialises, and allocation (served from the cache after the first run).
// Also a chain of tiny ops, to show the per-op overhead. 2 threads (--threads=N to change).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/test_module.h"
#include "runtime/kernels/cpu/benchmark_main.h"
#include "runtime/kernels/cpu/finite_difference.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/rms_norm.h"

namespace gpt_sft::runtime {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
constexpr int64_t kN = 8192, kC = 256, kF = 4 * kC;

constexpr char kMlpIr[] = R"(
  func.func @mlp(%x: tensor<8192x256xf32>, %fc: tensor<1024x256xf32>, %proj: tensor<256x1024xf32>,
                 %dy: tensor<8192x256xf32>)
      -> (tensor<8192x256xf32>, tensor<8192x256xf32>, tensor<1024x256xf32>, tensor<256x1024xf32>) {
    %n = gpt.rms_norm %x : tensor<8192x256xf32>
    %h = gpt.matmul %n, %fc : tensor<8192x256xf32>, tensor<1024x256xf32>
    %a = gpt.relu_square %h : tensor<8192x1024xf32>
    %p = gpt.matmul %a, %proj : tensor<8192x1024xf32>, tensor<256x1024xf32>
    %y = gpt.add %x, %p : tensor<8192x256xf32>, tensor<8192x256xf32>
    %dproj = gpt.matmul_weight_grad %dy, %a : tensor<8192x256xf32>, tensor<8192x1024xf32>
    %projt = gpt.transpose %proj [1, 0] : tensor<256x1024xf32>
    %da = gpt.matmul %dy, %projt : tensor<8192x256xf32>, tensor<1024x256xf32>
    %dh = gpt.relu_square_grad %h, %da : tensor<8192x1024xf32>, tensor<8192x1024xf32>
    %dfc = gpt.matmul_weight_grad %dh, %n : tensor<8192x1024xf32>, tensor<8192x256xf32>
    %fct = gpt.transpose %fc [1, 0] : tensor<1024x256xf32>
    %dn = gpt.matmul %dh, %fct : tensor<8192x1024xf32>, tensor<256x1024xf32>
    %dxn = gpt.rms_norm_grad %x, %dn : tensor<8192x256xf32>, tensor<8192x256xf32>
    %dx = gpt.add %dy, %dxn : tensor<8192x256xf32>, tensor<8192x256xf32>
    return %y, %dx, %dfc, %dproj
        : tensor<8192x256xf32>, tensor<8192x256xf32>, tensor<1024x256xf32>, tensor<256x1024xf32>
  })";

Tensor Random(Shape shape, uint32_t seed) {
  std::vector<double> d = k::testing::Random(NumElements(shape), seed);
  return Tensor::FromVector<float>(shape, std::vector<float>(d.begin(), d.end()));
}

void BM_MlpThroughInterpreter(benchmark::State& state) {
  auto module = testing::TestModule::Parse(kMlpIr);
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  auto interpreter = (*module)->NewInterpreter();
  std::vector<Tensor> args = {Random({kN, kC}, 1), Random({kF, kC}, 2), Random({kC, kF}, 3), Random({kN, kC}, 4)};
  for (auto _ : state) {
    auto results = interpreter->Run("mlp", args);
    if (!results.ok()) return state.SkipWithError(std::string(results.status().message()).c_str());
    benchmark::DoNotOptimize(results->front().raw_data());
  }
  state.counters["peak_MiB"] = double(interpreter->allocator_stats().peak_bytes_live) / (1 << 20);
}

void BM_MlpKernelsByHand(benchmark::State& state) {
  Tensor x = Random({kN, kC}, 1), fc = Random({kF, kC}, 2), proj = Random({kC, kF}, 3), dy = Random({kN, kC}, 4);
  std::vector<float> n(kN * kC), h(kN * kF), a(kN * kF), p(kN * kC), y(kN * kC), dproj(kC * kF), da(kN * kF),
      dh(kN * kF), dfc(kF * kC), dn(kN * kC), dxn(kN * kC), dx(kN * kC);
  for (auto _ : state) {
    k::RmsNorm(x.data<float>(), n.data(), kN, kC);
    k::Matmul(n.data(), fc.data<float>(), h.data(), kN, kF, kC);
    k::ReluSquare(h.data(), a.data(), kN * kF);
    k::Matmul(a.data(), proj.data<float>(), p.data(), kN, kC, kF);
    k::Add(x.data<float>(), p.data(), y.data(), kN * kC);
    k::MatmulGradWeight(dy.data<float>(), a.data(), dproj.data(), kN, kC, kF, false);
    k::MatmulGradInput(dy.data<float>(), proj.data<float>(), da.data(), kN, kC, kF);
    k::ReluSquareGrad(h.data(), da.data(), dh.data(), kN * kF);
    k::MatmulGradWeight(dh.data(), n.data(), dfc.data(), kN, kF, kC, false);
    k::MatmulGradInput(dh.data(), fc.data<float>(), dn.data(), kN, kF, kC);
    k::RmsNormGrad(x.data<float>(), dn.data(), dxn.data(), kN, kC);
    k::Add(dy.data<float>(), dxn.data(), dx.data(), kN * kC);
    benchmark::DoNotOptimize(dx.data());
  }
}

constexpr char kTinyChainIr[] = R"(
  func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
    %a = gpt.add %x, %x : tensor<16xf32>, tensor<16xf32>
    %b = gpt.mul %a, %x : tensor<16xf32>, tensor<16xf32>
    %c = gpt.relu_square %b : tensor<16xf32>
    %d = gpt.add %c, %a : tensor<16xf32>, tensor<16xf32>
    %e = gpt.mul %d, %d : tensor<16xf32>, tensor<16xf32>
    %f = gpt.relu_square %e : tensor<16xf32>
    %g = gpt.add %f, %e : tensor<16xf32>, tensor<16xf32>
    %h = gpt.mul %g, %x : tensor<16xf32>, tensor<16xf32>
    return %h : tensor<16xf32>
  })";

void BM_TinyOpChainPerOp(benchmark::State& state) {
  auto module = testing::TestModule::Parse(kTinyChainIr);
  if (!module.ok()) return state.SkipWithError(std::string(module.status().message()).c_str());
  auto interpreter = (*module)->NewInterpreter();
  std::vector<Tensor> args = {Random({16}, 1)};
  for (auto _ : state) {
    auto results = interpreter->Run("chain", args);
    benchmark::DoNotOptimize(results->front().raw_data());
  }
  state.SetItemsProcessed(state.iterations() * 8);  // ops
}

BENCHMARK(BM_MlpThroughInterpreter)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MlpKernelsByHand)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TinyOpChainPerOp)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpt_sft::runtime

int main(int argc, char** argv) { return gpt_sft::runtime::kernels::RunKernelBenchmarks(argc, argv); }
