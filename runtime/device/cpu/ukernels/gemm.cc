// The GEMM family's driver side. The kernels choose their ISA path themselves, once per
// process (runtime/kernels/cpu/matmul_bf16.h: AMX tiles, else AVX512_BF16 dot products, else
// f32 sgemm on the rounded values; matmul.h: BLAS), so this file only maps the parameters to
// the kernel that computes them, the one the interpreter runs for the same ops: the bits
// do not depend on which name the launch had before the family existed.
#include "runtime/device/cpu/ukernels/gemm.h"

#include <array>
#include <type_traits>

#include "runtime/device/cpu/builtin_call.h"
#include "runtime/kernels/cpu/matmul.h"
#include "runtime/kernels/cpu/matmul_bf16.h"
#include "runtime/kernels/cpu/matmul_relu_square.h"
#include "runtime/kernels/cpu/matmul_residual_rms_norm.h"
#include "ukernel/gemm.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

namespace k = ::gpt_sft::runtime::kernels;
namespace uk = ::gpt_sft::ukernel;
using uk::GemmEpilogue;
using uk::GemmForm;
using uk::GemmSlot;

template <typename T>
struct GemmCall {
  static constexpr const char* kName = "gemm";
  uk::GemmParams p;
  // Indexed by GemmSlot; null where the epilogue has no such slot.
  std::array<T*, uk::kGemmSlotCount> slot{};

  explicit GemmCall(ArgReader& r) {
    p.form = static_cast<GemmForm>(r.Int("form"));
    p.epilogue = static_cast<GemmEpilogue>(r.Int("epilogue"));
    p.flags = r.Int("flags");
    p.M = r.Int("M"), p.N = r.Int("N"), p.K = r.Int("K");
    p.eps = r.Float("eps");
    if (const char* why = uk::GemmUnsupported(p, std::is_same_v<T, double>)) {
      r.Fail(why);
      return;
    }
    for (int s = 0; s < uk::kGemmSlotCount; ++s) {
      const auto gs = static_cast<GemmSlot>(s);
      if (uk::GemmHasSlot(p.epilogue, gs)) slot[s] = r.Buffer<T>(uk::GemmSlotElements(p, gs), uk::kGemmSlotNames[s]);
    }
  }
  T* at(GemmSlot s) const { return slot[static_cast<int>(s)]; }

  int64_t Workspace(int) const { return 0; }
  absl::Status Run(k::Workspace) const {
    const T *a = at(GemmSlot::kA), *b = at(GemmSlot::kB), *aux = at(GemmSlot::kAux);
    T *c = at(GemmSlot::kC), *out0 = at(GemmSlot::kOut0), *out1 = at(GemmSlot::kOut1);
    const int64_t M = p.M, N = p.N, K = p.K;
    if (!p.Has(uk::kGemmBf16Inputs)) {
      switch (p.form) {
        case GemmForm::kXWt:
          if (p.epilogue == GemmEpilogue::kReluSquare) {
            k::MatmulReluSquare(a, b, c, out0, M, N, K);
          } else {
            k::Matmul(a, b, c, M, N, K);
          }
          break;
        case GemmForm::kDyW:
          k::MatmulGradInput(a, b, c, M, N, K);
          break;
        case GemmForm::kDyTX:
          k::MatmulGradWeight(a, b, c, M, N, K, /*accumulate=*/false);
          break;
      }
      return absl::OkStatus();
    }
    if constexpr (std::is_same_v<T, float>) RunBf16(a, b, aux, c, out0, out1);
    return absl::OkStatus();
  }

  // Under bf16 autocast (f32 buffers holding bf16 values, or prepared operands).
  void RunBf16(const float* a, const float* b, const float* aux, float* c, float* out0, float* out1) const {
    const int64_t M = p.M, N = p.N, K = p.K;
    const bool round = p.Has(uk::kGemmRoundOutput), prepared_a = p.Has(uk::kGemmPreparedA),
               prepared_b = p.Has(uk::kGemmPreparedB), prepared_out = p.Has(uk::kGemmPreparedOut);
    switch (p.form) {
      case GemmForm::kXWt:
        if (p.epilogue == GemmEpilogue::kReluSquare) {
          k::MatmulBf16RoundReluSquarePrepared(a, prepared_a, b, c, out0, prepared_out, M, N, K);
        } else if (p.epilogue == GemmEpilogue::kResidualRmsNorm) {
          k::MatmulBf16ResidualRmsNormPrepared(a, prepared_a, b, aux, c, out0, out1, prepared_out, M, N, K,
                                               static_cast<float>(p.eps));
        } else if (prepared_a) {
          k::MatmulBf16PreparedXRoundedOutput(a, b, c, M, N, K);
        } else if (round) {
          k::MatmulBf16InputsRoundedOutput(a, b, c, M, N, K);
        } else {
          k::MatmulBf16Inputs(a, b, c, M, N, K);
        }
        return;
      case GemmForm::kDyW:
        if (p.epilogue == GemmEpilogue::kReluSquareGrad) {
          k::MatmulGradInputBf16ReluSquareGrad(a, b, aux, c, out0, prepared_out, M, N, K);
        } else {
          k::MatmulGradInputBf16(a, prepared_a, b, c, M, N, K, round);
        }
        return;
      case GemmForm::kDyTX:
        if (p.Has(uk::kGemmSlabsA)) {
          k::MatmulGradWeightBf16PreparedDySlabs(a, b, c, M, N, K, /*accumulate=*/false);
        } else if (prepared_a && prepared_b) {
          k::MatmulGradWeightBf16PreparedDyX(a, b, c, M, N, K, /*accumulate=*/false);
        } else if (prepared_a) {
          k::MatmulGradWeightBf16PreparedDy(a, b, c, M, N, K, /*accumulate=*/false);
        } else if (prepared_b) {
          k::MatmulGradWeightBf16PreparedX(a, b, c, M, N, K, /*accumulate=*/false);
        } else {
          k::MatmulGradWeightBf16Inputs(a, b, c, M, N, K, /*accumulate=*/false);
        }
        return;
    }
  }
};

}  // namespace

HostBuiltin GemmBuiltin(std::string_view name, bool f64) {
  return f64 ? Entry<GemmCall<double>>(name) : Entry<GemmCall<float>>(name);
}

}  // namespace gpt_sft::runtime::device::cpu
