// Implements the tiled attention. Notation per (b, h): Q [T,D], K, V [T,D] (kv head
// g = h / rep), S = Q K^T * scale, masked to -inf where invisible, P = softmax(S) by rows,
// O = P V, lse_i = log sum_j exp(S_ij).
//
// Forward, per query block (rows i0..i1):
//   1. acc = 0, m = -inf, l = 0 per row;
//   2. for each key block not skipped: S_blk = Q_blk K_blk^T * scale (+ mask);
//      m' = max(m, rowmax S_blk); P_blk = exp(S_blk - m'); l = l e^(m - m') + rowsum P_blk;
//      acc = acc e^(m - m') + P_blk V_blk; m = m';
//   3. O_blk = acc / l, lse = m + log l.
// Backward, with Delta_i = dO_i . O_i and per visible block pair:
//   P = exp(S - lse); dV_blk += P^T dO_blk; dP = dO_blk V_blk^T; dS = P (dP - Delta) * scale;
//   dK_blk += dS^T Q_blk; dQ_blk += dS K_blk.
// Every tile product goes through TileGemm, reading Q, K, V, dO and writing dQ in place in
// their strided [B,T,heads,D] layout. K (and V, for dP = dO V^T) are transposed once per
// call into [B, Hkv, D, T'] copies, so Q K^T is an ordinary A B product; P^T and dS^T are
// read in place by TileGemmTransposedA.
//
// The order of work is chosen for the cache, never at the cost of the sums' order: the
// backward takes key blocks kKeyBlocksPerPass at a time over the query blocks (so each
// query block's tiles serve several), and two query blocks' P, dS per dV, dK product (one
// product over 2 kBlk rows is the two products over kBlk rows in sequence: every kernel
// sums each C element along k in order). So dK, dV still sum their query blocks in order,
// dQ its key blocks in order, and every result has the bits of one block pair at a time.
//
// Under bf16 autocast (the *Bf16Inputs entry points) the same schedule runs with bf16 tile
// products (TileGemmBf16) and PyTorch's CPU flash-attention roundings: P rounded to bf16
// before P V and P^T dO (the row sums l stay those of the f32 P), dS = P (dP - Delta)
// rounded to bf16 unscaled, its products scaled after their f32 sums (dq once at the end,
// dk when its rows are written), and Delta = dO . bf16(O), the output autocast stores. On
// AMX the operands many tile products share (K^T, V, V^T, K; Q and dO in the backward) are
// packed into the kernel's bf16 pairs once per call (PackedTiles), K^T and V^T straight from
// K and V, so the transposed copies are not made.
//
// Scratch comes from the caller's Workspace (workspace.h), carved in one order by the same
// code that sizes it: the segment ranges and the transposed copies (and the backward's row
// dots) first, then one equal slice per pool thread (ThreadSlot) for the tiles.
#include "runtime/kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "model/round_to_bf16.h"
#include "runtime/kernels/cpu/attention_rows.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/tile_gemm.h"
#include "runtime/kernels/cpu/tile_gemm_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::kernels {
namespace {

constexpr int64_t kBlk = kAttentionBlock;

enum class Visibility { kNone, kAll, kPartial };

// Offsets into the [B,T,H,D], [B,T,Hkv,D] and [B,H,T] tensors, and which block pairs meet.
// The segment-id ranges live in the workspace (`carver`).
class Geometry {
 public:
  Geometry(AttentionShape s, const int32_t* seg, WorkspaceCarver& carver)
      : s_(s), seg_(seg), blocks_((s.T + kBlk - 1) / kBlk) {
    if (seg_ == nullptr) return;
    // Segment-id range of each (b, block): disjoint ranges cannot share an id.
    lo_ = carver.Take<int32_t>(s.B * blocks_, "attention segment ranges");
    hi_ = carver.Take<int32_t>(s.B * blocks_, "attention segment ranges");
    if (carver.counting()) return;
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t blk = 0; blk < blocks_; ++blk) {
        const int32_t* ids = seg_ + b * s.T + blk * kBlk;
        const auto [lo, hi] = std::minmax_element(ids, ids + Len(blk));
        lo_[b * blocks_ + blk] = *lo;
        hi_[b * blocks_ + blk] = *hi;
      }
  }

  const AttentionShape& shape() const { return s_; }
  int64_t blocks() const { return blocks_; }
  int64_t rep() const { return s_.H / s_.Hkv; }
  int64_t Len(int64_t blk) const { return std::min(kBlk, s_.T - blk * kBlk); }
  int64_t QRow() const { return s_.H * s_.D; }  // stride between consecutive t of q, out, dq
  int64_t KvRow() const { return s_.Hkv * s_.D; }
  int64_t Q(int64_t b, int64_t t, int64_t h) const { return ((b * s_.T + t) * s_.H + h) * s_.D; }
  int64_t Kv(int64_t b, int64_t t, int64_t g) const { return ((b * s_.T + t) * s_.Hkv + g) * s_.D; }
  int64_t L(int64_t b, int64_t h, int64_t t) const { return (b * s_.H + h) * s_.T + t; }
  // The transposed copies [B, Hkv, blocks, D, kBlk]: each key block's K^T (V^T) tile is
  // contiguous, TRow() its row stride. Laid out [D, T] per head, a tile's D rows lay a page
  // apart, and a tile product touched a page per row of B.
  int64_t TRow() const { return kBlk; }
  int64_t Kt(int64_t b, int64_t g, int64_t t) const {  // t: a block's first key
    return ((b * s_.Hkv + g) * blocks_ + t / kBlk) * s_.D * kBlk + t % kBlk;
  }
  int64_t TransposedElements() const { return s_.B * s_.Hkv * blocks_ * s_.D * kBlk; }

  Visibility Classify(int64_t b, int64_t qb, int64_t kb) const {
    if (kb > qb) return Visibility::kNone;
    if (seg_ == nullptr) return kb < qb ? Visibility::kAll : Visibility::kPartial;
    const int32_t qlo = lo_[b * blocks_ + qb], qhi = hi_[b * blocks_ + qb];
    const int32_t klo = lo_[b * blocks_ + kb], khi = hi_[b * blocks_ + kb];
    if (qhi < klo || khi < qlo) return Visibility::kNone;
    const bool one_segment = qlo == qhi && klo == khi && qlo == klo;
    return kb < qb && one_segment ? Visibility::kAll : Visibility::kPartial;
  }

  // Sets S[i, j] = -inf where query q0+i may not see key k0+j; S is [nq, nk].
  template <typename T>
  void Mask(int64_t b, int64_t q0, int64_t nq, int64_t k0, int64_t nk, T* S) const {
    const int32_t* ids = seg_ == nullptr ? nullptr : seg_ + b * s_.T;
    for (int64_t i = 0; i < nq; ++i)  // keys k0 + j > q0 + i are in the future
      MaskRow(S + i * nk, nk, q0 + i - k0 + 1, ids == nullptr ? nullptr : ids + k0, ids == nullptr ? 0 : ids[q0 + i]);
  }

 private:
  AttentionShape s_;
  const int32_t* seg_;
  int64_t blocks_;
  int32_t* lo_ = nullptr;
  int32_t* hi_ = nullptr;
};

// The transposed copies of k (and v), tile by tile (Geometry::Kt).
template <typename T>
T* TakeTransposed(const Geometry& geo, WorkspaceCarver& carver) {
  return carver.Take<T>(geo.TransposedElements(), "attention's transposed k/v");
}

// A tile product C (+)= op(A) B: TileGemm on T, or under bf16 autocast (float only)
// TileGemmBf16 with this thread's packing scratch.
template <typename T>
struct Products {
  bool bf16 = false;
  uint16_t* scratch = nullptr;

  /// `packed_a`, `packed_b`: the operands also packed (PackedTiles), or null.
  void operator()(bool transposed_a, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                  int64_t ldb, T* c, int64_t ldc, bool accumulate, const uint32_t* packed_a = nullptr,
                  const uint32_t* packed_b = nullptr) const {
    if constexpr (std::is_same_v<T, float>) {
      if (bf16)
        return TileGemmBf16Packed(m, n, k, a, lda, transposed_a, packed_a, b, ldb, packed_b, c, ldc, accumulate,
                                  scratch);
    }
    if (transposed_a) return TileGemmTransposedA(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    TileGemm(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  }

  // Packing room for any of attention's tile products (m <= kBlk; n, k <= max(D, kBlk)).
  // k up to 2 kBlk: the backward's dV, dK products over two query blocks at once.
  static uint16_t* Take(WorkspaceCarver& c, int64_t D, bool bf16) {
    if (!bf16) return nullptr;
    const int64_t wide = std::max(D, kBlk);
    return c.Take<uint16_t>(TileGemmBf16ScratchElements(kBlk, wide, std::max(wide, 2 * kBlk)),
                            "attention's bf16 packing");
  }
};

// Under bf16 on a tile kernel that reads packed operands (AMX), the tiles of an operand that
// many products read, packed once per call: one per (b, head, block), `heads` kv heads (K^T,
// V, V^T, K: read by every query block) or query heads (Q, dO in the backward: read by
// every key block). Off (no memory, null tiles) otherwise.
class PackedTiles {
 public:
  enum Role { kA, kB };  // a query tile packed as TileGemm's A, or as its B
  PackedTiles(const Geometry& geo, WorkspaceCarver& c, bool on, int64_t heads, int64_t stride)
      : blocks_(geo.blocks()), heads_(heads), stride_(on ? stride : 0) {
    if (on) data_ = c.Take<uint32_t>(geo.shape().B * heads_ * blocks_ * stride_, "attention's packed bf16 tiles");
  }
  const uint32_t* At(int64_t b, int64_t head, int64_t blk) const {
    return data_ == nullptr ? nullptr : data_ + ((b * heads_ + head) * blocks_ + blk) * stride_;
  }
  /// Packs every tile: pack(b, head, blk, out) packs one, from the pool.
  template <typename Pack>
  void Fill(int64_t B, const Pack& pack) const {
    if (data_ == nullptr) return;
    ParallelFor(B * heads_ * blocks_, 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        pack(i / (heads_ * blocks_), (i / blocks_) % heads_, i % blocks_, data_ + i * stride_);
    });
  }

 private:
  uint32_t* data_ = nullptr;
  int64_t blocks_, heads_, stride_;
};

// Whether attention packs tiles once per call: bf16, on a kernel that reads them.
bool PacksTiles(bool bf16) { return bf16 && Bf16TileKernelReadsPacked(); }

// Packed tiles of B [D, kBlk] (K^T, V^T), B [kBlk, D] (K, V; Q, dO) and A [kBlk, D] (Q, dO).
PackedTiles TransposedBTiles(const Geometry& geo, WorkspaceCarver& c, bool bf16) {
  return PackedTiles(geo, c, PacksTiles(bf16), geo.shape().Hkv, PackedBf16BElements(geo.shape().D, kBlk));
}
PackedTiles RowBTiles(const Geometry& geo, WorkspaceCarver& c, bool bf16, int64_t heads) {
  return PackedTiles(geo, c, PacksTiles(bf16), heads, PackedBf16BElements(kBlk, geo.shape().D));
}
PackedTiles RowATiles(const Geometry& geo, WorkspaceCarver& c, bool bf16, int64_t heads) {
  return PackedTiles(geo, c, PacksTiles(bf16), heads, PackedBf16AElements(kBlk, geo.shape().D));
}

// K^T / V^T tiles [D, nk] and K / V tiles [nk, D] of a [B,T,Hkv,D] tensor;
// Q / dO tiles [nq, D] of a [B,T,H,D] one, as B or as A.
void PackTransposedTiles(const Geometry& geo, const PackedTiles& tiles, const float* x) {
  tiles.Fill(geo.shape().B, [&](int64_t b, int64_t g, int64_t kb, uint32_t* out) {
    PackBf16BTransposed(geo.shape().D, geo.Len(kb), x + geo.Kv(b, kb * kBlk, g), geo.KvRow(), out);
  });
}
void PackRowTiles(const Geometry& geo, const PackedTiles& tiles, const float* x) {
  tiles.Fill(geo.shape().B, [&](int64_t b, int64_t g, int64_t kb, uint32_t* out) {
    PackBf16B(geo.Len(kb), geo.shape().D, x + geo.Kv(b, kb * kBlk, g), geo.KvRow(), out);
  });
}
void PackQueryTiles(const Geometry& geo, const PackedTiles& tiles, const float* x, PackedTiles::Role role) {
  tiles.Fill(geo.shape().B, [&](int64_t b, int64_t h, int64_t qb, uint32_t* out) {
    const float* tile = x + geo.Q(b, qb * kBlk, h);
    if (role == PackedTiles::kA) return PackBf16A(geo.Len(qb), geo.shape().D, tile, geo.QRow(), out);
    PackBf16B(geo.Len(qb), geo.shape().D, tile, geo.QRow(), out);
  });
}
template <typename T>
void PackTransposedTiles(const Geometry&, const PackedTiles&, const T*) {}
template <typename T>
void PackRowTiles(const Geometry&, const PackedTiles&, const T*) {}
template <typename T>
void PackQueryTiles(const Geometry&, const PackedTiles&, const T*, PackedTiles::Role) {}

// One equal slice per thread for the tile scratch `Tiles` (a struct carved from a
// WorkspaceCarver), as many slices as the workspace holds, at most NumThreads().
template <typename Tiles>
class PerThread {
 public:
  PerThread(WorkspaceCarver& carver, int64_t D, bool bf16) {
    WorkspaceCarver count;
    Tiles(count, D, bf16);
    stride_ = count.used();
    slots_ = carver.counting() ? NumThreads()
                               : static_cast<int>(std::min<int64_t>(NumThreads(), carver.left() / stride_));
    base_ = carver.Take<char>(stride_ * std::max(1, slots_), "attention's per-thread tiles");
    D_ = D;
    bf16_ = bf16;
  }
  /// The running thread's tiles (inside a ParallelFor given max_threads = slots()).
  Tiles ForThisThread() const {
    WorkspaceCarver carver(Workspace{base_ + ThreadSlot() * stride_, stride_});
    return Tiles(carver, D_, bf16_);
  }
  int slots() const { return std::max(1, slots_); }

 private:
  char* base_ = nullptr;
  int64_t stride_ = 0, D_ = 0;
  int slots_ = 0;
  bool bf16_ = false;
};

// S [nq, nk] = Q_blk K_blk^T, masked (unscaled: the softmax applies 1/sqrt(D) inside its
// exp); kt is the transposed copy of K.
// `packed_q`: Q_blk packed (the forward's, once per query block), or null; `packed_kt`: the
// packed K^T tiles (off unless bf16 on AMX).
template <typename T>
void Scores(const Geometry& geo, const Products<T>& product, Visibility vis, int64_t b, int64_t h, int64_t qb,
            int64_t kb, const T* q, const T* kt, T* S, const uint32_t* packed_q, const PackedTiles& packed_kt) {
  const AttentionShape& s = geo.shape();
  const int64_t q0 = qb * kBlk, nq = geo.Len(qb), k0 = kb * kBlk, nk = geo.Len(kb);
  product(false, nq, nk, s.D, q + geo.Q(b, q0, h), geo.QRow(), kt + geo.Kt(b, h / geo.rep(), k0), geo.TRow(), S, nk,
          false, packed_q, packed_kt.At(b, h / geo.rep(), kb));
  if (vis == Visibility::kPartial) geo.Mask(b, q0, nq, k0, nk, S);
}

// x [B,T,Hkv,D] -> xt (Geometry::Kt's tiles), one task per (b, g, block); a short last
// block's columns past T are never read.
template <typename T>
void TransposeHeads(const Geometry& geo, const T* x, T* xt) {
  const AttentionShape& s = geo.shape();
  ParallelFor(s.B * s.Hkv * geo.blocks(), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t bg = i / geo.blocks(), t0 = (i % geo.blocks()) * kBlk, b = bg / s.Hkv, g = bg % s.Hkv;
      TransposeTile(geo.Len(t0 / kBlk), s.D, x + geo.Kv(b, t0, g), geo.KvRow(), xt + geo.Kt(b, g, t0),
                    geo.TRow());
    }
  });
}

// The forward's tiles of one query block: S [kBlk, kBlk], acc [kBlk, D], m and l [kBlk].
template <typename T>
struct ForwardTiles {
  T* S;
  T* acc;
  double *m, *l;
  T *block_max, *shift;  // per row of one key block: its max, the exps' shift
  double* block_sum;     // and the exps' sum
  Products<T> product;
  uint32_t* packed_q;  // this query block's Q, packed once (when PacksTiles)
  uint16_t* packed_p;  // a whole block's P as the kernel packs it: its bf16 rows (when PacksTiles)
  ForwardTiles(WorkspaceCarver& c, int64_t D, bool bf16)
      : S(c.Take<T>(kBlk * kBlk, "attention scores")), acc(c.Take<T>(kBlk * D, "attention accumulator")),
        m(c.Take<double>(kBlk, "attention row max")), l(c.Take<double>(kBlk, "attention row sum")),
        block_max(c.Take<T>(kBlk, "attention block row max")), shift(c.Take<T>(kBlk, "attention exp shift")),
        block_sum(c.Take<double>(kBlk, "attention block row sum")), product{bf16, Products<T>::Take(c, D, bf16)},
        packed_q(PacksTiles(bf16) ? c.Take<uint32_t>(PackedBf16AElements(kBlk, D), "attention's packed q") : nullptr),
        packed_p(PacksTiles(bf16) ? c.Take<uint16_t>(2 * PackedBf16AElements(kBlk, kBlk), "attention's packed p")
                                  : nullptr) {}
};

// maxes[i] = the max of row i of S [rows, n]. bf16: of the scores scaled first (in place),
// then shifted, each step rounded (PyTorch's order), so the probabilities rounded to bf16 are
// its values but for exp's last bits; else of the raw scores (the exp takes the scale).
template <typename T>
void RowMaxes(T* S, int64_t rows, int64_t n, bool bf16, T scale, T* maxes) {
  if constexpr (std::is_same_v<T, float>) {
    if (bf16) return ScaleRowsAndMax(S, rows, n, scale, maxes);
  }
  for (int64_t i = 0; i < rows; ++i) maxes[i] = MaxOf(S + i * n, n);
}

// Row i of S = exp(row * mult - shifts[i]) (mult: the scale, or 1 for bf16's scaled rows),
// sums[i] its sum; under bf16 then rounded to bf16 (after its sum, which goes into l). Rows
// whose shift is -inf are skipped (sum 0).
// `packed`: where bf16's rows also go as bf16 (row stride n), or null.
template <typename T>
void RowExps(T* S, int64_t rows, int64_t n, bool bf16, T scale, const T* shifts, double* sums, uint16_t* packed) {
  if constexpr (std::is_same_v<T, float>) {
    if (bf16) return ExpRowsRoundedToBf16(S, rows, n, shifts, sums, packed, n);
  }
  for (int64_t i = 0; i < rows; ++i)
    sums[i] = shifts[i] == -std::numeric_limits<T>::infinity() ? 0.0
                                                               : ExpAffine(S + i * n, n, scale, shifts[i], S + i * n);
}

template <typename T>
void ForwardQueryBlock(const Geometry& geo, const T* q, const T* kt, const T* v, int64_t b, int64_t h, int64_t qb,
                       T* out, T* lse, const ForwardTiles<T>& tiles, const PackedTiles& packed_kt,
                       const PackedTiles& packed_v) {
  const AttentionShape& s = geo.shape();
  const int64_t g = h / geo.rep(), q0 = qb * kBlk, nq = geo.Len(qb);
  const double scale = 1.0 / std::sqrt(double(s.D));
  T* const S = tiles.S;
  T* const acc = tiles.acc;
  double* const m = tiles.m;
  double* const l = tiles.l;
  std::fill(acc, acc + nq * s.D, T(0));
  std::fill(m, m + nq, -std::numeric_limits<double>::infinity());
  std::fill(l, l + nq, 0.0);
  if constexpr (std::is_same_v<T, float>) {
    if (tiles.packed_q != nullptr) PackBf16A(nq, s.D, q + geo.Q(b, q0, h), geo.QRow(), tiles.packed_q);
  }
  for (int64_t kb = 0; kb <= qb; ++kb) {
    const Visibility vis = geo.Classify(b, qb, kb);
    if (vis == Visibility::kNone) continue;
    const int64_t nk = geo.Len(kb);
    Scores(geo, tiles.product, vis, b, h, qb, kb, q, kt, S, tiles.packed_q, packed_kt);
    // The rows are independent: each step below runs over all of them (one call per step).
    const bool bf16 = tiles.product.bf16;
    RowMaxes(S, nq, nk, bf16, T(scale), tiles.block_max);
    for (int64_t i = 0; i < nq; ++i) {
      // In scaled units, and representable in T so the exps use exactly this shift.
      const double m_new = double(T(std::max(m[i], (bf16 ? 1.0 : scale) * tiles.block_max[i])));
      tiles.shift[i] = T(m_new);
      if (m_new == -std::numeric_limits<double>::infinity()) {  // nothing visible yet
        std::fill(S + i * nk, S + (i + 1) * nk, T(0));
        continue;
      }
      // exp(m - m_new): 0 on the first visible block, 1 while the max holds (exp's exact
      // values there, without the call).
      const double correction = m[i] == m_new                                   ? 1.0
                                : m[i] == -std::numeric_limits<double>::infinity() ? 0.0
                                                                                   : std::exp(m[i] - m_new);
      l[i] *= correction;  // the block's sum added below
      if (correction != 1.0) ScaleRow(acc + i * s.D, s.D, T(correction));
      m[i] = m_new;
    }
    // A whole block's P packed for the kernel is its bf16 rows, written by the exps' pass.
    uint16_t* const packed_p =
        tiles.packed_p != nullptr && nq == kBlk && 2 * PackedBf16AElements(kBlk, kBlk) == kBlk * nk ? tiles.packed_p
                                                                                                  : nullptr;
    RowExps(S, nq, nk, bf16, T(scale), tiles.shift, tiles.block_sum, packed_p);
    for (int64_t i = 0; i < nq; ++i) l[i] += tiles.block_sum[i];  // 0 where skipped: l unchanged
    tiles.product(false, nq, s.D, nk, S, nk, v + geo.Kv(b, kb * kBlk, g), geo.KvRow(), acc, s.D, true,
                  reinterpret_cast<const uint32_t*>(packed_p), packed_v.At(b, g, kb));
  }
  // Every query sees at least itself, so l > 0.
  for (int64_t i = 0; i < nq; ++i) {
    DivideRow(acc + i * s.D, s.D, l[i], out + geo.Q(b, q0 + i, h));
    lse[geo.L(b, h, q0 + i)] = T(m[i] + std::log(l[i]));
  }
}

// The backward's key blocks per pass over the query blocks (GradTask::KeyBlocks): each query
// block's Q, dO and dq tiles, once in cache, serve this many key blocks.
constexpr int64_t kKeyBlocksPerPass = 4;

// The backward's tiles of one task: P and dS [2 kBlk, kBlk] (two query blocks' rows, so
// that dV and dK take both in one product each: with the same sums in the same order, half
// their accumulators' loads and stores), dk_acc and dv_acc [kBlk, D] per key block of a pass.
template <typename T>
struct GradTiles {
  T *P, *dS, *dk_acc, *dv_acc;
  Products<T> product;
  GradTiles(WorkspaceCarver& c, int64_t D, bool bf16)
      : P(c.Take<T>(2 * kBlk * kBlk, "attention probabilities")),
        dS(c.Take<T>(2 * kBlk * kBlk, "attention score grads")),
        dk_acc(c.Take<T>(kKeyBlocksPerPass * kBlk * D, "attention dk accumulator")),
        dv_acc(c.Take<T>(kKeyBlocksPerPass * kBlk * D, "attention dv accumulator")),
        product{bf16, Products<T>::Take(c, D, bf16)} {}
};

// The backward's packed operands: B of S (K^T), dP (V^T), dQ (K), dV (dO), dK (Q); A of S
// (Q) and dP (dO).
struct GradPacked {
  PackedTiles kt, vt, k, dout_b, q_b, q_a, dout_a;
  GradPacked(const Geometry& geo, WorkspaceCarver& c, bool bf16)
      : kt(TransposedBTiles(geo, c, bf16)), vt(TransposedBTiles(geo, c, bf16)),
        k(RowBTiles(geo, c, bf16, geo.shape().Hkv)), dout_b(RowBTiles(geo, c, bf16, geo.shape().H)),
        q_b(RowBTiles(geo, c, bf16, geo.shape().H)), q_a(RowATiles(geo, c, bf16, geo.shape().H)),
        dout_a(RowATiles(geo, c, bf16, geo.shape().H)) {}
  template <typename T>
  void Fill(const Geometry& geo, const T* k_, const T* v_, const T* q, const T* dout) const {
    PackTransposedTiles(geo, kt, k_);
    PackTransposedTiles(geo, vt, v_);
    PackRowTiles(geo, k, k_);
    PackQueryTiles(geo, dout_b, dout, PackedTiles::kB);
    PackQueryTiles(geo, q_b, q, PackedTiles::kB);
    PackQueryTiles(geo, q_a, q, PackedTiles::kA);
    PackQueryTiles(geo, dout_a, dout, PackedTiles::kA);
  }
};

// Where the backward writes dv: T rows, or (bf16 inputs only) prepared for a bf16 GEMM in
// the same element order (PrepareBf16Operand's layout).
struct DvOut {
  void* data;
  std::optional<Bf16Gemm> prepared_for;
};

// Everything the backward needs, and the scratch of one task.
template <typename T>
struct GradTask {
  const Geometry& geo;
  const T *q, *k, *kt, *vt, *lse, *dout, *delta;  // kt, vt: TransposeHeads of k, v
  T* dq;
  T *P, *dS, *dk_acc, *dv_acc;  // this thread's GradTiles
  Products<T> product;
  const GradPacked& packed;  // the packed operands (off unless AMX)

  GradTask(const Geometry& g, const T* q_, const T* k_, const T* kt_, const T* vt_, const T* lse_, const T* dout_,
           const T* delta_, T* dq_, const GradTiles<T>& tiles, const GradPacked& p)
      : geo(g), q(q_), k(k_), kt(kt_), vt(vt_), lse(lse_), dout(dout_), delta(delta_), dq(dq_),
        P(tiles.P), dS(tiles.dS), dk_acc(tiles.dk_acc), dv_acc(tiles.dv_acc), product(tiles.product), packed(p) {}

  // P and dS [nq, nk] of block pair (qb, kb) for head h (in P, dS: here at row `row`); under
  // bf16 both rounded, dS unscaled.
  void ProbabilitiesAndScoreGrads(Visibility vis, int64_t b, int64_t h, int64_t qb, int64_t kb, int64_t row = 0) {
    T* const P = this->P + row * geo.Len(kb);
    T* const dS = this->dS + row * geo.Len(kb);
    const AttentionShape& s = geo.shape();
    const int64_t q0 = qb * kBlk, nq = geo.Len(qb), nk = geo.Len(kb);
    const T scale = T(1.0 / std::sqrt(double(s.D)));
    Scores(geo, product, vis, b, h, qb, kb, q, kt, P, packed.q_a.At(b, h, qb), packed.kt);
    const T* const lse_rows = lse + geo.L(b, h, q0);  // the rows' lse, and below their Delta
    const T* const delta_rows = delta + geo.L(b, h, q0);
    if constexpr (std::is_same_v<T, float>) {
      if (product.bf16) ScaledExpRows(P, nq, nk, scale, lse_rows);  // as the forward: scaled, then shifted
    }
    if (!product.bf16)
      for (int64_t i = 0; i < nq; ++i) ExpAffine(P + i * nk, nk, scale, lse_rows[i], P + i * nk);
    product(false, nq, nk, s.D, dout + geo.Q(b, q0, h), geo.QRow(), vt + geo.Kt(b, h / geo.rep(), kb * kBlk),
            geo.TRow(), dS, nk, false, packed.dout_a.At(b, h, qb), packed.vt.At(b, h / geo.rep(), kb));  // dP
    if constexpr (std::is_same_v<T, float>) {
      if (product.bf16) ScoreGradRowsRoundedToBf16(P, dS, nq, nk, delta_rows, dS);  // dS unscaled, both rounded
    }
    if (!product.bf16)
      for (int64_t i = 0; i < nq; ++i) ScoreGradRow(P + i * nk, dS + i * nk, nk, delta_rows[i], scale, dS + i * nk);
  }

  // dq of (qb, h) += dS K of key block kb, dS at row `row` of dS.
  void AccumulateDq(int64_t b, int64_t h, int64_t qb, int64_t kb, int64_t row = 0) {
    const int64_t nq = geo.Len(qb), nk = geo.Len(kb), g = h / geo.rep();
    product(false, nq, geo.shape().D, nk, dS + row * nk, nk, k + geo.Kv(b, kb * kBlk, g), geo.KvRow(),
            dq + geo.Q(b, qb * kBlk, h), geo.QRow(), true, nullptr, packed.k.At(b, g, kb));
  }

  // dk, dv rows of key blocks [kb0, kb1) (at most kKeyBlocksPerPass) for kv head g; with
  // `with_dq` also adds their share into dq (the caller owns every dq row of g's query
  // heads). Each dk, dv block sums its (head, query block) pairs in the order of one block
  // alone, and each dq block its key blocks in ascending order as long as the caller takes
  // the ranges in ascending order: the results do not depend on the range.
  void KeyBlocks(int64_t b, int64_t g, int64_t kb0, int64_t kb1, bool with_dq, T* dk, DvOut dv) {
    const int64_t D = geo.shape().D;
    std::fill(dk_acc, dk_acc + (kb1 - kb0) * kBlk * D, T(0));
    std::fill(dv_acc, dv_acc + (kb1 - kb0) * kBlk * D, T(0));
    const int64_t nb = geo.blocks();
    for (int64_t h = g * geo.rep(); h < (g + 1) * geo.rep(); ++h)
      for (int64_t qb = kb0; qb < nb; qb += 2)  // query blocks two at a time: qb, qb + 1
        for (int64_t kb = kb0; kb < std::min(kb1, std::min(qb + 2, nb)); ++kb) {
          // P, dS of the visible blocks among the two, their rows stacked (consecutive
          // blocks, the first whole: rows of Q and dO in order).
          const int64_t nk = geo.Len(kb);
          int64_t first = -1, rows = 0;
          for (int64_t qq = std::max(qb, kb); qq < std::min(qb + 2, nb); ++qq) {
            const Visibility vis = geo.Classify(b, qq, kb);
            if (vis == Visibility::kNone) continue;
            if (first < 0) first = qq;
            ProbabilitiesAndScoreGrads(vis, b, h, qq, kb, rows);
            if (with_dq) AccumulateDq(b, h, qq, kb, rows);
            rows += geo.Len(qq);
          }
          if (rows == 0) continue;
          // dV += P^T dO, dK += dS^T Q, with P, dS [rows, nk] read as [nk, rows]; the packed
          // tiles of consecutive query blocks are consecutive too (a whole block has no padding).
          T* const dv_kb = dv_acc + (kb - kb0) * kBlk * D;
          T* const dk_kb = dk_acc + (kb - kb0) * kBlk * D;
          const int64_t q0 = first * kBlk;
          product(true, nk, D, rows, P, nk, dout + geo.Q(b, q0, h), geo.QRow(), dv_kb, D, true, nullptr,
                  packed.dout_b.At(b, h, first));
          product(true, nk, D, rows, dS, nk, q + geo.Q(b, q0, h), geo.QRow(), dk_kb, D, true, nullptr,
                  packed.q_b.At(b, h, first));
        }
    for (int64_t kb = kb0; kb < kb1; ++kb) {
      const int64_t nk = geo.Len(kb);
      T* const dv_kb = dv_acc + (kb - kb0) * kBlk * D;
      T* const dk_kb = dk_acc + (kb - kb0) * kBlk * D;
      if (product.bf16) ScaleRow(dk_kb, nk * D, T(1.0 / std::sqrt(double(D))));  // dS was unscaled
      for (int64_t j = 0; j < nk; ++j) {
        const int64_t at = geo.Kv(b, kb * kBlk + j, g);
        std::copy_n(dk_kb + j * D, D, dk + at);
        WriteDvRow(dv_kb + j * D, D, dv, at);
      }
    }
  }

  // One row of dv (D values) at element `at`, as `dv` asks.
  static void WriteDvRow(const T* row, int64_t D, DvOut dv, int64_t at) {
    if constexpr (std::is_same_v<T, float>) {
      if (dv.prepared_for) {
        char* to = static_cast<char*>(dv.data) + at * Bf16PreparedElementBytes(*dv.prepared_for);
        return PrepareBf16Operand(*dv.prepared_for, row, D, to);
      }
    }
    std::copy_n(row, D, static_cast<T*>(dv.data) + at);
  }

  // dq rows of query block qb for head h, key blocks in the same order as KeyBlocks'.
  void QueryBlock(int64_t b, int64_t h, int64_t qb) {
    for (int64_t kb = 0; kb <= qb; ++kb) {
      const Visibility vis = geo.Classify(b, qb, kb);
      if (vis == Visibility::kNone) continue;
      ProbabilitiesAndScoreGrads(vis, b, h, qb, kb);
      AccumulateDq(b, h, qb, kb);
    }
  }
};

// delta [B,H,T]: Delta_i = dO_i . O_i, summed in double in order of d; with `bf16`, of O
// rounded to bf16 (attention_rows.h's RoundedRowDots). The float rows kRowDotChains at a
// time, so their additions overlap instead of waiting on one another.
constexpr int64_t kRowDotChains = 8;

template <typename T>
void RowDotsOf(const T* out, const T* dout, int64_t D, int64_t rows, double* dots) {
  for (int64_t r = 0; r < rows; ++r) dots[r] = 0;
  for (int64_t d = 0; d < D; ++d)
    for (int64_t r = 0; r < rows; ++r) dots[r] += double(dout[r * D + d]) * out[r * D + d];
}

template <typename T>
void RowDots(const Geometry& geo, const T* out, const T* dout, T* delta, bool bf16) {
  const AttentionShape& s = geo.shape();
  // Rows (b t, h) are consecutive D-element rows of out and dout.
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin * s.H; row < end * s.H; row += kRowDotChains) {
      const int64_t rows = std::min(kRowDotChains, end * s.H - row);
      double dots[kRowDotChains];
      if constexpr (std::is_same_v<T, float>) {
        if (bf16) RoundedRowDots(out + row * s.D, dout + row * s.D, rows, s.D, dots);
      }
      if (!std::is_same_v<T, float> || !bf16) RowDotsOf(out + row * s.D, dout + row * s.D, s.D, rows, dots);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t bt = (row + r) / s.H, h = (row + r) % s.H;
        delta[geo.L(bt / s.T, h, bt % s.T)] = T(dots[r]);
      }
    }
  });
}

// The forward's workspace, in carving order; with a counting carver, only its size.
template <typename T>
struct ForwardWorkspace {
  Geometry geo;
  T* kt;
  PackedTiles packed_kt, packed_v;
  PerThread<ForwardTiles<T>> tiles;
  ForwardWorkspace(AttentionShape s, const int32_t* seg, bool bf16, WorkspaceCarver& c)
      : geo(s, seg, c), kt(TakeTransposed<T>(geo, c)), packed_kt(TransposedBTiles(geo, c, bf16)),
        packed_v(RowBTiles(geo, c, bf16, s.Hkv)), tiles(c, s.D, bf16) {}
};

template <typename T>
struct GradWorkspace {
  Geometry geo;
  T *delta, *kt, *vt;
  GradPacked packed;
  PerThread<GradTiles<T>> tiles;
  GradWorkspace(AttentionShape s, const int32_t* seg, bool bf16, WorkspaceCarver& c)
      : geo(s, seg, c), delta(c.Take<T>(s.B * s.H * s.T, "attention row dots")), kt(TakeTransposed<T>(geo, c)),
        vt(TakeTransposed<T>(geo, c)), packed(geo, c, bf16), tiles(c, s.D, bf16) {}
};

// Segment ids change only whether ranges are carved: any non-null pointer sizes them.
const int32_t* SizingSegments(bool segment_ids) {
  static const int32_t kAny = 0;
  return segment_ids ? &kAny : nullptr;
}

template <typename T>
int64_t ForwardBytes(AttentionShape s, bool segment_ids, bool bf16) {
  WorkspaceCarver count;
  ForwardWorkspace<T>(s, SizingSegments(segment_ids), bf16, count);
  return count.used();
}

template <typename T>
int64_t GradBytes(AttentionShape s, bool segment_ids, bool bf16) {
  WorkspaceCarver count;
  GradWorkspace<T>(s, SizingSegments(segment_ids), bf16, count);
  return count.used();
}

template <typename T>
void Forward(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, T* out, T* lse,
             Workspace workspace, bool bf16) {
  WorkspaceCarver carver(workspace);
  const ForwardWorkspace<T> ws(s, seg, bf16, carver);
  const Geometry& geo = ws.geo;
  if (!PacksTiles(bf16)) TransposeHeads(geo, k, ws.kt);  // else the packed K^T tiles stand in for it
  PackTransposedTiles(geo, ws.packed_kt, k);
  PackRowTiles(geo, ws.packed_v, v);
  const int64_t heads = s.B * s.H, nqb = geo.blocks();
  // Head by head, so the threads share one head's K and V while they stay in cache; in each,
  // the costliest (last) query blocks first, so the pool's tail is short.
  ParallelFor(
      heads * nqb, 1,
      [&](int64_t begin, int64_t end) {
        const ForwardTiles<T> tiles = ws.tiles.ForThisThread();
        for (int64_t task = begin; task < end; ++task) {
          const int64_t qb = nqb - 1 - task % nqb, bh = task / nqb;
          ForwardQueryBlock(geo, q, ws.kt, v, bh / s.H, bh % s.H, qb, out, lse, tiles, ws.packed_kt, ws.packed_v);
        }
      },
      ws.tiles.slots());
}

template <typename T>
void Backward(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, const T* out, const T* lse,
              const T* dout, T* dq, T* dk, DvOut dv, Workspace workspace, AttentionGradSchedule schedule, bool bf16) {
  WorkspaceCarver carver(workspace);
  const GradWorkspace<T> ws(s, seg, bf16, carver);
  const Geometry& geo = ws.geo;
  RowDots(geo, out, dout, ws.delta, bf16);
  if (!PacksTiles(bf16)) {  // else the packed K^T and V^T tiles stand in for them
    TransposeHeads(geo, k, ws.kt);
    TransposeHeads(geo, v, ws.vt);
  }
  ws.packed.Fill(geo, k, v, q, dout);
  const int64_t dq_size = s.B * s.T * s.H * s.D;
  std::fill(dq, dq + dq_size, T(0));
  const int64_t groups = s.B * s.Hkv, nb = geo.blocks();
  if (schedule == AttentionGradSchedule::kAuto)
    schedule = groups >= 4 * NumThreads() ? AttentionGradSchedule::kFused : AttentionGradSchedule::kTwoPass;
  auto task = [&] {
    return GradTask<T>(geo, q, k, ws.kt, ws.vt, lse, dout, ws.delta, dq, ws.tiles.ForThisThread(), ws.packed);
  };
  const int slots = ws.tiles.slots();
  if (schedule == AttentionGradSchedule::kFused) {
    ParallelFor(
        groups, 1,
        [&](int64_t begin, int64_t end) {
          GradTask<T> t = task();
          for (int64_t bg = begin; bg < end; ++bg)
            for (int64_t kb = 0; kb < nb; kb += kKeyBlocksPerPass)
              t.KeyBlocks(bg / s.Hkv, bg % s.Hkv, kb, std::min(nb, kb + kKeyBlocksPerPass), /*with_dq=*/true, dk, dv);
        },
        slots);
  } else {
    // Key block 0 meets every query block: hand out the first key blocks first.
    ParallelFor(
        groups * nb, 1,
        [&](int64_t begin, int64_t end) {
          GradTask<T> t = task();
          for (int64_t i = begin; i < end; ++i)
            t.KeyBlocks((i % groups) / s.Hkv, (i % groups) % s.Hkv, i / groups, i / groups + 1, false, dk, dv);
        },
        slots);
    const int64_t heads = s.B * s.H;
    ParallelFor(
        heads * nb, 1,
        [&](int64_t begin, int64_t end) {
          GradTask<T> t = task();
          for (int64_t i = begin; i < end; ++i)
            t.QueryBlock((i % heads) / s.H, (i % heads) % s.H, nb - 1 - i / heads);
        },
        slots);
  }
  if (bf16) {  // dS was unscaled: dq's f32 sums take the scale once
    const T scale = T(1.0 / std::sqrt(double(s.D)));
    ParallelFor(dq_size, 1 << 14, [&](int64_t begin, int64_t end) { ScaleRow(dq + begin, end - begin, scale); });
  }
}

}  // namespace

template <typename T>
int64_t AttentionWorkspaceBytes(AttentionShape s, bool segment_ids) {
  return ForwardBytes<T>(s, segment_ids, false);
}

template <typename T>
int64_t AttentionGradWorkspaceBytes(AttentionShape s, bool segment_ids) {
  return GradBytes<T>(s, segment_ids, false);
}

template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, T* out, T* lse,
               Workspace workspace) {
  Forward(q, k, v, seg, s, out, lse, workspace, false);
}

template <typename T>
void Attention(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, T* out, T* lse) {
  const ScratchBuffer scratch(AttentionWorkspaceBytes<T>(s, seg != nullptr));
  Attention(q, k, v, seg, s, out, lse, scratch.get());
}

template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv, Workspace workspace,
                   AttentionGradSchedule schedule) {
  Backward(q, k, v, seg, s, out, lse, dout, dq, dk, DvOut{dv, std::nullopt}, workspace, schedule, false);
}

template <typename T>
void AttentionGrad(const T* q, const T* k, const T* v, const int32_t* seg, AttentionShape s, const T* out,
                   const T* lse, const T* dout, T* dq, T* dk, T* dv, AttentionGradSchedule schedule) {
  const ScratchBuffer scratch(AttentionGradWorkspaceBytes<T>(s, seg != nullptr));
  AttentionGrad(q, k, v, seg, s, out, lse, dout, dq, dk, dv, scratch.get(), schedule);
}

int64_t AttentionBf16InputsWorkspaceBytes(AttentionShape s, bool segment_ids) {
  return ForwardBytes<float>(s, segment_ids, true);
}

int64_t AttentionGradBf16InputsWorkspaceBytes(AttentionShape s, bool segment_ids) {
  return GradBytes<float>(s, segment_ids, true);
}

void AttentionBf16Inputs(const float* q, const float* k, const float* v, const int32_t* seg, AttentionShape s,
                         float* out, float* lse, Workspace workspace) {
  Forward(q, k, v, seg, s, out, lse, workspace, true);
}

void AttentionBf16Inputs(const float* q, const float* k, const float* v, const int32_t* seg, AttentionShape s,
                         float* out, float* lse) {
  const ScratchBuffer scratch(AttentionBf16InputsWorkspaceBytes(s, seg != nullptr));
  AttentionBf16Inputs(q, k, v, seg, s, out, lse, scratch.get());
}

void AttentionGradBf16Inputs(const float* q, const float* k, const float* v, const int32_t* seg, AttentionShape s,
                             const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv,
                             Workspace workspace, AttentionGradSchedule schedule) {
  Backward(q, k, v, seg, s, out, lse, dout, dq, dk, DvOut{dv, std::nullopt}, workspace, schedule, true);
}

void AttentionGradBf16InputsPreparedDv(const float* q, const float* k, const float* v, const int32_t* seg,
                                       AttentionShape s, const float* out, const float* lse, const float* dout,
                                       float* dq, float* dk, Bf16Gemm gemm, void* dv_prepared, Workspace workspace,
                                       AttentionGradSchedule schedule) {
  Backward(q, k, v, seg, s, out, lse, dout, dq, dk, DvOut{dv_prepared, gemm}, workspace, schedule, true);
}

void AttentionGradBf16Inputs(const float* q, const float* k, const float* v, const int32_t* seg, AttentionShape s,
                             const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv,
                             AttentionGradSchedule schedule) {
  const ScratchBuffer scratch(AttentionGradBf16InputsWorkspaceBytes(s, seg != nullptr));
  AttentionGradBf16Inputs(q, k, v, seg, s, out, lse, dout, dq, dk, dv, scratch.get(), schedule);
}

#define INSTANTIATE(T)                                                                                          \
  template int64_t AttentionWorkspaceBytes<T>(AttentionShape, bool);                                           \
  template int64_t AttentionGradWorkspaceBytes<T>(AttentionShape, bool);                                       \
  template void Attention<T>(const T*, const T*, const T*, const int32_t*, AttentionShape, T*, T*);            \
  template void Attention<T>(const T*, const T*, const T*, const int32_t*, AttentionShape, T*, T*, Workspace); \
  template void AttentionGrad<T>(const T*, const T*, const T*, const int32_t*, AttentionShape, const T*,       \
                                 const T*, const T*, T*, T*, T*, AttentionGradSchedule);                       \
  template void AttentionGrad<T>(const T*, const T*, const T*, const int32_t*, AttentionShape, const T*,       \
                                 const T*, const T*, T*, T*, T*, Workspace, AttentionGradSchedule);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace gpt_sft::runtime::kernels
