// MuonGroupUpdate against MuonUpdate called on each matrix in turn (what the interpreter
// runs), bit for bit; and the fact that makes it so: a GEMM run on one thread inside a pool
// task gives the bits of the same GEMM split over the pool, for sgemm and for the bf16 GEMM
// this CPU picks (muon_group_fp32_fallback_test: the sgemm fallback as on a CPU without bf16
// dot products).
#include "runtime/kernels/cpu/muon_group.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/same_bits.h"

namespace gpt_sft::runtime::kernels {
namespace {

using testing::ExpectSameBits;

template <typename T>
std::vector<T> Random(int64_t n, uint32_t seed, bool bf16_values = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d;
  std::vector<T> v(n);
  for (T& x : v) x = bf16_values ? T(RoundToBf16(float(d(rng)))) : T(d(rng));
  return v;
}

/// Sets the kernels' thread count for one test and puts the old one back.
class Threads {
 public:
  explicit Threads(int n) : old_(NumThreads()) { SetNumThreads(n); }
  ~Threads() { SetNumThreads(old_); }

 private:
  int old_;
};

/// Runs `f` as the one task of a pool loop: every ParallelFor inside it runs on this thread.
template <typename F>
void InsideATask(const F& f) {
  ParallelFor(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0) f();
  });
}

// The products of Newton-Schulz at sizes the pool splits (rows of 64 at 4 threads), plain and
// with the transposes NS5 uses.
struct GemmShape {
  bool ta, tb;
  int64_t M, N, K;
};
const GemmShape kSplitShapes[] = {{false, true, 256, 256, 256},
                                  {false, false, 256, 256, 256},
                                  {false, false, 192, 320, 192},
                                  {false, true, 192, 192, 320},
                                  {true, false, 200, 136, 96}};

TEST(MuonGroupTest, SgemmOnOneThreadGivesThePoolSplitsBits) {
  Threads threads(4);
  for (const GemmShape& s : kSplitShapes) {
    ASSERT_LT(GemmBlockRows(s.M, s.N, s.K), s.M) << "the pool must split this shape";
    const std::vector<float> a = Random<float>(s.M * s.K, 1), b = Random<float>(s.K * s.N, 2);
    const int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    std::vector<float> split(s.M * s.N), serial(s.M * s.N);
    Gemm<float>(s.ta, s.tb, s.M, s.N, s.K, 1.f, a.data(), lda, b.data(), ldb, 0.f, split.data(), s.N);
    InsideATask(
        [&] { Gemm<float>(s.ta, s.tb, s.M, s.N, s.K, 1.f, a.data(), lda, b.data(), ldb, 0.f, serial.data(), s.N); });
    ExpectSameBits(split, serial, "sgemm");
  }
}

TEST(MuonGroupTest, Bf16GemmOnOneThreadGivesThePoolSplitsBits) {
  Threads threads(4);
  const Bf16Gemm kernel = ActiveBf16Gemm();
  for (const GemmShape& s : kSplitShapes) {
    const std::vector<float> a = Random<float>(s.M * s.K, 3, true), b = Random<float>(s.K * s.N, 4, true);
    const int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    std::vector<float> split(s.M * s.N), serial(s.M * s.N);
    GemmBf16Inputs(kernel, s.ta, s.tb, s.M, s.N, s.K, a.data(), lda, b.data(), ldb, false, split.data(), s.N);
    InsideATask([&] {
      GemmBf16Inputs(kernel, s.ta, s.tb, s.M, s.N, s.K, a.data(), lda, b.data(), ldb, false, serial.data(), s.N);
    });
    ExpectSameBits(split, serial, Bf16GemmDescription().c_str());
  }
}

/// A group of `count` [rows, cols] matrices through MuonGroupUpdate with `slots`, against
/// MuonUpdate on each (at the same thread count), every parameter and momentum buffer.
template <typename T>
void ExpectGroupGivesEachMatrixsBits(int64_t count, int64_t rows, int64_t cols, bool bf16, int slots) {
  SCOPED_TRACE(::testing::Message() << count << " x [" << rows << ", " << cols << "]" << (bf16 ? " bf16" : "") << ", "
                                    << slots << " slots, " << NumThreads() << " threads");
  const int64_t n = rows * cols;
  const double momentum = 0.85;
  std::vector<std::vector<T>> grad, param_want, buf_want, param_got, buf_got;
  std::vector<double> lr;
  for (int64_t i = 0; i < count; ++i) {
    grad.push_back(Random<T>(n, 10 + i));
    param_want.push_back(Random<T>(n, 100 + i));
    buf_want.push_back(Random<T>(n, 200 + i));
    lr.push_back(0.02 * (i + 1));
  }
  param_got = param_want, buf_got = buf_want;
  std::vector<T> scratch(MuonScratchSize(rows, cols));
  for (int64_t i = 0; i < count; ++i) {
    MuonUpdate(param_want[i].data(), buf_want[i].data(), grad[i].data(), rows, cols, MuonHyper{lr[i], momentum, bf16},
               scratch.data());
  }
  std::vector<MuonGroupMatrix<T>> matrices;
  for (int64_t i = 0; i < count; ++i)
    matrices.push_back({param_got[i].data(), buf_got[i].data(), grad[i].data(), lr[i]});
  std::vector<T> group_scratch(slots * MuonGroupSlotStride(rows, cols, sizeof(T)));
  MuonGroupUpdate(matrices.data(), count, rows, cols, momentum, bf16, group_scratch.data(), slots);
  for (int64_t i = 0; i < count; ++i) {
    ExpectSameBits(param_want[i], param_got[i], "param");
    ExpectSameBits(buf_want[i], buf_got[i], "momentum buffer");
  }
}

TEST(MuonGroupTest, SlotsFollowTheThreadsWhenTheGroupFillsThem) {
  EXPECT_EQ(MuonGroupSlots(16, 2), 2);
  EXPECT_EQ(MuonGroupSlots(2, 2), 2);
  EXPECT_EQ(MuonGroupSlots(3, 4), 1);  // fewer matrices than threads: one at a time, split
  EXPECT_EQ(MuonGroupSlots(5, 1), 1);
  EXPECT_EQ(MuonGroupSlotStride(3, 5, sizeof(float)) * sizeof(float) % 64, 0u);
  EXPECT_GE(MuonGroupSlotStride(3, 5, sizeof(float)), MuonScratchSize(3, 5));
}

TEST(MuonGroupTest, Fp32GroupGivesEachMatrixsBits) {
  Threads threads(4);
  ExpectGroupGivesEachMatrixsBits<float>(5, 37, 53, false, MuonGroupSlots(5, 4));    // odd, wide
  ExpectGroupGivesEachMatrixsBits<float>(6, 53, 37, false, MuonGroupSlots(6, 4));    // odd, tall
  ExpectGroupGivesEachMatrixsBits<float>(4, 192, 320, false, MuonGroupSlots(4, 4));  // products the pool splits
  ExpectGroupGivesEachMatrixsBits<float>(5, 320, 192, false, MuonGroupSlots(5, 4));
  ExpectGroupGivesEachMatrixsBits<float>(1, 37, 53, false, MuonGroupSlots(1, 4));    // a group of one
  ExpectGroupGivesEachMatrixsBits<float>(3, 192, 320, false, MuonGroupSlots(3, 4));  // fewer than threads
  ExpectGroupGivesEachMatrixsBits<float>(3, 37, 53, false, 4);                       // more slots than matrices
}

TEST(MuonGroupTest, Bf16GroupGivesEachMatrixsBits) {
  Threads threads(4);
  ExpectGroupGivesEachMatrixsBits<float>(5, 37, 53, true, MuonGroupSlots(5, 4));
  ExpectGroupGivesEachMatrixsBits<float>(6, 53, 37, true, MuonGroupSlots(6, 4));
  ExpectGroupGivesEachMatrixsBits<float>(4, 192, 320, true, MuonGroupSlots(4, 4));
  ExpectGroupGivesEachMatrixsBits<float>(5, 320, 192, true, MuonGroupSlots(5, 4));
  ExpectGroupGivesEachMatrixsBits<float>(1, 53, 37, true, MuonGroupSlots(1, 4));
  ExpectGroupGivesEachMatrixsBits<float>(2, 192, 320, true, MuonGroupSlots(2, 4));
}

TEST(MuonGroupTest, Fp64GroupGivesEachMatrixsBits) {
  Threads threads(2);
  ExpectGroupGivesEachMatrixsBits<double>(3, 37, 53, false, MuonGroupSlots(3, 2));
  ExpectGroupGivesEachMatrixsBits<double>(2, 130, 70, false, MuonGroupSlots(2, 2));
}

TEST(MuonGroupTest, OneThreadRunsTheGroupInOrder) {
  Threads threads(1);
  ExpectGroupGivesEachMatrixsBits<float>(3, 37, 53, false, MuonGroupSlots(3, 1));
  ExpectGroupGivesEachMatrixsBits<float>(3, 37, 53, true, MuonGroupSlots(3, 1));
}

}  // namespace
}  // namespace gpt_sft::runtime::kernels
