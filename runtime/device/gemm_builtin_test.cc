// The gemm builtin's argument reading, and the row-major -> column-major mapping checked by
// running cuBLAS's column-major definition (a reference loop here) on what ToColumnMajor says
// and comparing with the row-major product, for every transpose combination.
#include "runtime/device/gemm_builtin.h"

#include <cmath>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace gpt_sft::runtime::device {
namespace {

// A buffer that is only a size: the reading checks bytes and never touches memory.
class SizedBuffer : public Buffer {
 public:
  explicit SizedBuffer(int64_t bytes) : Buffer(bytes) {}
  void* host_pointer() const override { return nullptr; }
};

std::vector<KernelArg> Args(int64_t M, int64_t N, int64_t K, Buffer& buf) {
  auto i = [](int64_t v) { return KernelArg::Of(Scalar{Scalar::Type::kI64, v, 0}); };
  auto f = [](double v) { return KernelArg::Of(Scalar{Scalar::Type::kF64, 0, v}); };
  auto b = [&](int64_t elements) { return KernelArg::Of(BufferRange{&buf, 0, elements * 4}); };
  return {i(M), i(N), i(K), i(0), i(1), i(0), f(1.0), f(0.0), b(M * K), b(N * K), b(M * N), b(M * N)};
}

TEST(GemmCall, ReadsTheArgumentsInOrder) {
  SizedBuffer buf(1 << 20);
  absl::StatusOr<GemmCall> g = ReadGemmCall(Args(3, 5, 7, buf), "matmul");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->M, 3);
  EXPECT_EQ(g->N, 5);
  EXPECT_EQ(g->K, 7);
  EXPECT_FALSE(g->a_transposed);
  EXPECT_TRUE(g->b_transposed);
  EXPECT_FALSE(g->inputs_bf16);
  EXPECT_EQ(g->alpha, 1.0);
  EXPECT_EQ(g->c.bytes, 15 * 4);
}

TEST(GemmCall, TheBatchedFormTakesABatchCountFirstAndBatchTimesTheBytes) {
  SizedBuffer buf(1 << 20);
  auto i = [](int64_t v) { return KernelArg::Of(Scalar{Scalar::Type::kI64, v, 0}); };
  std::vector<KernelArg> args = Args(3, 5, 7, buf);
  for (int b = 8; b < 12; ++b) args[b].buffer.bytes *= 4;  // 4 matrices each
  args.insert(args.begin(), i(4));
  absl::StatusOr<GemmCall> g = ReadGemmBuiltin("gemm_batched.f32", args, "muon_gram", "opencl");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->batch, 4);
  EXPECT_EQ(g->M, 3);
  EXPECT_EQ(g->K, 7);
  args[10].buffer.bytes = 3 * 7 * 4 * 3;  // b holds 3 of the 4 matrices
  absl::StatusOr<GemmCall> short_b = ReadGemmBuiltin("gemm_batched.f32", args, "muon_gram", "opencl");
  ASSERT_FALSE(short_b.ok());
  EXPECT_NE(std::string(short_b.status().message()).find("muon_gram (builtin gemm_batched.f32): buffer b holds"),
            std::string::npos)
      << short_b.status();
  args[0] = i(0);
  EXPECT_FALSE(ReadGemmBuiltin("gemm_batched.f32", args, "x", "opencl").ok());
  // The unbatched name does not take a batch count.
  args[0] = i(4);
  EXPECT_FALSE(ReadGemmBuiltin("gemm.f32", args, "x", "opencl").ok());
}

TEST(GemmCall, ABufferSmallerThanItsMatrixIsRefusedNamingIt) {
  SizedBuffer buf(1 << 20);
  std::vector<KernelArg> args = Args(3, 5, 7, buf);
  args[9].buffer.bytes = 4;  // b
  absl::StatusOr<GemmCall> g = ReadGemmCall(args, "transformer.h.0.mlp.c_fc");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("transformer.h.0.mlp.c_fc (builtin gemm.f32): buffer b holds 4 bytes"),
            std::string::npos)
      << g.status();
}

TEST(GemmCall, Bf16OperandsNeedTwoBytesAnElementAndCFour) {
  SizedBuffer buf(1 << 20);
  std::vector<KernelArg> args = Args(3, 5, 7, buf);
  args[8].buffer.bytes = 3 * 7 * 2;  // a: [3, 7] bf16
  args[9].buffer.bytes = 7 * 5 * 2;  // b: [7, 5] bf16
  absl::StatusOr<GemmCall> g = ReadGemmBuiltin("gemm.bf16", args, "x", "cuda");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->ab_stored_bf16);
  EXPECT_FALSE(ReadGemmBuiltin("gemm.f32", args, "x", "cuda").ok());
  args[11].buffer.bytes = 3 * 5 * 2;  // c stays f32
  g = ReadGemmBuiltin("gemm.bf16", args, "x", "cuda");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("x (builtin gemm.bf16): buffer c holds 30 bytes"), std::string::npos)
      << g.status();
}

TEST(GemmCall, ARangeOutsideItsBufferIsRefused) {
  SizedBuffer small(64);
  std::vector<KernelArg> args = Args(3, 5, 7, small);
  absl::StatusOr<GemmCall> g = ReadGemmCall(args, "x");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("buffer a bytes [0, 84) lie outside its buffer of 64 bytes"),
            std::string::npos)
      << g.status();
}

TEST(GemmCall, ABuiltinOfAnotherNameIsRefusedNamingTheDriver) {
  SizedBuffer buf(1 << 20);
  absl::StatusOr<GemmCall> g = ReadGemmBuiltin("cpu.matmul.f32", Args(3, 5, 7, buf), "gpt.matmul", "cuda");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(std::string(g.status().message()),
            "gpt.matmul: the cuda driver has no builtin 'cpu.matmul.f32' (it has gemm.f32, gemm_batched.f32, gemm.bf16 and gemm_batched.bf16)");
  EXPECT_TRUE(ReadGemmBuiltin("gemm.f32", Args(3, 5, 7, buf), "gpt.matmul", "cuda").ok());
}

TEST(GemmCall, WrongCountsAndKindsAreRefused) {
  SizedBuffer buf(1 << 20);
  std::vector<KernelArg> args = Args(3, 5, 7, buf);
  args.pop_back();
  EXPECT_FALSE(ReadGemmCall(args, "x").ok());
  args = Args(3, 5, 7, buf);
  args[6] = args[0];  // alpha given as an integer
  absl::StatusOr<GemmCall> g = ReadGemmCall(args, "x");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("(alpha) must be a float scalar"), std::string::npos) << g.status();
  args = Args(0, 5, 7, buf);
  EXPECT_FALSE(ReadGemmCall(args, "x").ok());
}

// cuBLAS's definition: D = alpha op(A) op(B) + beta C, column-major, element (i, j) at i + j ld.
void ColumnMajorReference(const ColumnMajorGemm& cm, const std::vector<float>& a, const std::vector<float>& b,
                          double alpha, double beta, std::vector<float>& c) {
  auto at = [](const std::vector<float>& x, int64_t ld, bool t, int64_t i, int64_t j) {
    return t ? x[j + i * ld] : x[i + j * ld];
  };
  for (int64_t i = 0; i < cm.m; ++i) {
    for (int64_t j = 0; j < cm.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < cm.k; ++p) sum += at(a, cm.a_ld, cm.op_a, i, p) * at(b, cm.b_ld, cm.op_b, p, j);
      float& out = c[i + j * cm.c_ld];
      out = static_cast<float>(alpha * sum + beta * out);
    }
  }
}

TEST(ColumnMajor, ComputesTheRowMajorProductForEveryTransposeCombination) {
  const int64_t M = 3, N = 4, K = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<float> a(M * K), b(K * N), c(M * N, 1.0f), expect(M * N);
      for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(1.0 + i);
      for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(2.0 + i);
      for (int64_t r = 0; r < M; ++r) {
        for (int64_t col = 0; col < N; ++col) {
          double sum = 0;
          for (int64_t p = 0; p < K; ++p) {
            sum += (ta ? a[p * M + r] : a[r * K + p]) * (tb ? b[col * K + p] : b[p * N + col]);
          }
          expect[r * N + col] = static_cast<float>(2.0 * sum + 0.5 * 1.0);
        }
      }
      GemmCall g;
      g.M = M, g.N = N, g.K = K, g.a_transposed = ta, g.b_transposed = tb, g.alpha = 2.0, g.beta = 0.5;
      const ColumnMajorGemm cm = ToColumnMajor(g);
      EXPECT_EQ(cm.a_rows * cm.a_cols, N * K);
      EXPECT_EQ(cm.b_rows * cm.b_cols, K * M);
      EXPECT_EQ(cm.c_ld, N);
      ColumnMajorReference(cm, /*cuBLAS's A is our*/ b, /*its B our*/ a, g.alpha, g.beta, c);
      for (int64_t i = 0; i < M * N; ++i) EXPECT_NEAR(c[i], expect[i], 1e-5) << "ta " << ta << " tb " << tb << " at " << i;
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime::device
