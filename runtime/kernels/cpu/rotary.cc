// Implements Rotary and its VJP, parallel over tokens. cos and sin are nanochat's bf16 table
// entries (model/rotary_table.h), computed per token from the pair's inverse
// frequency, so any position works (the table a GPU artifact carries is the same function);
// RotaryFromTables runs the same loop with the entries read from those tables.
#include "runtime/kernels/cpu/rotary.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/cpu_isa.h"
#include "model/rotary_table.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/thread_scratch.h"

namespace gpt_sft::runtime::kernels {
namespace {

float* TakeInverseFrequencies(RotaryShape s, WorkspaceCarver& carver) {
  return carver.Take<float>(s.D / 2, "rotary inverse frequencies");
}

/// cos and sin of (token bt, pair j) computed per token from the pair's inverse frequency
/// (the interpreter's kernels: any position works).
struct ComputedCosSin {
  const int32_t* positions;  // [B*T]
  const float* inv_freq;     // [D/2]
  compiler::RotaryCosSin operator()(int64_t bt, int64_t j) const {
    return compiler::RotaryCosSinAt(positions[bt], inv_freq[j]);
  }
};

/// cos and sin of (token bt, pair j) read from FillRotaryTables' tables: the same entries,
/// no trigonometry (the compiled step's kernels; positions must lie in the tables).
struct TabledCosSin {
  const int32_t* positions;  // [B*T]
  const float *cos, *sin;    // [P, D/2] each
  int64_t half;
  compiler::RotaryCosSin operator()(int64_t bt, int64_t j) const {
    const int64_t at = int64_t(positions[bt]) * half + j;
    return {cos[at], sin[at]};
  }
};

/// nanochat's bf16 rotation of one head row (every product and sum rounded to bf16), with
/// the pairs' cos and sin rows and sign = -1 for the VJP. One vectorizable loop: in and out
/// may be the same bytes (iteration j reads and writes only elements j and half + j, hence
/// ivdep), and no product meets a sum unrounded, so no FMA can change the bits.
[[gnu::always_inline]] inline void RotateRowBf16Loop(const float* x, float* y, int64_t half, const float* cos,
                                                    const float* sin, float sign) {
#pragma GCC ivdep
  for (int64_t j = 0; j < half; ++j) {
    const float x1 = x[j], x2 = x[half + j], c = cos[j], sn = sign * sin[j];
    y[j] = RoundToBf16(RoundToBf16(x1 * c) + RoundToBf16(x2 * sn));
    y[half + j] = RoundToBf16(RoundToBf16(-x1 * sn) + RoundToBf16(x2 * c));
  }
}

[[gnu::target("avx512f")]] void RotateRowBf16Avx512(const float* x, float* y, int64_t half, const float* cos,
                                                    const float* sin, float sign) {
  RotateRowBf16Loop(x, y, half, cos, sin, sign);
}

void RotateRowBf16Portable(const float* x, float* y, int64_t half, const float* cos, const float* sin, float sign) {
  RotateRowBf16Loop(x, y, half, cos, sin, sign);
}

/// The loop on 16 lanes where the CPU has AVX512F, else as the baseline compiles it.
void RotateRowBf16(const float* x, float* y, int64_t half, const float* cos, const float* sin, float sign) {
  static const bool avx512 = CpuIsaAtLeast(CpuIsa::kAvx512);
  if (avx512) return RotateRowBf16Avx512(x, y, half, cos, sin, sign);
  RotateRowBf16Portable(x, y, half, cos, sin, sign);
}

/// nanochat's bf16 rotary on floats: every product and sum rounded to bf16. Per token, the
/// pairs' cos and sin are read once into a row (the sign applied), then each head's row.
template <typename CosSinAt>
void RotateBf16(const float* in, float* out, RotaryShape s, const CosSinAt& cos_sin_at, float sign) {
  const int64_t half = s.D / 2;
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    static ThreadScratch row;
    float* const cos = row.Get<float>(2 * half);
    float* const sin = cos + half;
    for (int64_t bt = begin; bt < end; ++bt) {
      for (int64_t j = 0; j < half; ++j) {
        const compiler::RotaryCosSin table = cos_sin_at(bt, j);
        cos[j] = table.cos;
        sin[j] = sign * table.sin;
      }
      for (int64_t h = 0; h < s.H; ++h) {
        const int64_t o = (bt * s.H + h) * s.D;
        RotateRowBf16(in + o, out + o, half, cos, sin, 1.0f);  // 1 * (sign sin) is sign sin exactly
      }
    }
  });
}

// sign = +1: the forward rotation; sign = -1: its transpose (the VJP). The table's bf16 values
// widened to T; the products and sums in T. One loop for both sources of cos and sin, so the
// tabled kernel computes exactly what the per-token one does.
template <typename T, typename CosSinAt>
void RotateBy(const T* in, T* out, RotaryShape s, const CosSinAt& cos_sin_at, float sign, RotaryRounding rounding) {
  const int64_t half = s.D / 2;
  if constexpr (std::is_same_v<T, float>) {
    if (rounding == RotaryRounding::kBf16) return RotateBf16(in, out, s, cos_sin_at, sign);
  }
  ParallelFor(s.B * s.T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t bt = begin; bt < end; ++bt) {
      for (int64_t j = 0; j < half; ++j) {
        const compiler::RotaryCosSin table = cos_sin_at(bt, j);
        const T c = T(table.cos), sn = T(sign * table.sin);
        for (int64_t h = 0; h < s.H; ++h) {
          const int64_t o = (bt * s.H + h) * s.D;
          const T x1 = in[o + j], x2 = in[o + half + j];
          out[o + j] = x1 * c + x2 * sn;
          out[o + half + j] = -x1 * sn + x2 * c;
        }
      }
    }
  });
}

template <typename T>
void Rotate(const T* in, const int32_t* positions, T* out, RotaryShape s, double base, float sign,
            Workspace workspace, RotaryRounding rounding) {
  const int64_t half = s.D / 2;
  WorkspaceCarver carver(workspace);
  float* inv_freq = TakeInverseFrequencies(s, carver);
  for (int64_t j = 0; j < half; ++j) inv_freq[j] = compiler::RotaryInverseFrequency(j, s.D, base);
  RotateBy(in, out, s, ComputedCosSin{positions, inv_freq}, sign, rounding);
}

}  // namespace

int64_t RotaryWorkspaceBytes(RotaryShape s) {
  WorkspaceCarver count;
  TakeInverseFrequencies(s, count);
  return count.used();
}

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, Workspace workspace,
            RotaryRounding rounding) {
  Rotate(x, positions, y, s, base, +1.0f, workspace, rounding);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, Workspace workspace,
                RotaryRounding rounding) {
  Rotate(dy, positions, dx, s, base, -1.0f, workspace, rounding);
}

template <typename T>
void Rotary(const T* x, const int32_t* positions, T* y, RotaryShape s, double base, RotaryRounding rounding) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  Rotary(x, positions, y, s, base, scratch.get(), rounding);
}

template <typename T>
void RotaryGrad(const T* dy, const int32_t* positions, T* dx, RotaryShape s, double base, RotaryRounding rounding) {
  const ScratchBuffer scratch(RotaryWorkspaceBytes(s));
  RotaryGrad(dy, positions, dx, s, base, scratch.get(), rounding);
}

template <typename T>
void RotaryFromTables(const T* x, const int32_t* positions, const float* cos, const float* sin, T* y, RotaryShape s,
                      bool grad, RotaryRounding rounding) {
  RotateBy(x, y, s, TabledCosSin{positions, cos, sin, s.D / 2}, grad ? -1.0f : +1.0f, rounding);
}

template <typename T>
void RotateRowFromTables(const T* in, T* out, int64_t D, const float* cos, const float* sin, bool grad) {
  const int64_t half = D / 2;
  const float sign = grad ? -1.0f : +1.0f;
  for (int64_t j = 0; j < half; ++j) {
    const T c = T(cos[j]), sn = T(sign * sin[j]);
    const T x1 = in[j], x2 = in[half + j];
    out[j] = x1 * c + x2 * sn;
    out[half + j] = -x1 * sn + x2 * c;
  }
}

void RotateRowFromTablesBf16(const float* in, float* out, int64_t D, const float* cos, const float* sin, bool grad) {
  RotateRowBf16(in, out, D / 2, cos, sin, grad ? -1.0f : +1.0f);
}

template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double, RotaryRounding);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double, RotaryRounding);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double, RotaryRounding);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double, RotaryRounding);
template void Rotary<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace, RotaryRounding);
template void Rotary<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace, RotaryRounding);
template void RotaryGrad<float>(const float*, const int32_t*, float*, RotaryShape, double, Workspace, RotaryRounding);
template void RotaryGrad<double>(const double*, const int32_t*, double*, RotaryShape, double, Workspace,
                                 RotaryRounding);
template void RotateRowFromTables<float>(const float*, float*, int64_t, const float*, const float*, bool);
template void RotateRowFromTables<double>(const double*, double*, int64_t, const float*, const float*, bool);
template void RotaryFromTables<float>(const float*, const int32_t*, const float*, const float*, float*, RotaryShape,
                                      bool, RotaryRounding);
template void RotaryFromTables<double>(const double*, const int32_t*, const float*, const float*, double*,
                                       RotaryShape, bool, RotaryRounding);

}  // namespace gpt_sft::runtime::kernels
