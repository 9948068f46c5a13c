// Implements the AMX GEMM. TDPBF16PS multiplies an A tile [16 rows x 16 pairs] by a B tile
// [16 pairs x 16 columns] into a C tile [16 x 16] f32, a pair being two bf16 values along k
// (low half the even one). C goes in 32 x 32 blocks held in four tiles over a chunk of k
// (AmxBlock32, tiles_amx.h, shared with attention's tiles).
//
// The blocking, for the shapes of the step (K 256 to 8192, N 256 to 8192): k in chunks of
// kChunkPairs pairs, then N in passes of kPassBlocks column blocks, then groups of 32 rows of
// A, each meeting every column block of the pass. A pass's B chunk (512 KiB) stays in L2
// while the groups run over it. C is stored after each chunk and loaded back for the next
// (exact: f32 in, f32 out). Chunks of 512 pairs were as fast as or faster than 128, 192, 256
// and 1024 at each block shape of kernels_benchmark's BM_Bf16GemmBlock on the Xeon this was
// written on.
//
// A's tiles: bf16 rows of A read in place when A is plain and K a multiple of 32 (a tile is
// 16 rows of 64 bytes at A's stride); otherwise gathered into a per-thread buffer padded with
// zeros: the last partial group of 32 rows; every row, once, when K is not a multiple of 32
// or A is f32 (narrowed on the way); a transposed A chunk by chunk, for all the block's rows
// (its pairs gathered and transposed 16 x 16 in registers). C's blocks that stick out past M
// or N go through a 32 x 32 buffer.
#include "runtime/kernels/cpu/amx_gemm_bf16.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/thread_scratch.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"
#include "runtime/kernels/cpu/tiles_amx.h"
#include "runtime/kernels/cpu/transpose16x16_avx512.h"
#include "runtime/kernels/cpu/workspace.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kBlock = 32;         // C's block: rows of a group of A, columns of a block of B
constexpr int64_t kChunkPairs = 512;   // k pairs per chunk (1024 values of k)
constexpr int64_t kPassBlocks = 8;     // column blocks per pass over B (256 columns)

int64_t Pairs16(int64_t k) { return ((k + 1) / 2 + 15) / 16 * 16; }
int64_t RoundUp32(int64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

__mmask32 FirstHalves(int64_t count) {
  return count <= 0 ? __mmask32(0) : count >= 32 ? ~__mmask32(0) : __mmask32((uint64_t(1) << count) - 1);
}

// The packing reads bf16 bits, or f32 values it narrows to bf16 on the way (rounding to
// nearest even, as RoundToBf16: the same bits as narrowing first), so an f32 operand costs
// one pass. 32 values at p (those of `m`; zeros for the others) as bf16 bits:
#define GPT_SFT_PACK_TARGET gnu::target("avx512f,avx512bw,avx512bf16")
[[GPT_SFT_PACK_TARGET, gnu::always_inline]] inline __m512i Load32(const uint16_t* p, __mmask32 m) {
  return _mm512_maskz_loadu_epi16(m, p);
}
[[GPT_SFT_PACK_TARGET, gnu::always_inline]] inline __m512i Load32(const float* p, __mmask32 m) {
  return NarrowBf16x32(_mm512_maskz_loadu_ps(__mmask16(m), p), _mm512_maskz_loadu_ps(__mmask16(m >> 16), p + 16));
}

// Rows 2q and 2q + 1 of x [rows, *] (row stride ld) at the 32 columns [j, j + 32) (those
// under `cols`; zero past them and past `rows`) as 32-bit pairs (low half row 2q):
// lo = columns j .. j + 15, hi = j + 16 .. j + 31. One 64-byte load per row; the 16-bit
// interleave works within 128-bit lanes, so a permute restores the column order.
template <typename Src>
[[GPT_SFT_PACK_TARGET, gnu::always_inline]] inline void RowPairs32(const Src* x, int64_t ld, int64_t rows, int64_t q,
                                                                  int64_t j, __mmask32 cols, __m512i* lo,
                                                                  __m512i* hi) {
  const __m512i even = 2 * q < rows ? Load32(x + 2 * q * ld + j, cols) : _mm512_setzero_si512();
  const __m512i odd = 2 * q + 1 < rows ? Load32(x + (2 * q + 1) * ld + j, cols) : _mm512_setzero_si512();
  const __m512i a = _mm512_unpacklo_epi16(even, odd), b = _mm512_unpackhi_epi16(even, odd);
  // a's 32-bit lane 4L + t is column 8L + t, b's is column 8L + 4 + t (t < 4).
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  *lo = _mm512_permutex2var_epi32(a, first, b);
  *hi = _mm512_permutex2var_epi32(a, second, b);
}

// B [K, N] plain, column blocks [block0, block1): pair row q of a block is (row 2q, row
// 2q + 1) at the block's 32 columns. Sixteen pair rows at a time across the blocks, so B is
// read along its rows and each block is written 2 KiB at a stretch.
template <typename Src>
[[GPT_SFT_PACK_TARGET]] void PackPlainBlocks(int64_t N, int64_t K, const Src* b, int64_t ldb, int64_t block0,
                                             int64_t block1, uint32_t* packed) {
  const int64_t pairs = Pairs16(K);
  for (int64_t q0 = 0; q0 < pairs; q0 += 16)
    for (int64_t p = block0; p < block1; ++p) {
      const __mmask32 cols = FirstHalves(N - p * kBlock);
      uint32_t* out = packed + p * pairs * kBlock;
      for (int64_t q = q0; q < q0 + 16; ++q) {
        __m512i lo, hi;
        RowPairs32(b, ldb, K, q, p * kBlock, cols, &lo, &hi);
        _mm512_storeu_si512(out + q * kBlock, lo);
        _mm512_storeu_si512(out + q * kBlock + 16, hi);
      }
    }
}

// B stored [N, K]: column j's pair q is the 32-bit word 2q of row j, so 16 rows' words are
// loaded and transposed 16 x 16 (the last word of an odd K masked to its low half).
template <typename Src>
[[GPT_SFT_PACK_TARGET]] void PackTransposedBlock(int64_t N, int64_t K, const Src* bt, int64_t ldbt, int64_t j0,
                                                 uint32_t* out) {
  const int64_t pairs = Pairs16(K);
  for (int64_t q0 = 0; q0 < pairs; q0 += 16)
    for (int64_t h = 0; h < 2; ++h) {
      __m512i v[16];
      const __mmask32 values = FirstHalves(K - 2 * q0);
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t j = j0 + 16 * h + i;
        v[i] = j < N ? Load32(bt + j * ldbt + 2 * q0, values) : _mm512_setzero_si512();
      }
      Transpose16x16(v);
      for (int64_t c = 0; c < 16; ++c) _mm512_storeu_si512(out + (q0 + c) * kBlock + 16 * h, v[c]);
    }
}

// Rows [0, M32) of op(A) for pairs [q0, q1) as bf16 rows of `stride` values, zero padded: A
// plain [M, K] (row stride lda) or, transposed, stored [K, M].
template <typename Src>
[[GPT_SFT_PACK_TARGET]] void PackAChunk(bool trans_a, int64_t M, int64_t K, const Src* a, int64_t lda, int64_t q0,
                                        int64_t q1, uint16_t* out, int64_t stride) {
  const int64_t m32 = RoundUp32(M);
  if (!trans_a) {
    for (int64_t r = 0; r < m32; ++r)
      for (int64_t q = q0; q < q1; q += 16) {
        const __mmask32 values = r < M ? FirstHalves(K - 2 * q) : __mmask32(0);
        _mm512_storeu_si512(out + r * stride + 2 * (q - q0), Load32(a + r * lda + 2 * q, values));
      }
    return;
  }
  for (int64_t q = q0; q < q1; q += 16)  // pairs outer: A's stored rows read along
    for (int64_t r0 = 0; r0 < m32; r0 += kBlock) {
      __m512i lo[16], hi[16];
      const __mmask32 cols = FirstHalves(M - r0);
      for (int64_t i = 0; i < 16; ++i) RowPairs32(a, lda, K, q + i, r0, cols, &lo[i], &hi[i]);
      Transpose16x16(lo);
      Transpose16x16(hi);
      for (int64_t c = 0; c < 16; ++c) {
        _mm512_storeu_si512(out + (r0 + c) * stride + 2 * (q - q0), lo[c]);
        _mm512_storeu_si512(out + (r0 + 16 + c) * stride + 2 * (q - q0), hi[c]);
      }
    }
}

#undef GPT_SFT_PACK_TARGET

// A group of 32 rows of A as a block's tiles read it: where its row 0 starts at the current
// chunk's first pair, and its rows' stride in bytes.
struct GroupOfA {
  const uint16_t* rows;
  int64_t bytes;
};

// A's rows for the blocks (the file comment says when each is read in place or gathered).
template <typename Src>
class RowsOfA {
 public:
  RowsOfA(bool trans_a, int64_t M, int64_t K, const Src* a, int64_t lda)
      : trans_a_(trans_a), M_(M), K_(K), a_(a), lda_(lda),
        in_place_(std::is_same_v<Src, uint16_t> && !trans_a && K % kBlock == 0),
        stride_(trans_a ? 2 * kChunkPairs : 2 * Pairs16(K)) {
    const int64_t pairs = Pairs16(K);
    if (trans_a) {
      gathered_ = buffer_.Get<uint16_t>(RoundUp32(M) * stride_);
    } else if (!in_place_) {  // every row, once, for all of k
      gathered_ = buffer_.Get<uint16_t>(RoundUp32(M) * stride_);
      PackAChunk(false, M, K, a, lda, 0, pairs, gathered_, stride_);
    } else if (M % kBlock != 0) {  // the last group's rows, padded
      const int64_t last = M / kBlock * kBlock;
      gathered_ = buffer_.Get<uint16_t>(kBlock * stride_);
      PackAChunk(false, M - last, K, a + last * lda, lda, 0, pairs, gathered_, stride_);
    }
  }

  // A transposed is gathered chunk by chunk, for all the rows.
  void StartChunk(int64_t q0, int64_t q1) {
    if (trans_a_) PackAChunk(true, M_, K_, a_, lda_, q0, q1, gathered_, stride_);
  }

  GroupOfA Group(int64_t i, int64_t q0) const {
    if (trans_a_) return {gathered_ + i * stride_, 2 * stride_};
    if (!in_place_) return {gathered_ + i * stride_ + 2 * q0, 2 * stride_};
    if (i + kBlock <= M_) return {reinterpret_cast<const uint16_t*>(a_) + i * lda_ + 2 * q0, 2 * lda_};
    return {gathered_ + 2 * q0, 2 * stride_};
  }

 private:
  bool trans_a_;
  int64_t M_, K_;
  const Src* a_;
  int64_t lda_;
  bool in_place_;
  int64_t stride_;  // gathered rows' stride, in values
  uint16_t* gathered_ = nullptr;
  // Cache-line aligned, so that each 64-byte tile row lies in one line (a row split over two
  // lines costs two loads: 10.4 against 6.9 ms for the lm_head weight gradient's block).
  static ThreadScratch buffer_;
};

template <typename Src>
ThreadScratch RowsOfA<Src>::buffer_;

// A block of C that sticks out past M or N (rows x cols of it are C's): summed in a 32 x 32
// buffer holding C's values (when loaded) and zeros, then copied home.
[[gnu::target("amx-tile,amx-bf16")]] void EdgeBlock(GroupOfA a, const uint32_t* b, int64_t pairs, float* c,
                                                    int64_t ldc, int64_t rows, int64_t cols, bool load_c) {
  alignas(64) thread_local float edge[kBlock * kBlock];
  for (int64_t r = 0; r < kBlock; ++r)
    for (int64_t col = 0; col < kBlock; ++col)
      edge[r * kBlock + col] = load_c && r < rows && col < cols ? c[r * ldc + col] : 0.0f;
  AmxBlock32(a.rows, a.bytes, b, 4 * kBlock, pairs, edge, 4 * kBlock, /*load_c=*/true);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(c + r * ldc, edge + r * kBlock, cols * 4);
}

template <typename Src>
[[gnu::target("amx-tile,amx-bf16")]] void Gemm(bool trans_a, int64_t M, int64_t N, int64_t K, const Src* a,
                                               int64_t lda, const uint32_t* packed_b, bool accumulate, float* c,
                                               int64_t ldc) {
  const int64_t pairs = Pairs16(K), blocks = AmxPackedBBlocks(N);
  RowsOfA<Src> rows_of_a(trans_a, M, K, a, lda);
  static const AmxTileConfig kConfig;
  _tile_loadconfig(&kConfig);
  for (int64_t q0 = 0; q0 < pairs; q0 += kChunkPairs) {
    const int64_t q1 = std::min(pairs, q0 + kChunkPairs);
    rows_of_a.StartChunk(q0, q1);
    const bool load_c = accumulate || q0 > 0;
    for (int64_t p0 = 0; p0 < blocks; p0 += kPassBlocks) {
      const int64_t p1 = std::min(blocks, p0 + kPassBlocks);
      for (int64_t i = 0; i < M; i += kBlock) {
        const GroupOfA group = rows_of_a.Group(i, q0);
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t j = p * kBlock;
          const uint32_t* b = packed_b + p * pairs * kBlock + q0 * kBlock;
          if (i + kBlock <= M && j + kBlock <= N) {
            AmxBlock32(group.rows, group.bytes, b, 4 * kBlock, q1 - q0, c + i * ldc + j, 4 * ldc, load_c);
          } else {
            EdgeBlock(group, b, q1 - q0, c + i * ldc + j, ldc, std::min(kBlock, M - i), std::min(kBlock, N - j),
                      load_c);
          }
        }
      }
    }
  }
  _tile_release();
}

}  // namespace

bool AmxGemmBf16Supported() { return CpuIsaAtLeast(CpuIsa::kAmx); }

int64_t AmxPackedBBlocks(int64_t N) { return (N + kBlock - 1) / kBlock; }

int64_t AmxPackedBBytes(int64_t N, int64_t K) { return AmxPackedBBlocks(N) * Pairs16(K) * kBlock * 4; }

namespace {

template <typename Src>
void PackB(bool trans_b, int64_t N, int64_t K, const Src* b, int64_t ldb, int64_t block0, int64_t block1,
           uint32_t* packed) {
  RequireCpuIsa(CpuIsa::kAmx, "AmxPackB");
  if (!trans_b) return PackPlainBlocks(N, K, b, ldb, block0, block1, packed);
  for (int64_t p = block0; p < block1; ++p) PackTransposedBlock(N, K, b, ldb, p * kBlock, packed + p * Pairs16(K) * kBlock);
}

// AmxGemmBf16 on either kind of A: no products (K = 0) leave C, or zero it.
template <typename Src>
void Run(bool trans_a, int64_t M, int64_t N, int64_t K, const Src* a, int64_t lda, const uint32_t* packed_b,
         bool accumulate, float* c, int64_t ldc) {
  RequireCpuIsa(CpuIsa::kAmx, "AmxGemmBf16");
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate)
      for (int64_t r = 0; r < M; ++r) std::fill(c + r * ldc, c + r * ldc + N, 0.0f);
    return;
  }
  Gemm(trans_a, M, N, K, a, lda, packed_b, accumulate, c, ldc);
}

}  // namespace

void AmxPackB(bool trans_b, int64_t N, int64_t K, const uint16_t* b, int64_t ldb, int64_t block0, int64_t block1,
              uint32_t* packed) {
  PackB(trans_b, N, K, b, ldb, block0, block1, packed);
}

void AmxPackB(bool trans_b, int64_t N, int64_t K, const float* b, int64_t ldb, int64_t block0, int64_t block1,
              uint32_t* packed) {
  PackB(trans_b, N, K, b, ldb, block0, block1, packed);
}

void AmxGemmBf16(bool trans_a, int64_t M, int64_t N, int64_t K, const uint16_t* a, int64_t lda,
                 const uint32_t* packed_b, bool accumulate, float* c, int64_t ldc) {
  Run(trans_a, M, N, K, a, lda, packed_b, accumulate, c, ldc);
}

void AmxGemmBf16(bool trans_a, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                 const uint32_t* packed_b, bool accumulate, float* c, int64_t ldc) {
  Run(trans_a, M, N, K, a, lda, packed_b, accumulate, c, ldc);
}

}  // namespace gpt_sft::runtime::kernels
