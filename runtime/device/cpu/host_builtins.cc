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
#include "runtime/kernels/cpu/attention.h"
#include "runtime/kernels/cpu/cross_entropy.h"
#include "runtime/kernels/cpu/embedding.h"
#include "runtime/kernels/cpu/linear_cross_entropy.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/matmul_relu_square.h"
#include "runtime/kernels/cpu/matmul_residual_rms_norm.h"
#include "runtime/kernels/cpu/muon_group.h"
#include "runtime/kernels/cpu/optimizers.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/permute.h"
#include "runtime/kernels/cpu/pointwise.h"
#include "runtime/kernels/cpu/residual_rms_norm.h"
#include "runtime/kernels/cpu/rms_norm.h"
#include "runtime/kernels/cpu/rms_norm_round_bf16.h"
#include "runtime/kernels/cpu/rotary.h"
#include "runtime/kernels/cpu/rotary_rms_norm.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/softcap_bf16.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;

/// Reads a builtin's arguments in order: buffers (checked to hold at least the bytes the
/// dims imply, when `check` is on) and scalars. The first problem is kept and names the
/// builtin and the argument.
class ArgReader {
 public:
  ArgReader(std::string_view builtin, absl::Span<const HostArg> args, bool check)
      : builtin_(builtin), args_(args), check_(check) {}

  int64_t Int(const char* what) {
    const HostArg* a = Next(what, /*buffer=*/false);
    return a ? a->i() : 0;
  }
  double Float(const char* what) {
    const HostArg* a = Next(what, /*buffer=*/false);
    return a ? a->f() : 0.0;
  }
  /// The next buffer, as T*, which must hold `count` elements.
  template <typename T>
  T* Buffer(int64_t count, const char* what) {
    const HostArg* a = Next(what, /*buffer=*/true);
    if (a == nullptr) return nullptr;
    if (check_ && a->bytes < count * static_cast<int64_t>(sizeof(T))) {
      Fail(absl::StrCat("argument ", index_ - 1, " (", what, ") has ", a->bytes, " bytes; ", count * sizeof(T),
                        " are needed"));
    }
    return a->as<T>();
  }
  /// The status once every argument is read: any problem, or arguments left over.
  absl::Status Finish() {
    if (status_.ok() && index_ != args_.size()) {
      Fail(absl::StrCat("takes ", index_, " arguments, got ", args_.size()));
    }
    return status_;
  }
  /// Records a problem with the arguments (the first one is the status).
  void Fail(const std::string& message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(std::string(builtin_), ": ", message));
  }

 private:
  const HostArg* Next(const char* what, bool buffer) {
    if (index_ >= args_.size()) {
      Fail(absl::StrCat("argument ", index_, " (", what, ") is missing; got ", args_.size()));
      return nullptr;
    }
    const HostArg& a = args_[index_++];
    if (a.is_buffer != buffer) {
      Fail(absl::StrCat("argument ", index_ - 1, " (", what, ") must be a ", buffer ? "buffer" : "scalar"));
      return nullptr;
    }
    return &a;
  }

  std::string_view builtin_;
  absl::Span<const HostArg> args_;
  bool check_;
  size_t index_ = 0;
  absl::Status status_;
};

absl::Status CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t end, const char* what) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < lo || ids[i] >= end) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", ids[i], " at flat index ", i, " is outside [", lo, ", ",
                                                     end, ")"));
    }
  }
  return absl::OkStatus();
}

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

// kBf16Inputs: the inputs are bf16 values (gpt.matmul under bf16 autocast), so the GEMM
// runs matmul_bf16.h's kernel, the one the interpreter runs for the same op. kRoundOutput
// (with kBf16Inputs): y rounded to bf16 values as it is written (the compiler's fusion of the
// autocast rounding after the matmul). kPreparedX (with kRoundOutput): x as its producer wrote
// it, prepared for the bf16 GEMM (the compiler's choice when only bf16 GEMMs read x); a
// prepared operand's f32 buffer holds its prepared elements in all or half of its bytes.
template <typename T, bool kBf16Inputs = false, bool kRoundOutput = false, bool kPreparedX = false>
struct MatmulCall {  // y[M, N] = x[M, K] w[N, K]^T
  static_assert(!kPreparedX || kRoundOutput, "a prepared x is read by the rounded product only");
  static constexpr const char* kName = kPreparedX     ? "matmul_bf16_round_prepared_x"
                                       : kRoundOutput ? "matmul_bf16_round"
                                       : kBf16Inputs  ? "matmul_bf16"
                                                      : "matmul";
  const T *x, *w;
  T* y;
  int64_t M, N, K;
  explicit MatmulCall(ArgReader& r) {
    M = r.Int("M"), N = r.Int("N"), K = r.Int("K");
    x = r.Buffer<const T>(M * K, "x");
    w = r.Buffer<const T>(N * K, "w");
    y = r.Buffer<T>(M * N, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kPreparedX) {
      k::MatmulBf16PreparedXRoundedOutput(x, w, y, M, N, K);
    } else if constexpr (kRoundOutput) {
      k::MatmulBf16InputsRoundedOutput(x, w, y, M, N, K);
    } else if constexpr (kBf16Inputs) {
      k::MatmulBf16Inputs(x, w, y, M, N, K);
    } else {
      k::Matmul(x, w, y, M, N, K);
    }
    return absl::OkStatus();
  }
};

/// y[M, N] = x[M, K] w[N, K]^T and r = relu(y)² in one pass (the compiler's fusion of the MLP's
/// first matmul with its relu²; kBf16: under bf16 autocast, y rounded, matmul_relu_square.h,
/// with x as its producer wrote it (kPreparedX) and r written prepared for the bf16 GEMMs that
/// alone read it (kPreparedR), the compiler's choices).
template <typename T, bool kBf16 = false, bool kPreparedX = false, bool kPreparedR = false>
struct MatmulReluSquareCall {
  static_assert(kBf16 || (!kPreparedX && !kPreparedR), "prepared operands are bf16 autocast's");
  static constexpr const char* kName = kPreparedX && kPreparedR ? "matmul_bf16_round_relu_square_prepared_x_r"
                                       : kPreparedX             ? "matmul_bf16_round_relu_square_prepared_x"
                                       : kPreparedR             ? "matmul_bf16_round_relu_square_prepared_r"
                                       : kBf16                  ? "matmul_bf16_round_relu_square"
                                                                : "matmul_relu_square";
  const T *x, *w;
  T *y, *r;
  int64_t M, N, K;
  explicit MatmulReluSquareCall(ArgReader& a) {
    M = a.Int("M"), N = a.Int("N"), K = a.Int("K");
    x = a.Buffer<const T>(M * K, "x");
    w = a.Buffer<const T>(N * K, "w");
    y = a.Buffer<T>(M * N, "y");
    r = a.Buffer<T>(M * N, "r");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kBf16) {
      k::MatmulBf16RoundReluSquarePrepared(x, kPreparedX, w, y, r, kPreparedR, M, N, K);
    } else {
      k::MatmulReluSquare(x, w, y, r, M, N, K);
    }
    return absl::OkStatus();
  }
};

/// (M, N, K; eps; x, w, res, mm, sum, y): a block's bf16 output projection with the residual
/// add and the next rms_norm as its epilogue (matmul_residual_rms_norm.h); kPreparedX: x as
/// its producer wrote it, prepared for the bf16 GEMM; kPreparedY: y written prepared for the
/// bf16 GEMMs that alone read it.
template <bool kPreparedX = false, bool kPreparedY = false>
struct MatmulBf16ResidualRmsNormCall {
  static constexpr const char* kName = kPreparedX && kPreparedY ? "matmul_bf16_residual_rms_norm_prepared_x_y"
                                       : kPreparedX             ? "matmul_bf16_residual_rms_norm_prepared_x"
                                       : kPreparedY             ? "matmul_bf16_residual_rms_norm_prepared_y"
                                                                : "matmul_bf16_residual_rms_norm";
  const float *x, *w, *res;
  float *mm, *sum, *y;
  int64_t M, N, K;
  double eps;
  explicit MatmulBf16ResidualRmsNormCall(ArgReader& a) {
    M = a.Int("M"), N = a.Int("N"), K = a.Int("K");
    eps = a.Float("eps");
    x = a.Buffer<const float>(M * K, "x");
    w = a.Buffer<const float>(N * K, "w");
    res = a.Buffer<const float>(M * N, "residual");
    mm = a.Buffer<float>(M * N, "product");
    sum = a.Buffer<float>(M * N, "sum");
    y = a.Buffer<float>(M * N, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::MatmulBf16ResidualRmsNormPrepared(x, kPreparedX, w, res, mm, sum, y, kPreparedY, M, N, K, float(eps));
    return absl::OkStatus();
  }
};

/// dx[M, K] = dy[M, N] w[N, K]: a matmul by a transposed weight without the transposed copy
/// (the compiler folds the transpose); kBf16Inputs and kRoundOutput as MatmulCall's; kPreparedDy
/// (bf16): dy as its producer wrote it, prepared for the bf16 GEMM.
template <typename T, bool kBf16Inputs = false, bool kRoundOutput = false, bool kPreparedDy = false>
struct MatmulGradInputCall {
  static_assert(kBf16Inputs || !kPreparedDy, "a prepared dy is bf16 autocast's");
  static constexpr const char* kName = kRoundOutput && kPreparedDy ? "matmul_grad_input_bf16_round_prepared_dy"
                                       : kPreparedDy               ? "matmul_grad_input_bf16_prepared_dy"
                                       : kRoundOutput              ? "matmul_grad_input_bf16_round"
                                       : kBf16Inputs               ? "matmul_grad_input_bf16"
                                                                   : "matmul_grad_input";
  const T *dy, *w;
  T* dx;
  int64_t M, N, K;
  explicit MatmulGradInputCall(ArgReader& r) {
    M = r.Int("M"), N = r.Int("N"), K = r.Int("K");
    dy = r.Buffer<const T>(M * N, "dy");
    w = r.Buffer<const T>(N * K, "w");
    dx = r.Buffer<T>(M * K, "dx");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kBf16Inputs) {
      k::MatmulGradInputBf16(dy, kPreparedDy, w, dx, M, N, K, kRoundOutput);
    } else {
      k::MatmulGradInput(dy, w, dx, M, N, K);
    }
    return absl::OkStatus();
  }
};

/// (M, N, K; dy, w, u, dh, g): the MLP's relu² backward under bf16 autocast as the epilogue of
/// the rounded grad-input product dh = dy w (matmul_relu_square.h); kPreparedG: g written
/// prepared for the bf16 GEMMs that alone read it.
template <bool kPreparedG>
struct MatmulGradInputBf16ReluSquareGradCall {
  static constexpr const char* kName = kPreparedG ? "matmul_grad_input_bf16_relu_square_grad_prepared_g"
                                                  : "matmul_grad_input_bf16_relu_square_grad";
  const float *dy, *w, *u;
  float *dh, *g;
  int64_t M, N, K;
  explicit MatmulGradInputBf16ReluSquareGradCall(ArgReader& r) {
    M = r.Int("M"), N = r.Int("N"), K = r.Int("K");
    dy = r.Buffer<const float>(M * N, "dy");
    w = r.Buffer<const float>(N * K, "w");
    u = r.Buffer<const float>(M * K, "u");
    dh = r.Buffer<float>(M * K, "dh");
    g = r.Buffer<float>(M * K, "g");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::MatmulGradInputBf16ReluSquareGrad(dy, w, u, dh, g, kPreparedG, M, N, K);
    return absl::OkStatus();
  }
};

template <typename T, bool kBf16Inputs = false>
struct MatmulWeightGradCall {  // dw[N, K] = dy[M, N]^T x[M, K]
  static constexpr const char* kName = kBf16Inputs ? "matmul_weight_grad_bf16" : "matmul_weight_grad";
  const T *dy, *x;
  T* dw;
  int64_t M, N, K;
  explicit MatmulWeightGradCall(ArgReader& r) {
    M = r.Int("M"), N = r.Int("N"), K = r.Int("K");
    dy = r.Buffer<const T>(M * N, "dy");
    x = r.Buffer<const T>(M * K, "x");
    dw = r.Buffer<T>(N * K, "dw");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kBf16Inputs) {
      k::MatmulGradWeightBf16Inputs(dy, x, dw, M, N, K, /*accumulate=*/false);
    } else {
      k::MatmulGradWeight(dy, x, dw, M, N, K, /*accumulate=*/false);
    }
    return absl::OkStatus();
  }
};

/// matmul_weight_grad_bf16 with its operands as their producers wrote them, the same bits (f32
/// only): kDy kPrepared, dy prepared for the bf16 GEMMs (matmul_bf16.h), or kSlabs, in the
/// weight gradient's slabs (Bf16DySlabs, as the lm_head's fused loss writes it, read in
/// place); kPreparedX, x prepared (the GEMM's B read in place). A prepared operand's f32
/// buffer holds its prepared elements in all or half of its bytes.
enum class PreparedDy { kF32, kPrepared, kSlabs };
template <PreparedDy kDy, bool kPreparedX>
struct MatmulWeightGradBf16PreparedCall {
  static constexpr const char* kName = kDy == PreparedDy::kSlabs ? "matmul_weight_grad_bf16_prepared_dy_slabs"
                                       : kDy == PreparedDy::kPrepared && kPreparedX
                                           ? "matmul_weight_grad_bf16_prepared_dy_x"
                                       : kDy == PreparedDy::kPrepared ? "matmul_weight_grad_bf16_prepared_dy"
                                                                      : "matmul_weight_grad_bf16_prepared_x";
  static_assert(kDy != PreparedDy::kSlabs || !kPreparedX, "dy in slabs is read with an f32 x");
  static_assert(kDy != PreparedDy::kF32 || kPreparedX, "nothing prepared: matmul_weight_grad_bf16");
  const float *dy, *x;
  float* dw;
  int64_t M, N, K;
  explicit MatmulWeightGradBf16PreparedCall(ArgReader& r) {
    M = r.Int("M"), N = r.Int("N"), K = r.Int("K");
    dy = r.Buffer<const float>(M * N, "dy");
    x = r.Buffer<const float>(M * K, "x");
    dw = r.Buffer<float>(N * K, "dw");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kDy == PreparedDy::kSlabs) {
      k::MatmulGradWeightBf16PreparedDySlabs(dy, x, dw, M, N, K, /*accumulate=*/false);
    } else if constexpr (kDy == PreparedDy::kPrepared && kPreparedX) {
      k::MatmulGradWeightBf16PreparedDyX(dy, x, dw, M, N, K, /*accumulate=*/false);
    } else if constexpr (kDy == PreparedDy::kPrepared) {
      k::MatmulGradWeightBf16PreparedDy(dy, x, dw, M, N, K, /*accumulate=*/false);
    } else {
      k::MatmulGradWeightBf16PreparedX(dy, x, dw, M, N, K, /*accumulate=*/false);
    }
    return absl::OkStatus();
  }
};




/// Both with the result rounded to bf16 values as each row is written (kRound, f32 only: the
/// compiler's fusion of the autocast rounding after the norm): rms_norm_round_bf16.h.
template <typename T, bool kRound = false>
struct RmsNormCall {
  static constexpr const char* kName = kRound ? "rms_norm_round_bf16" : "rms_norm";
  const T* x;
  T* y;
  int64_t rows, dim;
  double eps;
  explicit RmsNormCall(ArgReader& r) {
    rows = r.Int("rows"), dim = r.Int("dim"), eps = r.Float("eps");
    x = r.Buffer<const T>(rows * dim, "x");
    y = r.Buffer<T>(rows * dim, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kRound) {
      k::RmsNormRoundBf16(x, y, rows, dim, float(eps));
    } else {
      k::RmsNorm(x, y, rows, dim, T(eps));
    }
    return absl::OkStatus();
  }
};

template <typename T, bool kRound = false>
struct RmsNormGradCall {
  static constexpr const char* kName = kRound ? "rms_norm_grad_round_bf16" : "rms_norm_grad";
  const T *x, *dy;
  T* dx;
  int64_t rows, dim;
  double eps;
  explicit RmsNormGradCall(ArgReader& r) {
    rows = r.Int("rows"), dim = r.Int("dim"), eps = r.Float("eps");
    x = r.Buffer<const T>(rows * dim, "x");
    dy = r.Buffer<const T>(rows * dim, "dy");
    dx = r.Buffer<T>(rows * dim, "dx");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kRound) {
      k::RmsNormGradRoundBf16(x, dy, dx, rows, dim, float(eps));
    } else {
      k::RmsNormGrad(x, dy, dx, rows, dim, T(eps));
    }
    return absl::OkStatus();
  }
};

/// The compiler's residual-stream fusions (residual_rms_norm.h): (rows, dim; eps; a, b, sum, y)
/// forward, (rows, dim; eps; x, dy, r, out) backward; kRoundBf16 (backward, f32): out rounded.
template <typename T, bool kGrad, bool kRoundBf16 = false>
struct ResidualRmsNormCall {
  static_assert(!kRoundBf16 || (kGrad && std::is_same_v<T, float>), "the rounded form is the f32 backward");
  static constexpr const char* kName =
      kRoundBf16 ? "rms_norm_grad_add_round_bf16" : kGrad ? "rms_norm_grad_add" : "add_rms_norm";
  const T *in0, *in1, *in2;  // a, b, - (forward) or x, dy, r (backward)
  T *out0, *out1 = nullptr;  // sum, y (forward) or out (backward)
  int64_t rows, dim;
  double eps;
  explicit ResidualRmsNormCall(ArgReader& r) {
    rows = r.Int("rows"), dim = r.Int("dim"), eps = r.Float("eps");
    const int64_t n = rows * dim;
    in0 = r.Buffer<const T>(n, kGrad ? "x" : "a");
    in1 = r.Buffer<const T>(n, kGrad ? "dy" : "b");
    in2 = kGrad ? r.Buffer<const T>(n, "r") : nullptr;
    out0 = r.Buffer<T>(n, kGrad ? "out" : "sum");
    if (!kGrad) out1 = r.Buffer<T>(n, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if constexpr (kGrad) {
      if (dim > k::kMaxResidualRmsNormDim) {
        return absl::InvalidArgumentError(
            absl::StrCat(kName, ": dim ", dim, " is above ", k::kMaxResidualRmsNormDim));
      }
      if constexpr (kRoundBf16) {
        k::RmsNormGradAddRoundBf16(in0, in1, in2, out0, rows, dim, float(eps));
      } else {
        k::RmsNormGradAdd(in0, in1, in2, out0, rows, dim, T(eps));
      }
    } else {
      k::AddRmsNorm(in0, in1, out0, out1, rows, dim, T(eps));
    }
    return absl::OkStatus();
  }
};

/// The compiler's tabled rotary: (B, T, H, D, P; x, positions, cos, sin, y) with cos and sin
/// nanochat's tables [P, D/2] (f32 holding bf16 values, constants of the artifact), so no
/// token evaluates cos and sin; bit-identical to computing them (k::Rotary). Positions outside [0, P) are an
/// error (checked every run: B*T ints, far cheaper than the rotation).
template <typename T, bool kGrad, k::RotaryRounding kRounding = k::RotaryRounding::kNone>
struct RotaryTablesCall {
  static constexpr bool kBf16 = kRounding == k::RotaryRounding::kBf16;
  static constexpr const char* kName = kGrad ? (kBf16 ? "rotary_grad_tables_bf16" : "rotary_grad_tables")
                                             : (kBf16 ? "rotary_tables_bf16" : "rotary_tables");
  const T* x;
  const int32_t* positions;
  const float *cos, *sin;
  T* y;
  k::RotaryShape s;
  int64_t P;
  explicit RotaryTablesCall(ArgReader& r) {
    s.B = r.Int("B"), s.T = r.Int("T"), s.H = r.Int("H"), s.D = r.Int("D"), P = r.Int("P");
    x = r.Buffer<const T>(s.B * s.T * s.H * s.D, "x");
    positions = r.Buffer<const int32_t>(s.B * s.T, "positions");
    cos = r.Buffer<const float>(P * (s.D / 2), "cos");
    sin = r.Buffer<const float>(P * (s.D / 2), "sin");
    y = r.Buffer<T>(s.B * s.T * s.H * s.D, "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if (absl::Status st = CheckIds(positions, s.B * s.T, 0, P, "rotary position"); !st.ok()) return st;
    k::RotaryFromTables(x, positions, cos, sin, y, s, kGrad, kRounding);
    return absl::OkStatus();
  }
};

/// The compiler's QK-norm fusion (rotary_rms_norm.h): (B, T, H, D, P; eps; x, positions, cos,
/// sin, rot, y) forward, (B, T, H, D, P; eps; rot, dy, positions, cos, sin, dx) backward.
/// kRoundBf16 (f32): under bf16 autocast, rotary_rms_norm_round_bf16 and
/// rms_norm_rotary_grad_of_rounded_dy_bf16.
template <typename T, bool kGrad, bool kRoundBf16 = false>
struct RotaryRmsNormCall {
  static constexpr const char* kName =
      kGrad ? (kRoundBf16 ? "rms_norm_rotary_grad_of_rounded_dy_bf16" : "rms_norm_rotary_grad")
            : (kRoundBf16 ? "rotary_rms_norm_round_bf16" : "rotary_rms_norm");
  const T *in, *dy = nullptr;  // in: x (forward) or rot (backward)
  const int32_t* positions;
  const float *cos, *sin;
  T *rot = nullptr, *out;  // out: y (forward) or dx (backward)
  k::RotaryShape s;
  int64_t P;
  double eps;
  explicit RotaryRmsNormCall(ArgReader& r) {
    s.B = r.Int("B"), s.T = r.Int("T"), s.H = r.Int("H"), s.D = r.Int("D"), P = r.Int("P");
    eps = r.Float("eps");
    const int64_t n = s.B * s.T * s.H * s.D;
    in = r.Buffer<const T>(n, kGrad ? "rot" : "x");
    if (kGrad) dy = r.Buffer<const T>(n, "dy");
    positions = r.Buffer<const int32_t>(s.B * s.T, "positions");
    cos = r.Buffer<const float>(P * (s.D / 2), "cos");
    sin = r.Buffer<const float>(P * (s.D / 2), "sin");
    if (!kGrad) rot = r.Buffer<T>(n, "rot");
    out = r.Buffer<T>(n, kGrad ? "dx" : "y");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    if (absl::Status st = CheckIds(positions, s.B * s.T, 0, P, "rotary position"); !st.ok()) return st;
    if constexpr (kGrad && kRoundBf16) {
      k::RmsNormRotaryGradOfRoundedDyBf16(in, dy, positions, cos, sin, out, s, float(eps));
    } else if constexpr (kGrad) {
      k::RmsNormRotaryGrad(in, dy, positions, cos, sin, out, s, T(eps));
    } else if constexpr (kRoundBf16) {
      k::RotaryRmsNormRoundBf16(in, positions, cos, sin, rot, out, s, float(eps));
    } else {
      k::RotaryRmsNorm(in, positions, cos, sin, rot, out, s, T(eps));
    }
    return absl::OkStatus();
  }
};

/// Attention's buffers: q, k, v, [segments when has_segments], then the op's own.
struct AttentionDims {
  k::AttentionShape s;
  bool segmented;
  explicit AttentionDims(ArgReader& r) {
    s.B = r.Int("B"), s.T = r.Int("T"), s.H = r.Int("H"), s.Hkv = r.Int("Hkv"), s.D = r.Int("D");
    segmented = r.Int("has_segments") != 0;
  }
  int64_t q() const { return s.B * s.T * s.H * s.D; }
  int64_t kv() const { return s.B * s.T * s.Hkv * s.D; }
  int64_t lse() const { return s.B * s.H * s.T; }
};

// kBf16Inputs: q, k, v (and dout) are bf16 values (gpt.attention under bf16 autocast), so
// attention.h's *Bf16Inputs kernels run, the ones the interpreter runs for the same op.
template <typename T, bool kBf16Inputs = false>
struct AttentionCall {
  static constexpr const char* kName = kBf16Inputs ? "attention_bf16" : "attention";
  AttentionDims d;
  const T *q, *kk, *v;
  const int32_t* segments = nullptr;
  T *out, *lse;
  explicit AttentionCall(ArgReader& r) : d(r) {
    q = r.Buffer<const T>(d.q(), "q");
    kk = r.Buffer<const T>(d.kv(), "k");
    v = r.Buffer<const T>(d.kv(), "v");
    if (d.segmented) segments = r.Buffer<const int32_t>(d.s.B * d.s.T, "segment_ids");
    out = r.Buffer<T>(d.q(), "out");
    lse = r.Buffer<T>(d.lse(), "lse");
  }
  int64_t Workspace(int) const {
    if constexpr (kBf16Inputs) return k::AttentionBf16InputsWorkspaceBytes(d.s, d.segmented);
    return k::AttentionWorkspaceBytes<T>(d.s, d.segmented);
  }
  absl::Status Run(k::Workspace ws) const {
    if constexpr (kBf16Inputs) {
      k::AttentionBf16Inputs(q, kk, v, segments, d.s, out, lse, ws);
    } else {
      k::Attention(q, kk, v, segments, d.s, out, lse, ws);
    }
    return absl::OkStatus();
  }
};

/// kPreparedDv (bf16 only): dv written prepared for the bf16 GEMMs (attention_grad_bf16_prepared_dv).
template <typename T, bool kBf16Inputs = false, bool kPreparedDv = false>
struct AttentionGradCall {
  static_assert(!kPreparedDv || kBf16Inputs, "dv is prepared for the bf16 GEMMs only");
  static constexpr const char* kName =
      kPreparedDv ? "attention_grad_bf16_prepared_dv" : kBf16Inputs ? "attention_grad_bf16" : "attention_grad";
  AttentionDims d;
  const T *q, *kk, *v, *out, *lse, *dout;
  const int32_t* segments = nullptr;
  T *dq, *dk, *dv;
  explicit AttentionGradCall(ArgReader& r) : d(r) {
    q = r.Buffer<const T>(d.q(), "q");
    kk = r.Buffer<const T>(d.kv(), "k");
    v = r.Buffer<const T>(d.kv(), "v");
    if (d.segmented) segments = r.Buffer<const int32_t>(d.s.B * d.s.T, "segment_ids");
    out = r.Buffer<const T>(d.q(), "out");
    lse = r.Buffer<const T>(d.lse(), "lse");
    dout = r.Buffer<const T>(d.q(), "dout");
    dq = r.Buffer<T>(d.q(), "dq");
    dk = r.Buffer<T>(d.kv(), "dk");
    dv = r.Buffer<T>(d.kv(), "dv");
  }
  int64_t Workspace(int) const {
    if constexpr (kBf16Inputs) return k::AttentionGradBf16InputsWorkspaceBytes(d.s, d.segmented);
    return k::AttentionGradWorkspaceBytes<T>(d.s, d.segmented);
  }
  absl::Status Run(k::Workspace ws) const {
    if constexpr (kPreparedDv) {
      k::AttentionGradBf16InputsPreparedDv(q, kk, v, segments, d.s, out, lse, dout, dq, dk, k::ActiveBf16Gemm(), dv, ws);
    } else if constexpr (kBf16Inputs) {
      k::AttentionGradBf16Inputs(q, kk, v, segments, d.s, out, lse, dout, dq, dk, dv, ws);
    } else {
      k::AttentionGrad(q, kk, v, segments, d.s, out, lse, dout, dq, dk, dv, ws);
    }
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

/// The rounding of a cotangent and the rms_norm_grad reading it, in one pass (the compiler's
/// prologue for the bf16 QK-norm's backward), dx rounded too when round_dx:
/// (rows, dim, round_dx; eps; x, dy, dx).
struct RmsNormGradOfRoundedDyCall {
  static constexpr const char* kName = "rms_norm_grad_of_rounded_dy";
  const float *x, *dy;
  float* dx;
  int64_t rows, dim;
  bool round_dx;
  double eps;
  explicit RmsNormGradOfRoundedDyCall(ArgReader& r) {
    rows = r.Int("rows"), dim = r.Int("dim"), round_dx = r.Int("round_dx") != 0, eps = r.Float("eps");
    x = r.Buffer<const float>(rows * dim, "x");
    dy = r.Buffer<const float>(rows * dim, "dy");
    dx = r.Buffer<float>(rows * dim, "dx");
  }
  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    k::RmsNormGradOfRoundedDy(x, dy, dx, rows, dim, float(eps), round_dx);
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

template <typename Call>
absl::StatusOr<int64_t> Prepare(absl::Span<const HostArg> args, int threads) {
  ArgReader reader(Call::kName, args, /*check=*/true);
  Call call(reader);
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  return call.Workspace(threads);
}

template <typename Call>
absl::Status Run(absl::Span<const HostArg> args, k::Workspace workspace) {
  ArgReader reader(Call::kName, args, /*check=*/false);
  return Call(reader).Run(workspace);
}

template <typename Call>
constexpr HostBuiltin Entry(std::string_view name) {
  return HostBuiltin{name, &Prepare<Call>, &Run<Call>};
}

const HostBuiltin kBuiltins[] = {
    Entry<EmbeddingCall<float>>("cpu.embedding.f32"),
    Entry<EmbeddingCall<double>>("cpu.embedding.f64"),
    Entry<EmbeddingGradCall<float>>("cpu.embedding_grad.f32"),
    Entry<EmbeddingGradCall<double>>("cpu.embedding_grad.f64"),
    Entry<MatmulCall<float>>("cpu.matmul.f32"),
    Entry<MatmulCall<double>>("cpu.matmul.f64"),
    Entry<MatmulWeightGradCall<float>>("cpu.matmul_weight_grad.f32"),
    Entry<MatmulWeightGradCall<double>>("cpu.matmul_weight_grad.f64"),
    Entry<MatmulCall<float, true>>("cpu.matmul_bf16.f32"),
    Entry<MatmulCall<float, true, true>>("cpu.matmul_bf16_round.f32"),
    Entry<MatmulReluSquareCall<float>>("cpu.matmul_relu_square.f32"),
    Entry<MatmulReluSquareCall<double>>("cpu.matmul_relu_square.f64"),
    Entry<MatmulReluSquareCall<float, true>>("cpu.matmul_bf16_round_relu_square.f32"),
    Entry<MatmulReluSquareCall<float, true, false, true>>("cpu.matmul_bf16_round_relu_square_prepared_r.f32"),
    Entry<MatmulReluSquareCall<float, true, true, false>>("cpu.matmul_bf16_round_relu_square_prepared_x.f32"),
    Entry<MatmulReluSquareCall<float, true, true, true>>("cpu.matmul_bf16_round_relu_square_prepared_x_r.f32"),
    Entry<MatmulBf16ResidualRmsNormCall<>>("cpu.matmul_bf16_residual_rms_norm.f32"),
    Entry<MatmulBf16ResidualRmsNormCall<true, false>>("cpu.matmul_bf16_residual_rms_norm_prepared_x.f32"),
    Entry<MatmulBf16ResidualRmsNormCall<false, true>>("cpu.matmul_bf16_residual_rms_norm_prepared_y.f32"),
    Entry<MatmulBf16ResidualRmsNormCall<true, true>>("cpu.matmul_bf16_residual_rms_norm_prepared_x_y.f32"),
    Entry<MatmulCall<float, true, true, true>>("cpu.matmul_bf16_round_prepared_x.f32"),
    Entry<MatmulGradInputCall<float>>("cpu.matmul_grad_input.f32"),
    Entry<MatmulGradInputCall<double>>("cpu.matmul_grad_input.f64"),
    Entry<MatmulGradInputCall<float, true>>("cpu.matmul_grad_input_bf16.f32"),
    Entry<MatmulGradInputCall<float, true, true>>("cpu.matmul_grad_input_bf16_round.f32"),
    Entry<MatmulWeightGradCall<float, true>>("cpu.matmul_weight_grad_bf16.f32"),
    Entry<MatmulWeightGradBf16PreparedCall<PreparedDy::kPrepared, false>>("cpu.matmul_weight_grad_bf16_prepared_dy.f32"),
    Entry<MatmulWeightGradBf16PreparedCall<PreparedDy::kF32, true>>("cpu.matmul_weight_grad_bf16_prepared_x.f32"),
    Entry<MatmulWeightGradBf16PreparedCall<PreparedDy::kPrepared, true>>("cpu.matmul_weight_grad_bf16_prepared_dy_x.f32"),
    Entry<MatmulWeightGradBf16PreparedCall<PreparedDy::kSlabs, false>>("cpu.matmul_weight_grad_bf16_prepared_dy_slabs.f32"),
    Entry<MatmulGradInputCall<float, true, false, true>>("cpu.matmul_grad_input_bf16_prepared_dy.f32"),
    Entry<MatmulGradInputCall<float, true, true, true>>("cpu.matmul_grad_input_bf16_round_prepared_dy.f32"),
    Entry<MatmulGradInputBf16ReluSquareGradCall<false>>("cpu.matmul_grad_input_bf16_relu_square_grad.f32"),
    Entry<MatmulGradInputBf16ReluSquareGradCall<true>>("cpu.matmul_grad_input_bf16_relu_square_grad_prepared_g.f32"),
    Entry<RmsNormCall<float>>("cpu.rms_norm.f32"),
    Entry<RmsNormCall<double>>("cpu.rms_norm.f64"),
    Entry<RmsNormGradCall<float>>("cpu.rms_norm_grad.f32"),
    Entry<RmsNormGradCall<double>>("cpu.rms_norm_grad.f64"),
    Entry<RmsNormCall<float, true>>("cpu.rms_norm_round_bf16.f32"),
    Entry<RmsNormGradCall<float, true>>("cpu.rms_norm_grad_round_bf16.f32"),
    Entry<ResidualRmsNormCall<float, false>>("cpu.add_rms_norm.f32"),
    Entry<ResidualRmsNormCall<double, false>>("cpu.add_rms_norm.f64"),
    Entry<ResidualRmsNormCall<float, true>>("cpu.rms_norm_grad_add.f32"),
    Entry<ResidualRmsNormCall<double, true>>("cpu.rms_norm_grad_add.f64"),
    Entry<ResidualRmsNormCall<float, true, true>>("cpu.rms_norm_grad_add_round_bf16.f32"),
    Entry<RotaryTablesCall<float, false>>("cpu.rotary_tables.f32"),
    Entry<RotaryTablesCall<double, false>>("cpu.rotary_tables.f64"),
    Entry<RotaryTablesCall<float, true>>("cpu.rotary_grad_tables.f32"),
    Entry<RotaryTablesCall<double, true>>("cpu.rotary_grad_tables.f64"),
    Entry<RotaryTablesCall<float, false, k::RotaryRounding::kBf16>>("cpu.rotary_tables_bf16.f32"),
    Entry<RotaryRmsNormCall<float, false>>("cpu.rotary_rms_norm.f32"),
    Entry<RotaryRmsNormCall<double, false>>("cpu.rotary_rms_norm.f64"),
    Entry<RotaryRmsNormCall<float, false, true>>("cpu.rotary_rms_norm_round_bf16.f32"),
    Entry<RotaryRmsNormCall<float, true, true>>("cpu.rms_norm_rotary_grad_of_rounded_dy_bf16.f32"),
    Entry<RotaryRmsNormCall<float, true>>("cpu.rms_norm_rotary_grad.f32"),
    Entry<RotaryRmsNormCall<double, true>>("cpu.rms_norm_rotary_grad.f64"),
    Entry<RotaryTablesCall<float, true, k::RotaryRounding::kBf16>>("cpu.rotary_grad_tables_bf16.f32"),
    Entry<AttentionCall<float>>("cpu.attention.f32"),
    Entry<AttentionCall<double>>("cpu.attention.f64"),
    Entry<AttentionGradCall<float>>("cpu.attention_grad.f32"),
    Entry<AttentionGradCall<double>>("cpu.attention_grad.f64"),
    Entry<AttentionCall<float, true>>("cpu.attention_bf16.f32"),
    Entry<AttentionGradCall<float, true>>("cpu.attention_grad_bf16.f32"),
    Entry<AttentionGradCall<float, true, true>>("cpu.attention_grad_bf16_prepared_dv.f32"),
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
    Entry<RmsNormGradOfRoundedDyCall>("cpu.rms_norm_grad_of_rounded_dy.f32"),
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
