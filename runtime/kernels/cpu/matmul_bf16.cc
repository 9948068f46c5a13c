// Implements the bf16-input matmuls: the dispatch, the narrowing to bf16 (AVX512), and the
// split of C's rows over the pool. B is narrowed once per call into the calling thread's
// buffer; each chunk of C's rows narrows its rows of A into its own thread's buffer, so the
// extra memory is B plus a chunk of A per thread, never a bf16 copy of all of A (the
// logits' cotangent is the largest operand). The fp32 fallback rounds its inputs to bf16
// values the same way (into f32 buffers) before sgemm, so both kernels round what they read
// and the compiler may skip a rounding that only they read (gpt-elide-gemm-input-rounding).
// On amx the GEMM narrows f32 operands itself as it packs them (amx_gemm_bf16.h): B into its
// tile pairs once per call, A's rows in each block, so neither is narrowed into a copy first.
#include "runtime/kernels/cpu/matmul_bf16.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/cpu_isa.h"
#include "runtime/kernels/cpu/amx_gemm_bf16.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/onednn_gemm.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/round_bf16_avx512.h"
#include "runtime/kernels/cpu/thread_scratch.h"
#include "runtime/kernels/cpu/workspace.h"
#include "runtime/kernels/cpu/x86_intrinsics.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr char kEnv[] = "GPT_SFT_CPU_BF16_GEMM";

/// n f32 values to bf16 bit patterns, rounding as RoundToBf16 does (exact on bf16 values).
/// Only called where oneDNN has bf16 dot products, which implies AVX512_BF16.
[[gnu::target("avx512f,avx512bw,avx512bf16")]] void NarrowToBf16(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm512_storeu_si512(y + i, NarrowBf16x32(_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + 16)));
  }
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(Bf16Halves(_mm512_loadu_ps(x + i))));
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_cvtepi32_storeu_epi16(y + i, tail, Bf16Halves(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}

/// A [rows, cols] block of a row-major f32 matrix (leading dim ld) narrowed into a compact
/// [rows, cols] bf16 one.
void NarrowBlock(const float* x, int64_t ld, int64_t rows, int64_t cols, uint16_t* y) {
  if (ld == cols) return NarrowToBf16(x, y, rows * cols);
  for (int64_t r = 0; r < rows; ++r) NarrowToBf16(x + r * ld, y + r * cols, cols);
}

/// The epilogue: a chunk of C's rows rounded to bf16 values in place, right after the GEMM
/// wrote them (still in cache). The same bits as RoundBf16 over C afterwards.
void RoundRows(float* c, int64_t ldc, int64_t rows, int64_t cols) {
  if (ldc == cols) return RoundBf16InPlace(c, rows * cols);
  for (int64_t r = 0; r < rows; ++r) RoundBf16InPlace(c + r * ldc, cols);
}

/// The fp32 fallback's counterpart of NarrowBlock: a [rows, cols] block rounded to bf16 values
/// kept as f32 (this path runs on CPUs without AVX512_BF16: RoundBf16Into's AVX-512, AVX2 or
/// portable steps).
void RoundBlock(const float* x, int64_t ld, int64_t rows, int64_t cols, float* y) {
  if (ld == cols) return RoundBf16Into(x, y, rows * cols);
  for (int64_t r = 0; r < rows; ++r) RoundBf16Into(x + r * ld, y + r * cols, cols);
}

/// The A rows one block multiplies, prepared like B into the running thread's buffer (op(A)'s
/// rows m0..m1 compact; transposed: stored [K, m1 - m0]), never a prepared copy of all of A
/// (the logits' cotangent is the largest operand).
template <typename E, typename Prepare>
const E* PreparedRows(bool trans_a, int64_t m0, int64_t m1, int64_t K, const float* a, int64_t lda,
                      const Prepare& prepare, int64_t* lda_p) {
  static ThreadScratch a_buffer;
  E* ap = a_buffer.Get<E>((m1 - m0) * K);
  if (!trans_a) {
    prepare(a + m0 * lda, lda, m1 - m0, K, ap);
    *lda_p = K;
  } else {
    prepare(a + m0, lda, K, m1 - m0, ap);
    *lda_p = m1 - m0;
  }
  return ap;
}

/// PreparedRows for an A already prepared (elements E, leading dim lda): the rows one block
/// multiplies, copied into the same compact layout PreparedRows gives, since oneDNN's sums
/// can follow the leading dimension it is handed (a strided view gave other bits).
template <typename E>
const E* CompactRows(bool trans_a, int64_t m0, int64_t m1, int64_t K, const void* a_prepared, int64_t lda,
                     int64_t* lda_p) {
  const E* a = static_cast<const E*>(a_prepared);
  const int64_t rows = trans_a ? K : m1 - m0, cols = trans_a ? m1 - m0 : K;
  const E* first = trans_a ? a + m0 : a + m0 * lda;
  *lda_p = cols;
  if (lda == cols) return first;  // already compact
  static ThreadScratch a_buffer;
  E* ap = a_buffer.Get<E>(rows * cols);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(ap + r * cols, first + r * lda, cols * sizeof(E));
  return ap;
}

}  // namespace

namespace {

/// op(B) (f32 values, or bf16 bits when `Src` is uint16_t) packed for AmxGemmBf16 into
/// `packed`, over the pool: each thread a contiguous range of column blocks, so each reads
/// one stretch of every row.
template <typename Src>
void PackAmxB(bool trans_b, int64_t N, int64_t K, const Src* b, int64_t ldb, void* packed) {
  const int64_t blocks = AmxPackedBBlocks(N);
  ParallelFor(blocks, (blocks + NumThreads() - 1) / NumThreads(), [&](int64_t p0, int64_t p1) {
    AmxPackB(trans_b, N, K, b, ldb, p0, p1, static_cast<uint32_t*>(packed));
  });
}

}  // namespace

int64_t Bf16GemmB::StorageBytes(Bf16Gemm kernel, int64_t N, int64_t K) {
  // amx: room to start packed B on a cache line, where each 64-byte row of a B tile lies in one
  // line (from a 16-byte aligned buffer every row straddles two: the lm_head weight gradient's
  // blocks ran 10.4 against 6.9 ms in BM_Bf16GemmBlock, depending on where the buffer started).
  if (kernel == Bf16Gemm::kAmx) return AmxPackedBBytes(N, K) + kWorkspaceAlignment;
  return N * K * Bf16PreparedElementBytes(kernel);
}

Bf16GemmB::Bf16GemmB(Bf16Gemm kernel, bool trans_b, int64_t N, int64_t K, const float* b, int64_t ldb,
                     void* storage)
    : kernel_(kernel), trans_b_(trans_b), N_(N), K_(K), storage_(storage) {
  if (kernel == Bf16Gemm::kAmx) {  // narrowed as it is packed
    storage_ = AlignedForWorkspace(storage);
    PackAmxB(trans_b, N, K, b, ldb, storage_);
    return;
  }
  // Compact: [N, K] when transposed, else [K, N].
  const int64_t rows = trans_b ? N : K, cols = trans_b ? K : N;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, cols));
  ParallelFor(rows, grain, [&](int64_t r0, int64_t r1) {
    if (Bf16GemmReadsBits(kernel)) {
      NarrowBlock(b + r0 * ldb, ldb, r1 - r0, cols, static_cast<uint16_t*>(storage) + r0 * cols);
    } else {
      RoundBlock(b + r0 * ldb, ldb, r1 - r0, cols, static_cast<float*>(storage) + r0 * cols);
    }
  });
}

Bf16GemmB Bf16GemmB::OfPrepared(Bf16Gemm kernel, bool trans_b, int64_t N, int64_t K, const void* b, int64_t ldb,
                                void* storage) {
  Bf16GemmB prepared(kernel, trans_b, N, K);
  if (kernel == Bf16Gemm::kAmx) {  // packed from where it lies: no compact copy first
    prepared.storage_ = AlignedForWorkspace(storage);
    PackAmxB(trans_b, N, K, static_cast<const uint16_t*>(b), ldb, prepared.storage_);
    return prepared;
  }
  const int64_t rows = trans_b ? N : K, cols = trans_b ? K : N, element = Bf16PreparedElementBytes(kernel);
  if (ldb == cols) {  // already compact: read in place
    prepared.storage_ = const_cast<void*>(b);
    return prepared;
  }
  const char* from = static_cast<const char*>(b);
  char* to = static_cast<char*>(storage);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(to + r * cols * element, from + r * ldb * element, cols * element);
  prepared.storage_ = storage;
  return prepared;
}

void Bf16GemmB::MultiplyRows(bool trans_a, int64_t m0, int64_t m1, const float* a, int64_t lda, bool accumulate,
                             float* c_rows, int64_t ldc, bool round_output) const {
  if (kernel_ == Bf16Gemm::kAmx) {  // A narrowed as its tiles are gathered: no prepared copy first
    AmxGemmBf16(trans_a, m1 - m0, N_, K_, trans_a ? a + m0 : a + m0 * lda, lda, static_cast<const uint32_t*>(storage_),
                accumulate, c_rows, ldc);
    if (round_output) RoundRows(c_rows, ldc, m1 - m0, N_);
    return;
  }
  int64_t lda_p = 0;
  const void* ap = Bf16GemmReadsBits(kernel_)
                       ? static_cast<const void*>(PreparedRows<uint16_t>(trans_a, m0, m1, K_, a, lda, NarrowBlock, &lda_p))
                       : static_cast<const void*>(PreparedRows<float>(trans_a, m0, m1, K_, a, lda, RoundBlock, &lda_p));
  MultiplyPreparedRows(trans_a, m0, m1, ap, lda_p, accumulate, c_rows, ldc, round_output);
}

void Bf16GemmB::MultiplyPreparedRows(bool trans_a, int64_t m0, int64_t m1, const void* a_rows, int64_t lda,
                                     bool accumulate, float* c_rows, int64_t ldc, bool round_output) const {
  const int64_t rows = m1 - m0, ldb_p = trans_b_ ? K_ : N_;
  if (kernel_ == Bf16Gemm::kAmx) {
    AmxGemmBf16(trans_a, rows, N_, K_, static_cast<const uint16_t*>(a_rows), lda,
                static_cast<const uint32_t*>(storage_), accumulate, c_rows, ldc);
  } else if (kernel_ == Bf16Gemm::kOneDnn) {
    OneDnnGemmBf16(trans_a, trans_b_, rows, N_, K_, static_cast<const uint16_t*>(a_rows), lda,
                   static_cast<const uint16_t*>(storage_), ldb_p, accumulate, c_rows, ldc);
  } else {
    Gemm<float>(trans_a, trans_b_, rows, N_, K_, 1.0f, static_cast<const float*>(a_rows), lda,
                static_cast<const float*>(storage_), ldb_p, accumulate ? 1.0f : 0.0f, c_rows, ldc);
  }
  if (round_output) RoundRows(c_rows, ldc, rows, N_);
}

int64_t Bf16PreparedElementBytes(Bf16Gemm kernel) {
  return Bf16GemmReadsBits(kernel) ? sizeof(uint16_t) : sizeof(float);
}

void PrepareBf16Operand(Bf16Gemm kernel, const float* x, int64_t n, void* out) {
  if (Bf16GemmReadsBits(kernel)) {
    RequireCpuIsa(CpuIsa::kAvx512Bf16, "PrepareBf16Operand on a bf16-bits kernel");
    return NarrowToBf16(x, static_cast<uint16_t*>(out), n);
  }
  RoundBlock(x, n, 1, n, static_cast<float*>(out));
}

namespace {

/// Both kernels' row split: B prepared once into the calling thread's buffer, then per block
/// of C's rows (Gemm's blocks, matmul.h) MultiplyRows on the running thread (A f32), or
/// MultiplyPreparedRows (A prepared: `a_prepared` instead of `a`), then `epilogue` on those
/// rows when given.
void SplitBf16Gemm(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                   const void* a_prepared, int64_t lda, const float* b, const void* b_prepared, int64_t ldb,
                   bool accumulate, float* c, int64_t ldc, bool round_output, const ChunkBody* epilogue) {
  static ThreadScratch b_buffer;
  void* storage = b_buffer.Get<uint8_t>(Bf16GemmB::StorageBytes(kernel, N, K));
  const Bf16GemmB prepared = b_prepared == nullptr ? Bf16GemmB(kernel, trans_b, N, K, b, ldb, storage)
                                                   : Bf16GemmB::OfPrepared(kernel, trans_b, N, K, b_prepared, ldb, storage);
  auto rows = [&](int64_t m0, int64_t m1) {
    if (a_prepared == nullptr) {
      prepared.MultiplyRows(trans_a, m0, m1, a, lda, accumulate, c + m0 * ldc, ldc, round_output);
    } else if (kernel == Bf16Gemm::kAmx) {  // read in place: its tiles take any row stride
      const uint16_t* a_bits = static_cast<const uint16_t*>(a_prepared) + (trans_a ? m0 : m0 * lda);
      prepared.MultiplyPreparedRows(trans_a, m0, m1, a_bits, lda, accumulate, c + m0 * ldc, ldc, round_output);
    } else {
      int64_t lda_p = 0;
      const void* a_rows =
          kernel == Bf16Gemm::kOneDnn
              ? static_cast<const void*>(CompactRows<uint16_t>(trans_a, m0, m1, K, a_prepared, lda, &lda_p))
              : static_cast<const void*>(CompactRows<float>(trans_a, m0, m1, K, a_prepared, lda, &lda_p));
      prepared.MultiplyPreparedRows(trans_a, m0, m1, a_rows, lda_p, accumulate, c + m0 * ldc, ldc, round_output);
    }
    if (epilogue != nullptr) (*epilogue)(m0, m1);
  };
  ForEachGemmBlock(M, N, K, rows);
}

Bf16Gemm CpuChoice() {
  if (CpuIsaAtLeast(CpuIsa::kAmx)) return Bf16Gemm::kAmx;
  return OneDnnHasBf16DotProduct() ? Bf16Gemm::kOneDnn : Bf16Gemm::kFp32;
}

Bf16Gemm Choose() {
  const Bf16Gemm cpu = CpuChoice();
  const char* forced = std::getenv(kEnv);
  if (forced == nullptr || *forced == '\0') return cpu;
  for (Bf16Gemm kernel : {Bf16Gemm::kAmx, Bf16Gemm::kOneDnn, Bf16Gemm::kFp32}) {
    if (std::strcmp(forced, Bf16GemmName(kernel)) != 0) continue;
    if (Bf16GemmSupported(kernel)) return kernel;
    std::fprintf(stderr, "%s=%s: this CPU cannot run it (%s); the bf16 matmuls run %s\n", kEnv, forced,
                 kernel == Bf16Gemm::kAmx ? "no AMX-BF16 with AVX512_BF16, or Linux refused the tile state"
                                          : "oneDNN has no bf16 dot-product kernel here (no AVX512_BF16)",
                 Bf16GemmName(cpu));
    return cpu;
  }
  std::fprintf(stderr, "%s=%s is not one of amx, onednn, fp32; choosing from the CPU's flags (%s)\n", kEnv, forced,
               Bf16GemmName(cpu));
  return cpu;
}

}  // namespace

bool Bf16GemmSupported(Bf16Gemm kernel) {
  switch (kernel) {
    case Bf16Gemm::kAmx: return CpuIsaAtLeast(CpuIsa::kAmx);
    case Bf16Gemm::kOneDnn: return OneDnnHasBf16DotProduct();
    case Bf16Gemm::kFp32: return true;
  }
  return false;
}

std::vector<Bf16Gemm> SupportedBf16Gemms() {
  std::vector<Bf16Gemm> kernels;
  for (Bf16Gemm kernel : {Bf16Gemm::kFp32, Bf16Gemm::kOneDnn, Bf16Gemm::kAmx})
    if (Bf16GemmSupported(kernel)) kernels.push_back(kernel);
  return kernels;
}

const char* Bf16GemmName(Bf16Gemm kernel) {
  switch (kernel) {
    case Bf16Gemm::kAmx: return "amx";
    case Bf16Gemm::kOneDnn: return "onednn";
    case Bf16Gemm::kFp32: return "fp32";
  }
  return "fp32";
}

Bf16Gemm ActiveBf16Gemm() {
  static const Bf16Gemm kernel = Choose();
  return kernel;
}

std::string Bf16GemmDescription() {
  const bool forced = std::getenv(kEnv) != nullptr && std::getenv(kEnv)[0] != '\0';
  const std::string why = forced ? "forced by " + std::string(kEnv) : "";
  switch (ActiveBf16Gemm()) {
    case Bf16Gemm::kAmx: return "amx (own AMX tiles)";
    case Bf16Gemm::kOneDnn: {
      std::string used;
      for (const std::string& impl : OneDnnKernelsUsed()) used += (used.empty() ? "" : ",") + impl;
      return "onednn[" + used + "]" + (forced ? " (" + why + ")" : "");
    }
    case Bf16Gemm::kFp32: break;
  }
  return OneDnnHasBf16DotProduct() ? "fp32 (sgemm on bf16 values; " + why + ")"
                                   : "fp32 (sgemm on bf16 values; the ISA level, " + CpuIsaDescription() +
                                         ", has no AVX512_BF16)";
}

namespace {

/// Every entry point's GEMM: A f32 (`a`) or prepared (`a_prepared`), C rounded when
/// `round_output`, then `epilogue` (if any) on each block of C's rows.
void RunBf16Gemm(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                 const void* a_prepared, int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c,
                 int64_t ldc, bool round_output, const ChunkBody* epilogue = nullptr,
                 const void* b_prepared = nullptr) {
  if (M <= 0 || N <= 0) return;
  if (K > 0) {
    return SplitBf16Gemm(kernel, trans_a, trans_b, M, N, K, a, a_prepared, lda, b, b_prepared, ldb, accumulate, c,
                         ldc, round_output, epilogue);
  }
  // No products: C is zero, or kept when accumulating (what BLAS does with K = 0).
  if (!accumulate) {
    for (int64_t m = 0; m < M; ++m) std::fill(c + m * ldc, c + m * ldc + N, 0.0f);
  }
  if (round_output) RoundRows(c, ldc, M, N);
  if (epilogue != nullptr) (*epilogue)(0, M);
}

}  // namespace

void GemmBf16Inputs(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                    int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  RunBf16Gemm(kernel, trans_a, trans_b, M, N, K, a, nullptr, lda, b, ldb, accumulate, c, ldc, /*round_output=*/false);
}

void GemmBf16InputsRoundedOutput(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                                 const float* a, int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c,
                                 int64_t ldc) {
  RunBf16Gemm(kernel, trans_a, trans_b, M, N, K, a, nullptr, lda, b, ldb, accumulate, c, ldc, /*round_output=*/true);
}

void MatmulBf16Inputs(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K) {
  GemmBf16Inputs(ActiveBf16Gemm(), false, true, M, N, K, x, K, w, K, /*accumulate=*/false, y, N);
}

void MatmulBf16InputsRoundedOutput(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K) {
  GemmBf16InputsRoundedOutput(ActiveBf16Gemm(), false, true, M, N, K, x, K, w, K, /*accumulate=*/false, y, N);
}

void MatmulGradWeightBf16Inputs(const float* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                bool accumulate) {
  GemmBf16Inputs(ActiveBf16Gemm(), true, false, N, K, M, dy, N, x, K, accumulate, dw, K);
}

void MatmulBf16InputsRoundedOutputThen(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K,
                                       ChunkBody epilogue) {
  RunBf16Gemm(ActiveBf16Gemm(), false, true, M, N, K, x, nullptr, K, w, K, /*accumulate=*/false, y, N,
              /*round_output=*/true, &epilogue);
}

void MatmulGradInputBf16Inputs(const float* dy, const float* w, float* dx, int64_t M, int64_t N, int64_t K,
                               bool round_output) {
  MatmulGradInputBf16(dy, /*dy_prepared=*/false, w, dx, M, N, K, round_output);
}

void MatmulGradInputBf16(const void* dy, bool dy_prepared, const float* w, float* dx, int64_t M, int64_t N, int64_t K,
                         bool round_output, const ChunkBody* epilogue) {
  RunBf16Gemm(ActiveBf16Gemm(), false, false, M, K, N, dy_prepared ? nullptr : static_cast<const float*>(dy),
              dy_prepared ? dy : nullptr, N, w, K, /*accumulate=*/false, dx, K, round_output, epilogue);
}

void MatmulGradWeightBf16PreparedDyX(const void* dy, const void* x, float* dw, int64_t M, int64_t N, int64_t K,
                                     bool accumulate) {
  RunBf16Gemm(ActiveBf16Gemm(), true, false, N, K, M, nullptr, dy, N, nullptr, K, accumulate, dw, K,
              /*round_output=*/false, /*epilogue=*/nullptr, /*b_prepared=*/x);
}

void GemmBf16PreparedA(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* a,
                       int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  RunBf16Gemm(kernel, trans_a, trans_b, M, N, K, nullptr, a, lda, b, ldb, accumulate, c, ldc, /*round_output=*/false);
}

void GemmBf16Prepared(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* a,
                      int64_t lda, const void* b, int64_t ldb, bool accumulate, float* c, int64_t ldc) {
  RunBf16Gemm(kernel, trans_a, trans_b, M, N, K, nullptr, a, lda, nullptr, ldb, accumulate, c, ldc,
              /*round_output=*/false, nullptr, b);
}

void MatmulBf16ThenRoundingEpilogue(const void* x, bool x_prepared, const float* w, float* y, int64_t M, int64_t N,
                                    int64_t K, ChunkBody epilogue) {
  RunBf16Gemm(ActiveBf16Gemm(), false, true, M, N, K, x_prepared ? nullptr : static_cast<const float*>(x),
              x_prepared ? x : nullptr, K, w, K, /*accumulate=*/false, y, N, /*round_output=*/false, &epilogue);
}

void MatmulBf16PreparedXRoundedOutputThen(const void* x, const float* w, float* y, int64_t M, int64_t N, int64_t K,
                                          ChunkBody epilogue) {
  RunBf16Gemm(ActiveBf16Gemm(), false, true, M, N, K, nullptr, x, K, w, K, /*accumulate=*/false, y, N,
              /*round_output=*/true, &epilogue);
}

void MatmulBf16PreparedXRoundedOutput(const void* x, const float* w, float* y, int64_t M, int64_t N, int64_t K) {
  RunBf16Gemm(ActiveBf16Gemm(), false, true, M, N, K, nullptr, x, K, w, K, /*accumulate=*/false, y, N,
              /*round_output=*/true);
}

void MatmulGradWeightBf16PreparedX(const float* dy, const void* x, float* dw, int64_t M, int64_t N, int64_t K,
                                   bool accumulate) {
  RunBf16Gemm(ActiveBf16Gemm(), true, false, N, K, M, dy, nullptr, N, nullptr, K, accumulate, dw, K,
              /*round_output=*/false, /*epilogue=*/nullptr, /*b_prepared=*/x);
}

void MatmulGradWeightBf16PreparedDySlabs(const void* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                         bool accumulate) {
  GemmBf16WeightGradOfDySlabs(ActiveBf16Gemm(), dy, x, dw, M, N, K, accumulate);
}

void GemmBf16WeightGradOfDySlabs(Bf16Gemm kernel, const void* dy, const float* x, float* dw, int64_t M, int64_t N,
                                 int64_t K, bool accumulate) {
  if (N <= 0 || K <= 0 || M <= 0) {  // no slabs: one whole dy
    return GemmBf16PreparedA(kernel, true, false, N, K, M, dy, N, x, K, accumulate, dw, K);
  }
  // SplitBf16Gemm's split of dw's rows (GEMM: trans_a, N x K by M), A's blocks read in place.
  static ThreadScratch b_buffer;
  const Bf16GemmB b(kernel, /*trans_b=*/false, K, M, x, K, b_buffer.Get<uint8_t>(Bf16GemmB::StorageBytes(kernel, K, M)));
  const Bf16DySlabs slabs = Bf16DySlabs::Of(M, N, K);
  const char* bytes = static_cast<const char*>(dy);
  const int64_t element = Bf16PreparedElementBytes(kernel);
  auto rows = [&](int64_t n0, int64_t n1) {
    b.MultiplyPreparedRows(/*trans_a=*/true, n0, n1, bytes + slabs.SlabStart(n0) * element, n1 - n0, accumulate,
                           dw + n0 * K, K, /*round_output=*/false);
  };
  ForEachGemmBlock(N, K, M, rows);  // its blocks are the slabs
}

void MatmulGradWeightBf16PreparedDy(const void* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                    bool accumulate) {
  GemmBf16PreparedA(ActiveBf16Gemm(), true, false, N, K, M, dy, N, x, K, accumulate, dw, K);
}

}  // namespace gpt_sft::runtime::kernels
