// The cpu driver's builtin table: each CPU library kernel under its name (BUILTINS.md lists
// them with their arguments). A builtin parses its arguments with the same code in prepare
// (once, when recorded: counts, kinds, sizes against the dims) and in run (every step: a few
// pointer reads), so the two cannot disagree; run then calls the kernel exactly as the
// interpreter does, so the compiled step on the cpu device computes what the interpreter does.
#include "runtime/device/cpu/host_builtins.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/device/cpu/builtin_call.h"
#include "runtime/device/cpu/ukernels/attention.h"
#include "runtime/device/cpu/ukernels/gemm.h"
#include "runtime/device/cpu/ukernels/norm.h"
#include "runtime/device/cpu/ukernels/rotary.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/linear_cross_entropy.h"
#include "runtime/kernels/cpu/muon_group.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/permute.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/softcap_bf16.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;

// Every builtin: a Call struct parsed from the arguments, the workspace it needs, and Run.
// Prepare and Run below are generated from them.

template <typename T>
struct EmbeddingCall {
  static constexpr const char* kName = "embedding";
  const T* table;
  const int32_t* ids;
  T* out;
  int64_t V, C, N;
  explicit EmbeddingCall(ArgReader& r) {
    V = r.Int("V"), C = r.Int("C"), N = r.Int("N");
    table = r.Buffer<const T>(V * C, "table");
    ids = r.Buffer<const int32_t>(N, "ids");
    out = r.Buffer<T>(N * C, "out");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if (absl::Status s = CheckIds(ids, N, 0, V, "token id"); !s.ok()) return s;
    k::Embedding(table, ids, out, N, C);
    return absl::OkStatus();
  }
};

template <typename T>
struct EmbeddingGradCall {
  static constexpr const char* kName = "embedding_grad";
  const int32_t* ids;
  const T* dy;
  T* dtable;
  int64_t V, C, N;
  explicit EmbeddingGradCall(ArgReader& r) {
    V = r.Int("V"), C = r.Int("C"), N = r.Int("N");
    ids = r.Buffer<const int32_t>(N, "ids");
    dy = r.Buffer<const T>(N * C, "dy");
    dtable = r.Buffer<T>(V * C, "dtable");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if (absl::Status s = CheckIds(ids, N, 0, V, "token id"); !s.ok()) return s;
    std::memset(dtable, 0, V * C * sizeof(T));
    k::EmbeddingGrad(dy, ids, dtable, N, C);
    return absl::OkStatus();
  }
};

/// The unfused elementwise ops: (n[, cap]; a[, b], y).
enum class Pointwise { kAdd, kMul, kReluSquare, kReluSquareGrad, kSoftcap, kSoftcapGrad };

template <typename T, Pointwise kOp>
struct PointwiseCall {
  static constexpr bool kBinary = kOp != Pointwise::kReluSquare && kOp != Pointwise::kSoftcap;
  static constexpr bool kCapped = kOp == Pointwise::kSoftcap || kOp == Pointwise::kSoftcapGrad;
  static constexpr const char* kName = kOp == Pointwise::kAdd              ? "add"
                                       : kOp == Pointwise::kMul            ? "mul"
                                       : kOp == Pointwise::kReluSquare     ? "relu_square"
                                       : kOp == Pointwise::kReluSquareGrad ? "relu_square_grad"
                                       : kOp == Pointwise::kSoftcap        ? "softcap"
                                                                           : "softcap_grad";
  const T *a, *b = nullptr;
  T* y;
  int64_t n;
  double cap = 0;
  explicit PointwiseCall(ArgReader& r) {
    n = r.Int("n");
    if (kCapped) cap = r.Float("cap");
    a = r.Buffer<const T>(n, "a");
    if (kBinary) b = r.Buffer<const T>(n, "b");
    y = r.Buffer<T>(n, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    switch (kOp) {
      case Pointwise::kAdd: k::Add(a, b, y, n); break;
      case Pointwise::kMul: k::Mul(a, b, y, n); break;
      case Pointwise::kReluSquare: k::ReluSquare(a, y, n); break;
      case Pointwise::kReluSquareGrad: k::ReluSquareGrad(a, b, y, n); break;
      case Pointwise::kSoftcap: k::Softcap(a, y, n, T(cap)); break;
      case Pointwise::kSoftcapGrad: k::SoftcapGrad(a, b, y, n, T(cap)); break;
    }
    return absl::OkStatus();
  }
};

/// The compiler's batch of adds (one launch for a run of them, the gradient accumulation's):
/// (count, n[count]; a, b, y for each), run one after another in that order.
template <typename T>
struct AddListCall {
  static constexpr const char* kName = "add_list";
  static constexpr int64_t kMaxAdds = 1024;
  struct One {
    const T *a, *b;
    T* y;
    int64_t n;
  };
  std::array<One, kMaxAdds> adds;
  int64_t count;
  explicit AddListCall(ArgReader& r) {
    count = std::clamp<int64_t>(r.Int("count"), 0, kMaxAdds);
    for (int64_t i = 0; i < count; ++i) adds[i].n = r.Int("n");
    for (int64_t i = 0; i < count; ++i) {
      adds[i].a = r.Buffer<const T>(adds[i].n, "a");
      adds[i].b = r.Buffer<const T>(adds[i].n, "b");
      adds[i].y = r.Buffer<T>(adds[i].n, "y");
    }
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    for (int64_t i = 0; i < count; ++i) k::Add(adds[i].a, adds[i].b, adds[i].y, adds[i].n);
    return absl::OkStatus();
  }
};

template <typename T>
struct CrossEntropyCall {  // (N, V; logits, targets, loss)
  static constexpr const char* kName = "cross_entropy";
  const T* logits;
  const int32_t* targets;
  T* loss;
  int64_t N, V;
  explicit CrossEntropyCall(ArgReader& r) {
    N = r.Int("N"), V = r.Int("V");
    logits = r.Buffer<const T>(N * V, "logits");
    targets = r.Buffer<const int32_t>(N, "targets");
    loss = r.Buffer<T>(1, "loss");
  }
  int64_t Workspace(int) const { return k::CrossEntropyWorkspaceBytes(N); }
  absl::Status Run(k::Workspace ws) const {
    *loss = T(k::CrossEntropy(logits, targets, N, V, ws).loss);
    return absl::OkStatus();
  }
};

/// The compiler's fusion of a softcap into the cross-entropy that reads it:
/// (N, V; cap; x, targets, y, loss), y = softcap(x) written for every row and the loss of y.
template <typename T>
struct SoftcapCrossEntropyCall {
  static constexpr const char* kName = "softcap_cross_entropy";
  const T* x;
  const int32_t* targets;
  T *y, *loss;
  int64_t N, V;
  double cap;
  explicit SoftcapCrossEntropyCall(ArgReader& r) {
    N = r.Int("N"), V = r.Int("V"), cap = r.Float("cap");
    x = r.Buffer<const T>(N * V, "x");
    targets = r.Buffer<const int32_t>(N, "targets");
    y = r.Buffer<T>(N * V, "y");
    loss = r.Buffer<T>(1, "loss");
  }
  int64_t Workspace(int) const { return k::CrossEntropyWorkspaceBytes(N); }
  absl::Status Run(k::Workspace ws) const {
    *loss = T(k::SoftcapCrossEntropy(x, T(cap), y, targets, N, V, ws).loss);
    return absl::OkStatus();
  }
};

/// The gradient, and with cap != 0 the softcap's gradient fused into it (the compiler's
/// epilogue decision): (N, V, cap; logits, targets, dloss, dx).
template <typename T>
struct CrossEntropyGradCall {
  static constexpr const char* kName = "cross_entropy_grad";
  const T* logits;
  const int32_t* targets;
  const T* dloss;
  T* dx;
  int64_t N, V;
  double cap;
  explicit CrossEntropyGradCall(ArgReader& r) {
    N = r.Int("N"), V = r.Int("V"), cap = r.Float("softcap");
    logits = r.Buffer<const T>(N * V, "logits");
    targets = r.Buffer<const int32_t>(N, "targets");
    dloss = r.Buffer<const T>(1, "dloss");
    dx = r.Buffer<T>(N * V, "dx");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if (cap != 0) {
      k::CrossEntropySoftcapGrad(logits, targets, N, V, double(*dloss), T(cap), dx);
    } else {
      k::CrossEntropyGrad(logits, targets, N, V, double(*dloss), dx);
    }
    return absl::OkStatus();
  }
};

/// Autocast's rounding alone (gpt.round_bf16 where no neighbour absorbs it): (n; x, y).
struct RoundBf16Call {
  static constexpr const char* kName = "round_bf16";
  const float* x;
  float* y;
  int64_t n;
  explicit RoundBf16Call(ArgReader& r) {
    n = r.Int("n");
    x = r.Buffer<const float>(n, "x");
    y = r.Buffer<float>(n, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::RoundBf16(x, y, n);
    return absl::OkStatus();
  }
};

/// nanochat's bf16 softcap (gpt.softcap's round_bf16), x rounded first when round_input (the
/// gpt.round_bf16 before it, absorbed): (n, round_input; cap; x, y).
struct SoftcapBf16Call {
  static constexpr const char* kName = "softcap_bf16";
  const float* x;
  float* y;
  int64_t n;
  bool round_input;
  double cap;
  explicit SoftcapBf16Call(ArgReader& r) {
    n = r.Int("n"), round_input = r.Int("round_input") != 0, cap = r.Float("cap");
    x = r.Buffer<const float>(n, "x");
    y = r.Buffer<float>(n, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::SoftcapBf16(x, y, n, float(cap), round_input);
    return absl::OkStatus();
  }
};

/// The bf16 softcap and the cross-entropy of its result in one pass over each row:
/// (N, V, round_input; cap; x, targets, y, loss).
struct SoftcapBf16CrossEntropyCall {
  static constexpr const char* kName = "softcap_bf16_cross_entropy";
  const float* x;
  const int32_t* targets;
  float *y, *loss;
  int64_t N, V;
  bool round_input;
  double cap;
  explicit SoftcapBf16CrossEntropyCall(ArgReader& r) {
    N = r.Int("N"), V = r.Int("V"), round_input = r.Int("round_input") != 0, cap = r.Float("cap");
    x = r.Buffer<const float>(N * V, "x");
    targets = r.Buffer<const int32_t>(N, "targets");
    y = r.Buffer<float>(N * V, "y");
    loss = r.Buffer<float>(1, "loss");
  }
  int64_t Workspace(int) const { return k::CrossEntropyWorkspaceBytes(N); }
  absl::Status Run(k::Workspace ws) const {
    *loss = float(k::SoftcapBf16CrossEntropy(x, float(cap), round_input, y, targets, N, V, ws).loss);
    return absl::OkStatus();
  }
};

/// The cross-entropy's gradient rounded to bf16 and carried through the softcap's gradient
/// in one pass (the epilogue with the bf16 cotangent): (N, V; cap; logits, targets, dloss, dx).
struct CrossEntropyGradSoftcapBf16Call {
  static constexpr const char* kName = "cross_entropy_grad_softcap_bf16";
  const float* logits;
  const int32_t* targets;
  const float* dloss;
  float* dx;
  int64_t N, V;
  double cap;
  explicit CrossEntropyGradSoftcapBf16Call(ArgReader& r) {
    N = r.Int("N"), V = r.Int("V"), cap = r.Float("softcap");
    logits = r.Buffer<const float>(N * V, "logits");
    targets = r.Buffer<const int32_t>(N, "targets");
    dloss = r.Buffer<const float>(1, "dloss");
    dx = r.Buffer<float>(N * V, "dx");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::CrossEntropyBf16SoftcapGrad(logits, targets, N, V, double(*dloss), float(cap), dx);
    return absl::OkStatus();
  }
};

/// The lm_head's loss and gradient in one launch (the compiler's fusion of matmul, softcap,
/// cross-entropy and their VJP down to dx): (N, V, C, cap; x, w, targets, dloss, loss, dy, dx),
/// dx = dy w from w itself. `Bf16`: the chain under bf16 autocast
/// (linear_softcap_bf16_cross_entropy_grad_v2, f32 only), with a dy layout after C (0: f32, 1:
/// prepared for the bf16 GEMMs, 2: prepared in the weight gradient's slabs: k::LinearLossDy).
template <typename T, bool Bf16 = false>
struct LinearSoftcapCrossEntropyGradCall {
  static constexpr const char* kName =
      Bf16 ? "linear_softcap_bf16_cross_entropy_grad_v2" : "linear_softcap_cross_entropy_grad_v2";
  const T *x, *w, *dloss;
  const int32_t* targets;
  T *loss, *dy, *dx;
  k::LinearLossShape s;
  k::LinearLossDy dy_layout = k::LinearLossDy::kF32;  // bf16: how dy is written (for its weight gradient)
  double cap;
  explicit LinearSoftcapCrossEntropyGradCall(ArgReader& r) {
    s.N = r.Int("N"), s.V = r.Int("V"), s.C = r.Int("C");
    if constexpr (Bf16) {
      const int64_t layout = r.Int("dy_layout");
      if (layout < 0 || layout > 2) r.Fail(absl::StrCat("dy_layout ", layout, " is not 0, 1 or 2"));
      dy_layout = static_cast<k::LinearLossDy>(layout);
    }
    cap = r.Float("cap");
    x = r.Buffer<const T>(s.N * s.C, "x"), w = r.Buffer<const T>(s.V * s.C, "w");
    targets = r.Buffer<const int32_t>(s.N, "targets");
    dloss = r.Buffer<const T>(1, "dloss");
    loss = r.Buffer<T>(1, "loss"), dy = r.Buffer<T>(s.N * s.V, "dy"), dx = r.Buffer<T>(s.N * s.C, "dx");
  }
  int64_t Workspace(int) const {
    if constexpr (Bf16) return k::LinearSoftcapBf16CrossEntropyWorkspaceBytes(k::ActiveBf16Gemm(), s);
    return k::LinearSoftcapCrossEntropyWorkspaceBytes<T>(s);
  }
  absl::Status Run(k::Workspace ws) const {
    if constexpr (Bf16) {
      static_assert(std::is_same_v<T, float>, "the bf16 chain runs on f32 tensors");
      *loss = float(k::LinearSoftcapBf16CrossEntropyWithGrad(k::ActiveBf16Gemm(), x, w, targets, s, float(cap),
                                                             double(*dloss), dy, dy_layout, dx, ws)
                        .loss);
    } else {
      *loss = T(k::LinearSoftcapCrossEntropyWithGrad(x, w, targets, s, T(cap), double(*dloss), dy, dx, ws).loss);
    }
    return absl::OkStatus();
  }
};

/// (n, beta1, beta2, eps, weight_decay; p, g, m, v, lr, step, new_p, new_m, new_v): the new
/// state lands in the new_* buffers (the inputs' own when the plan donated them).
template <typename T>
struct AdamWCall {
  static constexpr const char* kName = "adamw";
  const T *p, *g, *m, *v, *lr, *step;
  T *np, *nm, *nv;
  int64_t n;
  double beta1, beta2, eps, wd;
  explicit AdamWCall(ArgReader& r) {
    n = r.Int("n"), beta1 = r.Float("beta1"), beta2 = r.Float("beta2"), eps = r.Float("eps"),
    wd = r.Float("weight_decay");
    p = r.Buffer<const T>(n, "param"), g = r.Buffer<const T>(n, "grad"), m = r.Buffer<const T>(n, "exp_avg"),
    v = r.Buffer<const T>(n, "exp_avg_sq"), lr = r.Buffer<const T>(1, "lr"), step = r.Buffer<const T>(1, "step");
    np = r.Buffer<T>(n, "new_param"), nm = r.Buffer<T>(n, "new_exp_avg"), nv = r.Buffer<T>(n, "new_exp_avg_sq");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    const double t = double(*step);
    if (t < 1) return absl::InvalidArgumentError(absl::StrCat("adamw: step must be >= 1, got ", t));
    if (np != p) std::memmove(np, p, n * sizeof(T));
    if (nm != m) std::memmove(nm, m, n * sizeof(T));
    if (nv != v) std::memmove(nv, v, n * sizeof(T));
    const k::AdamWHyper hyper{double(*lr), beta1, beta2, eps, wd, static_cast<int64_t>(std::llround(t))};
    k::AdamWUpdate(np, nm, nv, g, n, hyper);
    return absl::OkStatus();
  }
};

/// (rows, cols, momentum; p, g, buf, lr, new_p, new_buf): Nesterov, 5 Newton-Schulz steps;
/// `Bf16`: in bf16 as nanochat runs them (muon_bf16, the step under bf16 autocast).
template <typename T, bool Bf16 = false>
struct MuonCall {
  static constexpr const char* kName = Bf16 ? "muon_bf16" : "muon";
  const T *p, *g, *buf, *lr;
  T *np, *nbuf;
  int64_t rows, cols;
  double momentum;
  explicit MuonCall(ArgReader& r) {
    rows = r.Int("rows"), cols = r.Int("cols"), momentum = r.Float("momentum");
    const int64_t n = rows * cols;
    p = r.Buffer<const T>(n, "param"), g = r.Buffer<const T>(n, "grad"),
    buf = r.Buffer<const T>(n, "momentum_buffer"), lr = r.Buffer<const T>(1, "lr");
    np = r.Buffer<T>(n, "new_param"), nbuf = r.Buffer<T>(n, "new_momentum_buffer");
  }
  int64_t Workspace(int) const { return k::MuonScratchSize(rows, cols) * static_cast<int64_t>(sizeof(T)); }
  absl::Status Run(k::Workspace ws) const {
    const int64_t n = rows * cols;
    if (np != p) std::memmove(np, p, n * sizeof(T));
    if (nbuf != buf) std::memmove(nbuf, buf, n * sizeof(T));
    k::MuonUpdate(np, nbuf, g, rows, cols, k::MuonHyper{double(*lr), momentum, Bf16}, reinterpret_cast<T*>(ws.data));
    return absl::OkStatus();
  }
};

/// (count, rows, cols, momentum; p, g, buf, lr, new_p, new_buf for each of `count`): the
/// compiler's group of an entry point's same-shape muon updates (muon_group_fusion.h) in one
/// launch, their matrices in parallel over the pool (muon_group.h), each with MuonCall's bits.
/// The workspace holds one Muon scratch per matrix that runs at once.
template <typename T, bool Bf16 = false>
struct MuonGroupCall {
  static constexpr const char* kName = Bf16 ? "muon_group_bf16" : "muon_group";
  static constexpr int64_t kMaxMatrices = 256;  // compiler/lowering/cpu: kMaxMuonGroup
  struct One {
    const T *p, *g, *buf, *lr;
    T *np, *nbuf;
  };
  std::array<One, kMaxMatrices> matrices;
  int64_t count, rows, cols;
  double momentum;
  explicit MuonGroupCall(ArgReader& r) {
    count = std::clamp<int64_t>(r.Int("count"), 0, kMaxMatrices);
    rows = r.Int("rows"), cols = r.Int("cols"), momentum = r.Float("momentum");
    const int64_t n = rows * cols;
    for (int64_t i = 0; i < count; ++i) {
      One& m = matrices[i];
      m.p = r.Buffer<const T>(n, "param"), m.g = r.Buffer<const T>(n, "grad");
      m.buf = r.Buffer<const T>(n, "momentum_buffer"), m.lr = r.Buffer<const T>(1, "lr");
      m.np = r.Buffer<T>(n, "new_param"), m.nbuf = r.Buffer<T>(n, "new_momentum_buffer");
    }
  }
  int64_t SlotBytes() const { return k::MuonGroupSlotStride(rows, cols, sizeof(T)) * static_cast<int64_t>(sizeof(T)); }
  int64_t Workspace(int threads) const { return k::MuonGroupSlots(count, threads) * SlotBytes(); }
  absl::Status Run(k::Workspace ws) const {
    const int64_t n = rows * cols;
    std::array<k::MuonGroupMatrix<T>, kMaxMatrices> group;
    for (int64_t i = 0; i < count; ++i) {
      const One& m = matrices[i];
      if (m.np != m.p) std::memmove(m.np, m.p, n * sizeof(T));
      if (m.nbuf != m.buf) std::memmove(m.nbuf, m.buf, n * sizeof(T));
      group[i] = {m.np, m.nbuf, m.g, double(*m.lr)};
    }
    // As many at once as the thread count allows now and the workspace holds (it was sized
    // for the thread count when recorded).
    const int64_t fit = SlotBytes() > 0 ? ws.bytes / SlotBytes() : 1;
    const int64_t slots = std::max<int64_t>(1, std::min<int64_t>(k::MuonGroupSlots(count, k::NumThreads()), fit));
    k::MuonGroupUpdate(group.data(), count, rows, cols, momentum, Bf16, reinterpret_cast<T*>(ws.data),
                       static_cast<int>(slots));
    return absl::OkStatus();
  }
};

/// (rank, dims[8], perm[8]; x, y) of 4- or 8-byte elements.
template <typename E>
struct PermuteCall {
  static constexpr const char* kName = "permute";
  const E* x;
  E* y;
  int rank;
  std::array<int64_t, k::kMaxPermuteRank> dims{}, perm{};
  explicit PermuteCall(ArgReader& r) {
    rank = static_cast<int>(r.Int("rank"));
    int64_t n = 1;
    for (int i = 0; i < k::kMaxPermuteRank; ++i) {
      dims[i] = r.Int("dim");
      if (i < rank) n *= dims[i];
    }
    for (int i = 0; i < k::kMaxPermuteRank; ++i) perm[i] = r.Int("perm");
    x = r.Buffer<const E>(n, "x");
    y = r.Buffer<E>(n, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::Permute(x, y, dims.data(), perm.data(), rank);
    return absl::OkStatus();
  }
};

const HostBuiltin kBuiltins[] = {
    Entry<EmbeddingCall<float>>("cpu.embedding.f32"),
    Entry<EmbeddingCall<double>>("cpu.embedding.f64"),
    Entry<EmbeddingGradCall<float>>("cpu.embedding_grad.f32"),
    Entry<EmbeddingGradCall<double>>("cpu.embedding_grad.f64"),
    GemmBuiltin("cpu.gemm.f32", /*f64=*/false),
    GemmBuiltin("cpu.gemm.f64", /*f64=*/true),
    NormBuiltin("cpu.norm.f32", /*f64=*/false),
    NormBuiltin("cpu.norm.f64", /*f64=*/true),
    RotaryBuiltin("cpu.rotary.f32", /*f64=*/false),
    RotaryBuiltin("cpu.rotary.f64", /*f64=*/true),
    AttentionBuiltin("cpu.attention.f32", /*f64=*/false),
    AttentionBuiltin("cpu.attention.f64", /*f64=*/true),
    Entry<PointwiseCall<float, Pointwise::kAdd>>("cpu.add.f32"),
    Entry<PointwiseCall<double, Pointwise::kAdd>>("cpu.add.f64"),
    Entry<AddListCall<float>>("cpu.add_list.f32"),
    Entry<AddListCall<double>>("cpu.add_list.f64"),
    Entry<PointwiseCall<float, Pointwise::kMul>>("cpu.mul.f32"),
    Entry<PointwiseCall<double, Pointwise::kMul>>("cpu.mul.f64"),
    Entry<PointwiseCall<float, Pointwise::kReluSquare>>("cpu.relu_square.f32"),
    Entry<PointwiseCall<double, Pointwise::kReluSquare>>("cpu.relu_square.f64"),
    Entry<PointwiseCall<float, Pointwise::kReluSquareGrad>>("cpu.relu_square_grad.f32"),
    Entry<PointwiseCall<double, Pointwise::kReluSquareGrad>>("cpu.relu_square_grad.f64"),
    Entry<PointwiseCall<float, Pointwise::kSoftcap>>("cpu.softcap.f32"),
    Entry<PointwiseCall<double, Pointwise::kSoftcap>>("cpu.softcap.f64"),
    Entry<PointwiseCall<float, Pointwise::kSoftcapGrad>>("cpu.softcap_grad.f32"),
    Entry<PointwiseCall<double, Pointwise::kSoftcapGrad>>("cpu.softcap_grad.f64"),
    Entry<CrossEntropyCall<float>>("cpu.cross_entropy.f32"),
    Entry<CrossEntropyCall<double>>("cpu.cross_entropy.f64"),
    Entry<SoftcapCrossEntropyCall<float>>("cpu.softcap_cross_entropy.f32"),
    Entry<SoftcapCrossEntropyCall<double>>("cpu.softcap_cross_entropy.f64"),
    Entry<CrossEntropyGradCall<float>>("cpu.cross_entropy_grad.f32"),
    Entry<CrossEntropyGradCall<double>>("cpu.cross_entropy_grad.f64"),
    Entry<LinearSoftcapCrossEntropyGradCall<float>>("cpu.linear_softcap_cross_entropy_grad_v2.f32"),
    Entry<LinearSoftcapCrossEntropyGradCall<double>>("cpu.linear_softcap_cross_entropy_grad_v2.f64"),
    Entry<LinearSoftcapCrossEntropyGradCall<float, true>>("cpu.linear_softcap_bf16_cross_entropy_grad_v2.f32"),
    Entry<RoundBf16Call>("cpu.round_bf16.f32"),
    Entry<SoftcapBf16Call>("cpu.softcap_bf16.f32"),
    Entry<SoftcapBf16CrossEntropyCall>("cpu.softcap_bf16_cross_entropy.f32"),
    Entry<CrossEntropyGradSoftcapBf16Call>("cpu.cross_entropy_grad_softcap_bf16.f32"),
    Entry<AdamWCall<float>>("cpu.adamw.f32"),
    Entry<AdamWCall<double>>("cpu.adamw.f64"),
    Entry<MuonCall<float>>("cpu.muon.f32"),
    Entry<MuonCall<double>>("cpu.muon.f64"),
    Entry<MuonCall<float, true>>("cpu.muon_bf16.f32"),
    Entry<MuonGroupCall<float>>("cpu.muon_group.f32"),
    Entry<MuonGroupCall<double>>("cpu.muon_group.f64"),
    Entry<MuonGroupCall<float, true>>("cpu.muon_group_bf16.f32"),
    Entry<PermuteCall<uint32_t>>("cpu.permute.b32"),
    Entry<PermuteCall<uint64_t>>("cpu.permute.b64"),
};

}  // namespace

const HostBuiltin* FindHostBuiltin(std::string_view name) {
  for (const HostBuiltin& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::vector<std::string_view> HostBuiltinNames() {
  std::vector<std::string_view> names;
  for (const HostBuiltin& b : kBuiltins) names.push_back(b.name);
  return names;
}

}  // namespace gpt_sft::runtime::device::cpu
