// Implements CrossEntropy and its VJP with a max-shifted log-sum-exp per row, parallel over
// rows (the row arithmetic: cross_entropy_rows.h). The loss is summed per fixed chunk of rows
// and the chunk sums in order, so it does not depend on the thread count.
#include "runtime/kernels/cpu/cross_entropy.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/cpu/cross_entropy_rows.h"
#include "runtime/kernels/cpu/parallel.h"
#include "runtime/kernels/cpu/round_bf16.h"
#include "runtime/kernels/cpu/softcap_bf16.h"
#include "runtime/kernels/cpu/vec_math.h"

namespace gpt_sft::runtime::kernels {

using cross_entropy_rows::Chunks;
using cross_entropy_rows::CountTargets;
using cross_entropy_rows::kRowsPerChunk;

int64_t CrossEntropyWorkspaceBytes(int64_t N) {
  WorkspaceCarver count;
  count.Take<double>(Chunks(N), "cross-entropy partial sums");
  return count.used();
}

namespace {

/// The mean loss over rows, each row first handed to `prepare_row(n)` (every row, counted or
/// not: it may write the logits the loss then reads, while they are in cache).
template <typename T, typename PrepareRow>
CrossEntropyResult CrossEntropyOfRows(const T* logits, const int32_t* targets, int64_t N, int64_t V,
                                      Workspace workspace, const PrepareRow& prepare_row) {
  const int64_t chunks = Chunks(N);
  WorkspaceCarver carver(workspace);
  double* partial = carver.Take<double>(chunks, "cross-entropy partial sums");
  std::fill(partial, partial + chunks, 0.0);
  ParallelFor(N, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    double sum = 0;
    for (int64_t n = begin; n < end; ++n) {
      prepare_row(n);
      if (targets[n] < 0) continue;
      sum += cross_entropy_rows::LossTerm(logits + n * V, targets[n], V);
    }
    partial[begin / kRowsPerChunk] = sum;
  });
  double sum = 0;
  for (int64_t c = 0; c < chunks; ++c) sum += partial[c];
  const int64_t count = CountTargets(targets, N);
  return {count > 0 ? sum / count : 0.0, count};
}

}  // namespace

template <typename T>
CrossEntropyResult CrossEntropy(const T* logits, const int32_t* targets, int64_t N, int64_t V, Workspace workspace) {
  return CrossEntropyOfRows(logits, targets, N, V, workspace, [](int64_t) {});
}

template <typename T>
CrossEntropyResult SoftcapCrossEntropy(const T* x, T cap, T* y, const int32_t* targets, int64_t N, int64_t V,
                                       Workspace workspace) {
  // Softcap's arithmetic exactly (pointwise.cc: ScaledTanh by 1/cap and cap, elementwise).
  return CrossEntropyOfRows(y, targets, N, V, workspace,
                            [&](int64_t n) { ScaledTanh(x + n * V, V, T(1) / cap, cap, y + n * V); });
}

CrossEntropyResult SoftcapBf16CrossEntropy(const float* x, float cap, bool round_input, float* y,
                                           const int32_t* targets, int64_t N, int64_t V, Workspace workspace) {
  const float* table = SoftcapBf16Table(cap);
  return CrossEntropyOfRows(y, targets, N, V, workspace, [&](int64_t n) {
    SoftcapBf16Range(table, x + n * V, V, cap, round_input, y + n * V);
  });
}

template <typename T>
CrossEntropyResult CrossEntropy(const T* logits, const int32_t* targets, int64_t N, int64_t V) {
  const ScratchBuffer scratch(CrossEntropyWorkspaceBytes(N));
  return CrossEntropy(logits, targets, N, V, scratch.get());
}

template <typename T>
void CrossEntropyGrad(const T* logits, const int32_t* targets, int64_t N, int64_t V, double dloss, T* dlogits) {
  const int64_t count = CountTargets(targets, N);
  const double scale = count > 0 ? dloss / count : 0.0;
  ParallelFor(N, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      cross_entropy_rows::RowGrad(logits + n * V, targets[n], V, scale, dlogits + n * V);
  });
}

namespace {

/// CrossEntropySoftcapGrad's pass; kRoundDy: the cotangent rounded to bf16 before the
/// softcap's factor (RoundBf16 between the two ops).
template <typename T, bool kRoundDy>
void SoftcapGradOfCrossEntropy(const T* y, const int32_t* targets, int64_t N, int64_t V, double dloss, T cap, T* dx) {
  const int64_t count = CountTargets(targets, N);
  const double scale = count > 0 ? dloss / count : 0.0;
  ParallelFor(N, kRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const T* row = y + n * V;
      T* out = dx + n * V;
      const int32_t target = targets[n];
      if constexpr (!kRoundDy) {
        cross_entropy_rows::SoftcapRowGrad(row, target, V, scale, cap, out);
      } else {
        cross_entropy_rows::SoftcapBf16RowGrad(row, target, V, scale, cap, out);
      }
    }
  });
}

}  // namespace

template <typename T>
void CrossEntropySoftcapGrad(const T* y, const int32_t* targets, int64_t N, int64_t V, double dloss, T cap, T* dx) {
  SoftcapGradOfCrossEntropy<T, false>(y, targets, N, V, dloss, cap, dx);
}

void CrossEntropyBf16SoftcapGrad(const float* y, const int32_t* targets, int64_t N, int64_t V, double dloss,
                                 float cap, float* dx) {
  SoftcapGradOfCrossEntropy<float, true>(y, targets, N, V, dloss, cap, dx);
}

template CrossEntropyResult CrossEntropy<float>(const float*, const int32_t*, int64_t, int64_t);
template CrossEntropyResult CrossEntropy<double>(const double*, const int32_t*, int64_t, int64_t);
template CrossEntropyResult CrossEntropy<float>(const float*, const int32_t*, int64_t, int64_t, Workspace);
template CrossEntropyResult CrossEntropy<double>(const double*, const int32_t*, int64_t, int64_t, Workspace);
template CrossEntropyResult SoftcapCrossEntropy<float>(const float*, float, float*, const int32_t*, int64_t, int64_t,
                                                       Workspace);
template CrossEntropyResult SoftcapCrossEntropy<double>(const double*, double, double*, const int32_t*, int64_t,
                                                        int64_t, Workspace);
template void CrossEntropyGrad<float>(const float*, const int32_t*, int64_t, int64_t, double, float*);
template void CrossEntropyGrad<double>(const double*, const int32_t*, int64_t, int64_t, double, double*);
template void CrossEntropySoftcapGrad<float>(const float*, const int32_t*, int64_t, int64_t, double, float, float*);
template void CrossEntropySoftcapGrad<double>(const double*, const int32_t*, int64_t, int64_t, double, double,
                                              double*);

}  // namespace gpt_sft::runtime::kernels
