// The matmul kernels for inputs whose every element is a bfloat16 value stored as f32: what
// gpt.matmul and gpt.matmul_weight_grad read under `--dtype=bfloat16` (nanochat's autocast:
// gpt-autocast-bf16 rounds each matmul's operands, and the round's VJP each cotangent).
// Products of bf16 values are exact in f32, so the two kernels below differ only in the
// order of the f32 sums:
// * amx: the inputs are narrowed to bf16 (exactly: round to nearest even, as gpt.round_bf16
//   does) and multiplied by our own GEMM on AMX tiles (amx_gemm_bf16.h), f32 accumulation,
//   B packed once per GEMM; C's rows split over the pool as Gemm does (matmul.h).
// * onednn: the same narrowing, multiplied by oneDNN's matmul primitive on bf16 dot-product
//   instructions (AVX512_BF16; AMX too if asked for), per block of C's rows.
// * fp32: the f32 Gemm (OpenBLAS sgemm) on the same values, each input rounded to bf16
//   values first (a no-op on bf16 values): the fallback on CPUs without bf16 dot products.
// All kernels thus round what they read to bf16 (to nearest even): on f32 inputs they
// compute the product of the rounded inputs, so the compiler may drop a gpt.round_bf16 that
// only they read (gpt-elide-gemm-input-rounding).
// The kernel is chosen once, at first use, from the CPU's flags (amx where the CPU has AMX-BF16
// and AVX512_BF16, else onednn where oneDNN has bf16 dot products, else fp32);
// GPT_SFT_CPU_BF16_GEMM=amx|onednn|fp32 forces one (one the CPU lacks falls back, with a message).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/parallel.h"
#include <string>
#include <vector>

namespace gpt_sft::runtime::kernels {

enum class Bf16Gemm { kOneDnn, kFp32, kAmx };

/// True when `kernel` reads bf16 bit patterns (amx, onednn): its prepared operands are those.
inline bool Bf16GemmReadsBits(Bf16Gemm kernel) { return kernel != Bf16Gemm::kFp32; }
/// True when this CPU can run `kernel` (fp32 always).
bool Bf16GemmSupported(Bf16Gemm kernel);
/// The kernels this CPU can run: fp32, then onednn and amx where supported.
std::vector<Bf16Gemm> SupportedBf16Gemms();
/// "amx", "onednn" or "fp32": GPT_SFT_CPU_BF16_GEMM's spelling.
const char* Bf16GemmName(Bf16Gemm kernel);

/// The kernel the bf16-input matmuls run: GPT_SFT_CPU_BF16_GEMM if set (and possible here),
/// else amx where the CPU has it, else onednn where oneDNN has bf16 dot products, else fp32.
Bf16Gemm ActiveBf16Gemm();

/// What ActiveBf16Gemm() runs, for logs and benchmark reports: "amx (own tiles)", "onednn"
/// plus the oneDNN implementations that ran so far (e.g. "onednn[brg:avx512_core_bf16]"), or
/// "fp32 (sgemm on bf16 values)" and why.
std::string Bf16GemmDescription();

/// Gemm (matmul.h) with alpha 1 and beta 0 or 1, on the inputs rounded to bf16 values, by `kernel`
/// (only where Bf16GemmSupported(kernel)).
void GemmBf16Inputs(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a,
                    int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

/// GemmBf16Inputs with C rounded to bf16 values, each chunk of rows right after it is written
/// (an epilogue: the same bits as RoundBf16 over C afterwards, without another pass over it).
void GemmBf16InputsRoundedOutput(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                                 const float* a, int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c,
                                 int64_t ldc);

/// Matmul and its VJP's kernels (matmul.h) on bf16-valued inputs, by ActiveBf16Gemm().
void MatmulBf16Inputs(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K);
/// MatmulBf16Inputs with y rounded to bf16 values (the compiled step's fusion of a matmul and
/// the autocast rounding of its result, when nothing else reads the unrounded one).
void MatmulBf16InputsRoundedOutput(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K);
void MatmulGradWeightBf16Inputs(const float* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                bool accumulate);
/// MatmulBf16InputsRoundedOutput with `epilogue(m0, m1)` run on each block of rows right after
/// it is written and rounded (in cache, on the same thread).
void MatmulBf16InputsRoundedOutputThen(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K,
                                       ChunkBody epilogue);
/// dx[M, K] = dy[M, N] w[N, K] on bf16 values (MatmulGradInput's product, matmul.h): what a
/// matmul by a transposed weight computes without the transposed copy; `round_output` as
/// MatmulBf16InputsRoundedOutput.
void MatmulGradInputBf16Inputs(const float* dy, const float* w, float* dx, int64_t M, int64_t N, int64_t K,
                               bool round_output);

/// An operand prepared for `kernel` is each value rounded to bf16 as the kernel reads it:
/// bf16 bit patterns (2 bytes) for amx and onednn, bf16 values kept as f32 (4 bytes) for fp32. A
/// producer that writes its output prepared spares every GEMM that reads it the pass that
/// prepares it (the same bits: preparing is elementwise).
int64_t Bf16PreparedElementBytes(Bf16Gemm kernel);
/// n f32 values prepared for `kernel` into `out` (n * Bf16PreparedElementBytes bytes), on
/// the calling thread.
void PrepareBf16Operand(Bf16Gemm kernel, const float* x, int64_t n, void* out);

/// GemmBf16Inputs with A already prepared for `kernel` (`a` holds prepared elements, leading
/// dim lda in elements): the same bits as GemmBf16Inputs on the f32 values it was prepared from.
void GemmBf16PreparedA(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* a,
                       int64_t lda, const float* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);

/// GemmBf16Inputs with A and B both already prepared for `kernel` (leading dims in elements;
/// B read in place where compact): the same bits as on the f32 values they were prepared from.
void GemmBf16Prepared(Bf16Gemm kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* a,
                      int64_t lda, const void* b, int64_t ldb, bool accumulate, float* c, int64_t ldc);
/// MatmulBf16InputsRoundedOutputThen (x f32) or MatmulBf16PreparedXRoundedOutputThen (x
/// prepared for ActiveBf16Gemm()) for an epilogue that rounds y's rows itself: they reach it
/// as the product wrote them.
void MatmulBf16ThenRoundingEpilogue(const void* x, bool x_prepared, const float* w, float* y, int64_t M, int64_t N,
                                    int64_t K, ChunkBody epilogue);
/// MatmulBf16InputsRoundedOutput with x prepared for ActiveBf16Gemm() ([M, K] compact).
void MatmulBf16PreparedXRoundedOutput(const void* x, const float* w, float* y, int64_t M, int64_t N, int64_t K);
/// MatmulBf16InputsRoundedOutputThen with x prepared for ActiveBf16Gemm() ([M, K] compact).
void MatmulBf16PreparedXRoundedOutputThen(const void* x, const float* w, float* y, int64_t M, int64_t N, int64_t K,
                                          ChunkBody epilogue);
/// MatmulGradWeightBf16Inputs with x prepared for ActiveBf16Gemm() ([M, K] compact): the GEMM's
/// B read in place, with no pass over it.
void MatmulGradWeightBf16PreparedX(const float* dy, const void* x, float* dw, int64_t M, int64_t N, int64_t K,
                                   bool accumulate);

/// dy [M, N] prepared in weight-gradient slabs: the layout in which the weight gradient's
/// blocks of dy^T rows (GemmBlockRows(N, K, M) of dw's N rows, matmul.h) lie compact, one after
/// another, each [M, width], so that the GEMM reads them in place where a row-major dy would be
/// copied block by block. The weight gradient of the lm_head (dy [tokens, vocab]) reads its dy
/// this way.
struct Bf16DySlabs {
  int64_t M, N, width;  // width: the slabs' columns (the last may be narrower)
  static Bf16DySlabs Of(int64_t M, int64_t N, int64_t K) { return {M, N, GemmBlockRows(N, K, M)}; }
  /// Elements before the slab holding column n0 (a multiple of width).
  int64_t SlabStart(int64_t n0) const { return n0 * M; }
  int64_t SlabWidth(int64_t n0) const { return std::min(width, N - n0); }
};
/// MatmulGradWeightBf16Inputs with dy prepared for `kernel` in Bf16DySlabs::Of(M, N, K): the
/// same bits as from the f32 dy.
void GemmBf16WeightGradOfDySlabs(Bf16Gemm kernel, const void* dy, const float* x, float* dw, int64_t M, int64_t N,
                                 int64_t K, bool accumulate);
/// GemmBf16WeightGradOfDySlabs on ActiveBf16Gemm().
void MatmulGradWeightBf16PreparedDySlabs(const void* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                         bool accumulate);

/// MatmulGradWeightBf16Inputs with dy prepared for ActiveBf16Gemm().
void MatmulGradWeightBf16PreparedDy(const void* dy, const float* x, float* dw, int64_t M, int64_t N, int64_t K,
                                    bool accumulate);

/// MatmulGradInputBf16Inputs with dy as its producer wrote it (dy_prepared: prepared for
/// ActiveBf16Gemm(), [M, N] compact) and `epilogue` (if any) on each block of dx's rows right
/// after they are written (and rounded).
void MatmulGradInputBf16(const void* dy, bool dy_prepared, const float* w, float* dx, int64_t M, int64_t N, int64_t K,
                         bool round_output, const ChunkBody* epilogue = nullptr);
/// MatmulGradWeightBf16Inputs with dy and x prepared for ActiveBf16Gemm() (both [M, *] compact).
void MatmulGradWeightBf16PreparedDyX(const void* dy, const void* x, float* dw, int64_t M, int64_t N, int64_t K,
                                     bool accumulate);

/// The B operand of a bf16-input GEMM prepared once for `kernel` (narrowed to bf16 bit
/// patterns for onednn, narrowed as it is packed into AMX tiles' pairs for amx; rounded to bf16
/// values kept as f32 for fp32), for a fused kernel that
/// multiplies its own blocks of rows: MultiplyRows on GemmBlockRows(M, N, K)'s blocks (matmul.h)
/// gives GemmBf16Inputs's very bits, which run the same calls.
class Bf16GemmB {
 public:
  /// Bytes of `storage` for op(B) with N columns and K rows of products.
  static int64_t StorageBytes(Bf16Gemm kernel, int64_t N, int64_t K);

  /// Prepares op(B) (B [K, N], or stored [N, K] when trans_b, leading dim ldb) into `storage`,
  /// over the pool. `storage` must outlive this object.
  Bf16GemmB(Bf16Gemm kernel, bool trans_b, int64_t N, int64_t K, const float* b, int64_t ldb, void* storage);
  /// op(B) already prepared for `kernel` (`b` holds prepared elements, leading dim ldb in
  /// elements): read in place where compact, else copied compact into `storage` (the layout
  /// the constructor above gives, so the same bits); on amx always packed into `storage`.
  static Bf16GemmB OfPrepared(Bf16Gemm kernel, bool trans_b, int64_t N, int64_t K, const void* b, int64_t ldb,
                              void* storage);

  /// C's rows [m0, m1) = op(A)'s rows times op(B) (+ C when `accumulate`), on the calling
  /// thread; A [M, K] or, trans_a, stored [K, M]; `c_rows` points at C's row m0 (a whole C, or
  /// a block of its rows in scratch); with round_output, those rows rounded to bf16 values right
  /// after (in cache).
  void MultiplyRows(bool trans_a, int64_t m0, int64_t m1, const float* a, int64_t lda, bool accumulate,
                    float* c_rows, int64_t ldc, bool round_output) const;
  /// MultiplyRows with op(A)'s rows already prepared for the kernel: `a_rows` points at op(A)'s
  /// row m0 (trans_a: at column m0 of the stored [K, M]), leading dim lda in elements.
  void MultiplyPreparedRows(bool trans_a, int64_t m0, int64_t m1, const void* a_rows, int64_t lda, bool accumulate,
                            float* c_rows, int64_t ldc, bool round_output) const;

 private:
  Bf16GemmB(Bf16Gemm kernel, bool trans_b, int64_t N, int64_t K)
      : kernel_(kernel), trans_b_(trans_b), N_(N), K_(K), storage_(nullptr) {}

  Bf16Gemm kernel_;
  bool trans_b_;
  int64_t N_, K_;
  void* storage_;  // what the GEMM reads: op(B) prepared compact, or on amx packed
};

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_MATMUL_BF16_H_
