// Implements the bf16 tile GEMM. Both bf16 instructions add, per f32 lane, the products of
// pairs of bf16 values running along k. So the operands are packed into 32-bit pairs (low
// half the even k, high half the odd k):
// * B [k, n] as pairs [k/2][n rounded up] (zero padded): a row holds every column's pair;
// * A row-major [m, k] as [m][k/2] (a row's bf16 values in order are its pairs); A stored
//   transposed [k, m] as [k/2][m] (built like B's), transposed again for AMX's A tiles.
// An odd k gets a zero last pair. vdpbf16ps: blocks of 14 rows x 2 vectors of C in 28 zmm
// registers, as tile_gemm.cc's AVX-512 kernel, the last vector masked for n % 16. AMX: below.
#include "runtime/kernels/cpu/tile_gemm_bf16.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/tile_gemm.h"
#include "runtime/kernels/cpu/tiles_amx.h"
#include "runtime/kernels/cpu/transpose16x16_avx512.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int kRows = 14;
constexpr int64_t kLanes = 16;

constexpr char kEnv[] = "GPT_SFT_CPU_BF16_TILE";

// AVX512BW for the packing (every CPU with AVX512_BF16 or AMX has it).
const bool kHasDpBf16 = CpuIsaAtLeast(CpuIsa::kAvx512Bf16);

// AMX-TILE and AMX-BF16 with Linux's grant of the tile state (base/cpu_isa.h asks).
bool HasAmx() { return CpuIsaAtLeast(CpuIsa::kAmx); }

bool Supported(Bf16TileKernel kernel) {
  switch (kernel) {
    case Bf16TileKernel::kAmx: return HasAmx();
    case Bf16TileKernel::kDpBf16: return kHasDpBf16;
    case Bf16TileKernel::kFp32: return true;
  }
  return false;
}

// The CPU's choice (AMX, else the f32 FMA kernel: AVX512_BF16's vdpbf16ps measured at half
// the FMA kernel's speed on Sapphire Rapids, so it runs only when asked for), or
// GPT_SFT_CPU_BF16_TILE=amx|dpbf16|fp32 (one the CPU lacks falls back, with a message).
Bf16TileKernel ChooseKernel() {
  const Bf16TileKernel cpu = HasAmx() ? Bf16TileKernel::kAmx : Bf16TileKernel::kFp32;
  const char* env = std::getenv(kEnv);
  if (env == nullptr || env[0] == 0) return cpu;
  for (auto [name, kernel] : {std::pair{"amx", Bf16TileKernel::kAmx}, std::pair{"dpbf16", Bf16TileKernel::kDpBf16},
                              std::pair{"fp32", Bf16TileKernel::kFp32}}) {
    if (std::strcmp(env, name) != 0) continue;
    if (Supported(kernel)) return kernel;
    std::fprintf(stderr, "%s=%s: this CPU cannot run it; using the CPU's choice\n", kEnv, env);
    return cpu;
  }
  std::fprintf(stderr, "%s=%s: expected amx, dpbf16 or fp32; using the CPU's choice\n", kEnv, env);
  return cpu;
}

int64_t Pairs(int64_t k) { return (k + 1) / 2; }
int64_t RoundUp16(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

// Rows 2p and 2p+1 of x [k, len] (row stride ld) as 32-bit pairs out[p][0, width) (width a
// multiple of 16, at least len; RoundUp16(len) by default): the low half from row 2p, the
// high half from row 2p+1 (zero past k and past len).
[[gnu::target("avx512f")]] void PackRowPairs(const float* x, int64_t ld, int64_t k, int64_t len, uint32_t* out,
                                             int64_t width = 0) {
  const int64_t len16 = width > 0 ? width : RoundUp16(len);
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

// x [m, k] (row stride ld) as bf16 rows out[m][out_ld] (out_ld >= 2 * Pairs(k)): each row's
// pairs in order, 32 values at a time (the top halves of two vectors' lanes, one permute).
[[gnu::target("avx512f,avx512bw")]] void PackRows(const float* x, int64_t ld, int64_t m, int64_t k, uint16_t* out,
                                                  int64_t out_ld) {
  alignas(64) static const uint16_t kTopHalves[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21,
                                                      23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43,
                                                      45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512i top = _mm512_load_si512(kTopHalves);
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * ld;
    uint16_t* o = out + r * out_ld;
    for (int64_t p = 0; p < k; p += 2 * kLanes) {
      const int64_t left = k - p;
      const __mmask16 lo = left >= kLanes ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
      const __mmask16 hi = left >= 2 * kLanes ? __mmask16(0xffff)
                           : left > kLanes   ? __mmask16((1u << (left - kLanes)) - 1)
                                             : __mmask16(0);
      const __m512i a = _mm512_castps_si512(_mm512_maskz_loadu_ps(lo, xr + p));
      const __m512i b = _mm512_castps_si512(_mm512_maskz_loadu_ps(hi, xr + p + kLanes));
      const __mmask32 keep = left >= 2 * kLanes ? ~__mmask32(0) : __mmask32((uint64_t(1) << left) - 1);
      _mm512_mask_storeu_epi16(o + p, keep, _mm512_permutex2var_epi16(a, top, b));
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
    PackRows(a, lda, m, k, reinterpret_cast<uint16_t*>(ap), 2 * pairs);
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

//===-- AMX ------------------------------------------------------------------------------===//
//
// TDPBF16PS multiplies a tile of A [16 rows x 16 pairs] by one of B [16 pairs x 16 columns]
// (B's pair rows as PackRowPairs writes them) into a tile of C [16 x 16] f32. C goes in
// 32 x 32 blocks, four tiles summed side by side (their products are independent, so they
// overlap) from two tiles of A and two of B. Everything is padded to whole blocks with
// zeros: A packed [m32][pairs16], B [pairs16][n32]; C is summed in place when m and n are
// whole blocks (attention's full tiles), else in an [m32][n32] f32 buffer (C's values first
// when accumulating) copied home after.

int64_t RoundUpTo(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

struct AmxPlan {
  int64_t m16, n16, pairs16;  // m and n rounded up to 32 (two tiles), pairs to 16
};
AmxPlan PlanAmx(int64_t m, int64_t n, int64_t k) {
  return {RoundUpTo(m, 32), RoundUpTo(n, 32), RoundUpTo(Pairs(k), 16)};
}

// C [m16, n16] (row stride ldc floats) (+)= A B, C's tiles loaded when `load_c`, else zeroed.
[[gnu::target("amx-tile,amx-bf16")]] void AmxTiles(const AmxPlan& p, const uint32_t* a, const uint32_t* b, float* c,
                                                   int64_t ldc_floats, bool load_c) {
  static const AmxTileConfig kConfig;
  _tile_loadconfig(&kConfig);  // every call: oneDNN may have loaded its own on this thread
  const int64_t lda = p.pairs16 * 4, ldb = p.n16 * 4, ldc = ldc_floats * 4;  // bytes
  for (int64_t i = 0; i < p.m16; i += 32)
    for (int64_t j = 0; j < p.n16; j += 32) {
      AmxBlock32(reinterpret_cast<const uint16_t*>(a + i * p.pairs16), lda, b + j, ldb, p.pairs16,
                 c + i * ldc_floats + j, ldc, load_c);
    }
  _tile_release();
}

// B [k, n] as B tiles read it: [pairs16][n32], zero padded.
void PackAmxB(int64_t k, int64_t n, const float* b, int64_t ldb, uint32_t* out) {
  const AmxPlan p = PlanAmx(0, n, k);
  PackRowPairs(b, ldb, k, n, out, p.n16);  // [Pairs(k)][n32]; the padding pair rows zeroed here
  std::fill(out + Pairs(k) * p.n16, out + p.pairs16 * p.n16, 0u);
}

// Lanes [0, count) of 16 (none for count <= 0).
__mmask16 FirstLanes(int64_t count) {
  return count <= 0 ? __mmask16(0) : count >= kLanes ? __mmask16(0xffff) : __mmask16((1u << count) - 1);
}

// out[r][q] = t[q][r] for q < pairs, r < m (row strides t_ld, out_ld), 16 x 16 blocks
// transposed in registers.
[[gnu::target("avx512f")]] void TransposePairs(const uint32_t* t, int64_t t_ld, int64_t pairs, int64_t m,
                                               uint32_t* out, int64_t out_ld) {
  for (int64_t q0 = 0; q0 < pairs; q0 += kLanes) {
    const __mmask16 columns = FirstLanes(pairs - q0);
    for (int64_t r0 = 0; r0 < m; r0 += kLanes) {
      const __mmask16 rows = FirstLanes(m - r0);
      __m512i v[kLanes];
      for (int i = 0; i < kLanes; ++i)
        v[i] = q0 + i < pairs ? _mm512_maskz_loadu_epi32(rows, t + (q0 + i) * t_ld + r0) : _mm512_setzero_si512();
      Transpose16x16(v);
      for (int64_t c = 0; c < kLanes && r0 + c < m; ++c)
        _mm512_mask_storeu_epi32(out + (r0 + c) * out_ld + q0, columns, v[c]);
    }
  }
}

// B = bt^T for bt [n, k] (row stride ldbt), as PackAmxB packs B: [pairs16][n32], zero
// padded, the same bits as PackAmxB on a transposed copy. Pair q of column j is bt row j's
// values 2q, 2q + 1: 16 pairs of a row from two vectors' top halves (as PackRows), 16 rows
// at a time transposed in registers.
[[gnu::target("avx512f,avx512bw")]] void PackAmxBTransposed(int64_t k, int64_t n, const float* bt, int64_t ldbt,
                                                            uint32_t* out) {
  const AmxPlan p = PlanAmx(0, n, k);
  alignas(64) static const uint16_t kTopHalves[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21,
                                                      23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43,
                                                      45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512i top = _mm512_load_si512(kTopHalves);
  for (int64_t q0 = 0; q0 < p.pairs16; q0 += kLanes) {
    const int64_t left = k - 2 * q0;  // values of each row from pair q0 on
    const __mmask16 lo = FirstLanes(left), hi = FirstLanes(left - kLanes);
    for (int64_t j0 = 0; j0 < p.n16; j0 += kLanes) {
      __m512i v[kLanes];
      for (int64_t i = 0; i < kLanes; ++i) {
        if (j0 + i >= n || left <= 0) {
          v[i] = _mm512_setzero_si512();
          continue;
        }
        const float* row = bt + (j0 + i) * ldbt + 2 * q0;
        v[i] = _mm512_permutex2var_epi16(_mm512_castps_si512(_mm512_maskz_loadu_ps(lo, row)), top,
                                         _mm512_castps_si512(_mm512_maskz_loadu_ps(hi, row + kLanes)));
      }
      Transpose16x16(v);
      for (int c = 0; c < kLanes; ++c) _mm512_storeu_si512(out + (q0 + c) * p.n16 + j0, v[c]);
    }
  }
}

// A [m, k] (transposed_a: stored [k, m]) as A tiles read it: [m32][pairs16], zero padded;
// `tmp` holds Pairs(k) * m32 elements for the transposed case.
void PackAmxA(int64_t m, int64_t k, const float* a, int64_t lda, bool transposed_a, uint32_t* out, uint32_t* tmp) {
  const AmxPlan p = PlanAmx(m, 0, k);
  if (m != p.m16 || Pairs(k) != p.pairs16) std::fill(out, out + p.m16 * p.pairs16, 0u);  // else all written below
  if (transposed_a) {  // [Pairs(k)][m32] pairs, transposed into A's rows
    PackRowPairs(a, lda, k, m, tmp, p.m16);
    TransposePairs(tmp, p.m16, Pairs(k), m, out, p.pairs16);
  } else {
    PackRows(a, lda, m, k, reinterpret_cast<uint16_t*>(out), 2 * p.pairs16);
  }
}

// `packed_a` / `packed_b`: the operands already packed (PackAmxA / PackAmxB), or null.
void Amx(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a, const uint32_t* packed_a,
         const float* b, int64_t ldb, const uint32_t* packed_b, float* c, int64_t ldc, bool accumulate,
         uint16_t* scratch) {
  const AmxPlan p = PlanAmx(m, n, k);
  uint32_t* bp = reinterpret_cast<uint32_t*>(scratch);
  uint32_t* ap = bp + p.pairs16 * p.n16;
  float* acc = reinterpret_cast<float*>(ap + p.m16 * p.pairs16);
  if (packed_b == nullptr) {
    PackAmxB(k, n, b, ldb, bp);
    packed_b = bp;
  }
  if (packed_a == nullptr) {
    PackAmxA(m, k, a, lda, transposed_a, ap, reinterpret_cast<uint32_t*>(acc));  // acc's room: free until C is
    packed_a = ap;                                                                 // copied in
  }
  if (p.m16 == m && p.n16 == n) return AmxTiles(p, packed_a, packed_b, c, ldc, accumulate);  // whole blocks: C itself
  for (int64_t r = 0; r < p.m16; ++r) {
    float* row = acc + r * p.n16;
    if (accumulate && r < m) {
      std::copy_n(c + r * ldc, n, row);
      std::fill(row + n, row + p.n16, 0.f);
    } else {
      std::fill(row, row + p.n16, 0.f);
    }
  }
  AmxTiles(p, packed_a, packed_b, acc, p.n16, true);
  for (int64_t r = 0; r < m; ++r) std::copy_n(acc + r * p.n16, n, c + r * ldc);
}

}  // namespace

Bf16TileKernel ActiveBf16TileKernel() {
  static const Bf16TileKernel kernel = ChooseKernel();
  return kernel;
}

const char* Bf16TileKernelName() {
  switch (ActiveBf16TileKernel()) {
    case Bf16TileKernel::kAmx: return "AMX";
    case Bf16TileKernel::kDpBf16: return "AVX512_BF16";
    case Bf16TileKernel::kFp32: return "fp32 FMA";
  }
  return "fp32 FMA";
}

bool Bf16TileKernelSupported(Bf16TileKernel kernel) { return Supported(kernel); }

int64_t TileGemmBf16ScratchElements(int64_t m, int64_t n, int64_t k) {
  // 32-bit units. vdpbf16ps: B's [pairs][n16], A's [pairs][m16] (or [m][pairs], no larger).
  // AMX: B's [pairs16][n16], A's [m16][pairs16], C's [m16][n16] f32 (first holding A's
  // transposing pairs [pairs][m16], hence the max).
  const AmxPlan p = PlanAmx(m, n, k);
  const int64_t dp = Pairs(k) * (RoundUp16(n) + RoundUp16(m));
  const int64_t amx = p.pairs16 * p.n16 + p.m16 * p.pairs16 + std::max(p.m16 * p.n16, Pairs(k) * p.m16);
  return 2 * std::max(dp, amx);
}

bool Bf16TileKernelReadsPacked() { return ActiveBf16TileKernel() == Bf16TileKernel::kAmx; }

int64_t PackedBf16AElements(int64_t m, int64_t k) {
  const AmxPlan p = PlanAmx(m, 0, k);
  return p.m16 * p.pairs16;
}

int64_t PackedBf16BElements(int64_t k, int64_t n) {
  const AmxPlan p = PlanAmx(0, n, k);
  return p.pairs16 * p.n16;
}

void PackBf16A(int64_t m, int64_t k, const float* a, int64_t lda, uint32_t* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "PackBf16A");
  PackAmxA(m, k, a, lda, false, out, nullptr);
}

void PackBf16B(int64_t k, int64_t n, const float* b, int64_t ldb, uint32_t* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "PackBf16B");
  PackAmxB(k, n, b, ldb, out);
}

void PackBf16BTransposed(int64_t k, int64_t n, const float* bt, int64_t ldbt, uint32_t* out) {
  RequireCpuIsa(CpuIsa::kAvx512, "PackBf16BTransposed");
  PackAmxBTransposed(k, n, bt, ldbt, out);
}

void TileGemmBf16Packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a,
                        const uint32_t* packed_a, const float* b, int64_t ldb, const uint32_t* packed_b, float* c,
                        int64_t ldc, bool accumulate, uint16_t* scratch) {
  if (ActiveBf16TileKernel() == Bf16TileKernel::kAmx)
    return Amx(m, n, k, a, lda, transposed_a, packed_a, b, ldb, packed_b, c, ldc, accumulate, scratch);
  TileGemmBf16(m, n, k, a, lda, transposed_a, b, ldb, c, ldc, accumulate, scratch);
}

void TileGemmBf16(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool transposed_a, const float* b,
                  int64_t ldb, float* c, int64_t ldc, bool accumulate, uint16_t* scratch, Bf16TileKernel kernel) {
  if (kernel == Bf16TileKernel::kAmx && HasAmx())
    return Amx(m, n, k, a, lda, transposed_a, nullptr, b, ldb, nullptr, c, ldc, accumulate, scratch);
  if (kernel == Bf16TileKernel::kDpBf16 && kHasDpBf16)
    return DpBf16(m, n, k, a, lda, transposed_a, b, ldb, c, ldc, accumulate, scratch);
  if (transposed_a) return TileGemmTransposedA(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  TileGemm(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

}  // namespace gpt_sft::runtime::kernels
