// CrossEntropySoftcapGrad is the unfused pair SoftcapGrad(y, CrossEntropyGrad(y)), and
// SoftcapCrossEntropy the unfused pair CrossEntropy(Softcap(x)), bit for bit, with ignored
// rows, odd sizes and both element types.
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/pointwise.h"

namespace gpt_sft::runtime::kernels {
namespace {

template <typename T>
void ExpectFusedEqualsUnfused(int64_t N, int64_t V) {
  std::mt19937 rng(static_cast<uint32_t>(N * 131 + V));
  std::uniform_real_distribution<double> x(-40, 40);
  const T cap = T(15);
  std::vector<T> y(N * V);
  for (T& v : y) v = T(cap * std::tanh(x(rng) / cap));
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n) targets[n] = n % 3 == 2 ? -1 : static_cast<int32_t>(rng() % V);
  std::vector<T> ce(N * V), unfused(N * V), fused(N * V, T(7));
  CrossEntropyGrad(y.data(), targets.data(), N, V, 0.5, ce.data());
  SoftcapGrad(y.data(), ce.data(), unfused.data(), N * V, cap);
  CrossEntropySoftcapGrad(y.data(), targets.data(), N, V, 0.5, cap, fused.data());
  EXPECT_EQ(std::memcmp(fused.data(), unfused.data(), fused.size() * sizeof(T)), 0) << "N " << N << " V " << V;
}

TEST(CrossEntropySoftcapGrad, EqualsTheUnfusedPairBitForBit) {
  for (auto [N, V] : {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {33, 1000}, {64, 4099}}) {
    ExpectFusedEqualsUnfused<float>(N, V);
    ExpectFusedEqualsUnfused<double>(N, V);
  }
}

template <typename T>
void ExpectFusedForwardEqualsUnfused(int64_t N, int64_t V) {
  std::mt19937 rng(static_cast<uint32_t>(N * 17 + V));
  std::uniform_real_distribution<double> dist(-40, 40);
  const T cap = T(15);
  std::vector<T> x(N * V);
  for (T& v : x) v = T(dist(rng));
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n) targets[n] = n % 3 == 2 ? -1 : static_cast<int32_t>(rng() % V);
  std::vector<T> y(N * V);
  Softcap(x.data(), y.data(), N * V, cap);
  const CrossEntropyResult unfused = CrossEntropy(y.data(), targets.data(), N, V);
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(N));
  std::vector<T> fused_y(N * V, T(7));
  const CrossEntropyResult fused =
      SoftcapCrossEntropy(x.data(), cap, fused_y.data(), targets.data(), N, V, scratch.get());
  EXPECT_EQ(std::memcmp(fused_y.data(), y.data(), y.size() * sizeof(T)), 0) << "y, N " << N << " V " << V;
  EXPECT_EQ(std::memcmp(&fused.loss, &unfused.loss, sizeof(double)), 0) << fused.loss << " vs " << unfused.loss;
  EXPECT_EQ(fused.count, unfused.count);
  // y over x's bytes, as the compiled step's plan may place it.
  std::vector<T> in_place = x;
  const CrossEntropyResult over =
      SoftcapCrossEntropy(in_place.data(), cap, in_place.data(), targets.data(), N, V, scratch.get());
  EXPECT_EQ(std::memcmp(in_place.data(), y.data(), y.size() * sizeof(T)), 0) << "in place, N " << N << " V " << V;
  EXPECT_EQ(std::memcmp(&over.loss, &unfused.loss, sizeof(double)), 0);
}

TEST(SoftcapCrossEntropy, EqualsTheUnfusedPairBitForBit) {
  for (auto [N, V] : {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {33, 1000}, {64, 4099}}) {
    ExpectFusedForwardEqualsUnfused<float>(N, V);
    ExpectFusedForwardEqualsUnfused<double>(N, V);
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
