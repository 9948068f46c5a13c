// Implements the bf16 tile GEMM. vdpbf16ps adds, in each of 16 f32 lanes, the products of
// a pair of bf16 values of one operand with a pair of the other: the pairs run along k. So
// both operands are packed into 32-bit pairs (low half the even k, high half the odd k):
// * B [k, n] as pairs [k/2][n16] (n rounded up to 16, zero padded): one vector load gives
//   16 columns' pairs;
// * A row-major [m, k] as [m][k/2] (a row's bf16 values in order are its pairs), A stored
//   transposed [k, m] as [k/2][m] (built like B's), so that the pair of row r at pair p is
//   one 32-bit broadcast either way.
// An odd k gets a zero last pair. The block kernel keeps 14 rows x 2 vectors of C in 28 zmm
// registers, as tile_gemm.cc's AVX-512 kernel does, its last vector masked for n % 16.
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/kernels/cpu/tile_gemm.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int kRows = 14;
constexpr int64_t kLanes = 16;

constexpr char kEnv[] = "GPT_SFT_CPU_BF16_TILE";

bool DetectDpBf16() {
  __builtin_cpu_init();  // needed when this runs from a static initializer
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
}
const bool kHasDpBf16 = DetectDpBf16();

// The CPU's choice, or GPT_SFT_CPU_BF16_TILE=dpbf16|fp32 (dpbf16 on a CPU without it falls
// back, with a message).
Bf16TileKernel ChooseKernel() {
  const char* env = std::getenv(kEnv);
  if (env != nullptr && std::strcmp(env, "fp32") == 0) return Bf16TileKernel::kFp32;
  if (env != nullptr && std::strcmp(env, "dpbf16") != 0 && env[0] != 0)
    std::fprintf(stderr, "%s=%s: expected dpbf16 or fp32; using the CPU's choice\n", kEnv, env);
  if (env != nullptr && std::strcmp(env, "dpbf16") == 0 && !kHasDpBf16)
    std::fprintf(stderr, "%s=dpbf16: this CPU has no AVX512_BF16; using fp32\n", kEnv);
  return kHasDpBf16 ? Bf16TileKernel::kDpBf16 : Bf16TileKernel::kFp32;
}

int64_t Pairs(int64_t k) { return (k + 1) / 2; }
int64_t RoundUp16(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// GCC 12's avx512fintrin.h reads its own deliberately undefined vectors and warns about them
// where its intrinsics are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Rows 2p and 2p+1 of x [k, len] (row stride ld) as 32-bit pairs out[p][0, len16): the low
// half from row 2p, the high half from row 2p+1 (zero past k and past len).
[[gnu::target("avx512f")]] void PackRowPairs(const float* x, int64_t ld, int64_t k, int64_t len, uint32_t* out) {
  const int64_t len16 = RoundUp16(len);
  const __m512i high = _mm512_set1_epi32(int32_t(0xffff0000u));
  for (int64_t p = 0; p < Pairs(k); ++p) {
    const float* even = x + 2 * p * ld;
    const float* odd = 2 * p + 1 < k ? even + ld : nullptr;
    for (int64_t j = 0; j < len16; j += kLanes) {
      const __mmask16 m = len - j >= kLanes ? __mmask16(0xffff) : len > j ? __mmask16((1u << (len - j)) - 1) : 0;
      const __m512i lo = _mm512_srli_epi32(_mm512_castps_si512(_mm512_maskz_loadu_ps(m, even + j)), 16);
      const __m512i hi = odd ? _mm512_and_si512(_mm512_castps_si512(_mm512_maskz_loadu_ps(m, odd + j)), high)
                             : _mm512_setzero_si512();
      _mm512_storeu_si512(out + p * len16 + j, _mm512_or_si512(lo, hi));
    }
  }
}

// x [m, k] (row stride ld) as bf16 rows out[m][2 * Pairs(k)]: each row's pairs in order.
[[gnu::target("avx512f")]] void PackRows(const float* x, int64_t ld, int64_t m, int64_t k, uint16_t* out) {
  const int64_t kp = 2 * Pairs(k);
  for (int64_t r = 0; r < m; ++r) {
    uint16_t* o = out + r * kp;
    for (int64_t p = 0; p < k; p += kLanes) {
      const __mmask16 mask = k - p >= kLanes ? __mmask16(0xffff) : __mmask16((1u << (k - p)) - 1);
      const __m512i bits = _mm512_castps_si512(_mm512_maskz_loadu_ps(mask, x + r * ld + p));
      _mm512_mask_cvtepi32_storeu_epi16(o + p, mask, _mm512_srli_epi32(bits, 16));
    }
    if (k % 2 != 0) o[k] = 0;
  }
}

// C[R, NV*16] (+)= A B over `pairs` pairs: A's pair (r, p) at a[r * rs + p * cs], B's pairs
// [pairs][ldb] (32-bit units); the last vector of each row under `last`.
template <int R, int NV>
[[gnu::target("avx512f,avx512bf16")]] void DpBlock(int64_t pairs, const uint32_t* a, int64_t rs, int64_t cs,
                                                   const uint32_t* b, int64_t ldb, float* c, int64_t ldc,
                                                   bool accumulate, __mmask16 last) {
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v + 1 == NV ? last : __mmask16(0xffff);
      acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(m, c + r * ldc + v * kLanes) : _mm512_setzero_ps();
    }
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + p * ldb + v * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(int32_t(a[r * rs + p * cs]));
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      _mm512_mask_storeu_ps(c + r * ldc + v * kLanes, v + 1 == NV ? last : __mmask16(0xffff), acc[r][v]);
}

#pragma GCC diagnostic pop

// DpBlock with R = rows (1 <= rows <= kR) chosen at run time.
template <int NV, int kR = kRows>
void DpBlockRows(int rows, int64_t pairs, const uint32_t* a, int64_t rs, int64_t cs, const uint32_t* b, int64_t ldb,
                 float* c, int64_t ldc, bool accumulate, __mmask16 last) {
  if constexpr (kR > 1) {
    if (rows < kR) return DpBlockRows<NV, kR - 1>(rows, pairs, a, rs, cs, b, ldb, c, ldc, accumulate, last);
  }
  DpBlock<kR, NV>(pairs, a, rs, cs, b, ldb, c, ldc, accumulate, last);
}

void DpBf16(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a, const float* b,
            int64_t ldb, float* c, int64_t ldc, bool accumulate, uint16_t* scratch) {
  const int64_t pairs = Pairs(k), n16 = RoundUp16(n);
  uint32_t* bp = reinterpret_cast<uint32_t*>(scratch);
  uint32_t* ap = bp + pairs * n16;
  PackRowPairs(b, ldb, k, n, bp);
  int64_t rs, cs;  // of A's pairs
  if (transposed_a) {
    PackRowPairs(a, lda, k, m, ap);
    rs = 1, cs = RoundUp16(m);
  } else {
    PackRows(a, lda, m, k, reinterpret_cast<uint16_t*>(ap));
    rs = pairs, cs = 1;
  }
  const auto lanes = [](int64_t count) { return __mmask16(count >= kLanes ? 0xffff : (1u << count) - 1); };
  for (int64_t j = 0; j < n; j += 2 * kLanes) {
    const int64_t cols = std::min<int64_t>(2 * kLanes, n - j);
    for (int64_t i = 0; i < m; i += kRows) {
      const int rows = int(std::min<int64_t>(kRows, m - i));
      if (cols > kLanes) {
        DpBlockRows<2>(rows, pairs, ap + i * rs, rs, cs, bp + j, n16, c + i * ldc + j, ldc, accumulate,
                       lanes(cols - kLanes));
      } else {
        DpBlockRows<1>(rows, pairs, ap + i * rs, rs, cs, bp + j, n16, c + i * ldc + j, ldc, accumulate, lanes(cols));
      }
    }
  }
}

}  // namespace

Bf16TileKernel ActiveBf16TileKernel() {
  static const Bf16TileKernel kernel = ChooseKernel();
  return kernel;
}

const char* Bf16TileKernelName() {
  return ActiveBf16TileKernel() == Bf16TileKernel::kDpBf16 ? "AVX512_BF16" : "fp32 FMA";
}

bool Bf16TileKernelSupported(Bf16TileKernel kernel) { return kernel == Bf16TileKernel::kFp32 || kHasDpBf16; }

int64_t TileGemmBf16ScratchElements(int64_t m, int64_t n, int64_t k) {
  // 32-bit pairs: B's [pairs][n16], A's [pairs][m16] (or [m][pairs], no larger).
  return 2 * Pairs(k) * (RoundUp16(n) + RoundUp16(m));
}

void TileGemmBf16(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a, const float* b,
                  int64_t ldb, float* c, int64_t ldc, bool accumulate, uint16_t* scratch, Bf16TileKernel kernel) {
  if (kernel == Bf16TileKernel::kDpBf16 && kHasDpBf16)
    return DpBf16(m, n, k, a, lda, transposed_a, b, ldb, c, ldc, accumulate, scratch);
  if (transposed_a) return TileGemmTransposedA(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  TileGemm(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace gpt_sft::runtime::kernels
