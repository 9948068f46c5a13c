// The KV-cache family through the interpreter: gpt.concat along each axis and with i32,
// gpt.cached_attention against the kernels (the flash kernel for a prefill, the direct one
// for decoding), and the run-time shape checks.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/test_module.h"
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cached_attention.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
using testing::TestModule;

std::vector<float> RandomF(size_t n, uint32_t seed) {
  std::vector<double> d = k::testing::Random(n, seed);
  return std::vector<float>(d.begin(), d.end());
}

absl::StatusOr<std::vector<Tensor>> RunIr(const std::string& ir, std::vector<Tensor> args) {
  auto module = TestModule::Parse(ir);
  if (!module.ok()) return module.status();
  return (*module)->NewInterpreter()->Run("f", std::move(args));
}

TEST(DecodeOps, ConcatAlongTheMiddleAxis) {
  auto results = RunIr(R"(
    func.func @f(%a: tensor<2x?x2xf32>, %b: tensor<2x?x2xf32>) -> tensor<2x?x2xf32> {
      %c = gpt.concat %a, %b axis 1 : tensor<2x?x2xf32>, tensor<2x?x2xf32>
      return %c : tensor<2x?x2xf32>
    })",
                     {Tensor::FromVector<float>({2, 1, 2}, {1, 2, 3, 4}),
                      Tensor::FromVector<float>({2, 2, 2}, {5, 6, 7, 8, 9, 10, 11, 12})});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ((*results)[0].ToVector<float>(), (std::vector<float>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12}));
}

TEST(DecodeOps, ConcatOfIdsAlongTheFirstAxis) {
  auto results = RunIr(R"(
    func.func @f(%a: tensor<1x2xi32>, %b: tensor<2x2xi32>) -> tensor<3x2xi32> {
      %c = gpt.concat %a, %b axis 0 : tensor<1x2xi32>, tensor<2x2xi32>
      return %c : tensor<3x2xi32>
    })",
                     {Tensor::FromVector<int32_t>({1, 2}, {1, 2}), Tensor::FromVector<int32_t>({2, 2}, {3, 4, 5, 6})});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].ToVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(DecodeOps, ConcatMismatchNamesTheShapes) {
  auto results = RunIr(R"(
    func.func @f(%a: tensor<1x?xf32>, %b: tensor<?x3xf32>) -> tensor<1x?xf32> {
      %c = gpt.concat %a, %b axis 1 : tensor<1x?xf32>, tensor<?x3xf32>
      return %c : tensor<1x?xf32>
    })",
                     {Tensor::FromVector<float>({1, 2}, {1, 2}), Tensor::FromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(std::string(results.status().message()).find("gpt.concat"), std::string::npos) << results.status();
  EXPECT_NE(std::string(results.status().message()).find("[1,2] f32 and [2,3] f32"), std::string::npos)
      << results.status();
}

constexpr char kCachedAttentionIr[] = R"(
  func.func @f(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x2x8xf32>, %v: tensor<1x?x2x8xf32>) -> tensor<1x?x4x8xf32> {
    %o = gpt.cached_attention %q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>
    return %o : tensor<1x?x4x8xf32>
  })";

TEST(DecodeOps, CachedAttentionDecodeStepUsesTheDirectKernel) {
  const int64_t tk = 11;
  std::vector<float> q = RandomF(4 * 8, 1), kk = RandomF(tk * 2 * 8, 2), v = RandomF(tk * 2 * 8, 3);
  auto results = RunIr(kCachedAttentionIr, {Tensor::FromVector<float>({1, 1, 4, 8}, q),
                                          Tensor::FromVector<float>({1, tk, 2, 8}, kk),
                                          Tensor::FromVector<float>({1, tk, 2, 8}, v)});
  ASSERT_TRUE(results.ok()) << results.status();
  std::vector<float> expected(q.size());
  k::CachedAttention(q.data(), kk.data(), v.data(), {1, 1, tk, 4, 2, 8}, 1.0 / std::sqrt(8.0), expected.data());
  EXPECT_EQ((*results)[0].ToVector<float>(), expected);
}

TEST(DecodeOps, CachedAttentionPrefillIsTheFlashKernel) {
  const int64_t t = 9;
  std::vector<float> q = RandomF(t * 4 * 8, 4), kk = RandomF(t * 2 * 8, 5), v = RandomF(t * 2 * 8, 6);
  auto results = RunIr(kCachedAttentionIr, {Tensor::FromVector<float>({1, t, 4, 8}, q),
                                          Tensor::FromVector<float>({1, t, 2, 8}, kk),
                                          Tensor::FromVector<float>({1, t, 2, 8}, v)});
  ASSERT_TRUE(results.ok()) << results.status();
  std::vector<float> expected(q.size()), lse(4 * t);
  k::Attention(q.data(), kk.data(), v.data(), nullptr, {1, t, 4, 2, 8}, expected.data(), lse.data());
  EXPECT_EQ((*results)[0].ToVector<float>(), expected);  // bit-identical to gpt.attention
}

TEST(DecodeOps, CachedAttentionWithMoreQueriesThanKeysIsAnError) {
  auto results = RunIr(kCachedAttentionIr, {Tensor::FromVector<float>({1, 3, 4, 8}, RandomF(96, 7)),
                                          Tensor::FromVector<float>({1, 2, 2, 8}, RandomF(32, 8)),
                                          Tensor::FromVector<float>({1, 2, 2, 8}, RandomF(32, 9))});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(std::string(results.status().message()).find("Tq <= Tk"), std::string::npos) << results.status();
}

}  // namespace
}  // namespace gpt_sft::runtime
