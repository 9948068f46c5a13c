// The conformance suite's host kernels, built as a shared object: range kernels with the cpu
// driver's ABI, void(void* const* buffers, int64 begin, int64 end) over elements [begin, end).
#include <stdint.h>

// y[i] = 2 * x[i] + y[i]
void axpy2(void* const* buffers, int64_t begin, int64_t end) {
  const float* x = (const float*)buffers[0];
  float* y = (float*)buffers[1];
  for (int64_t i = begin; i < end; ++i) y[i] = 2.0f * x[i] + y[i];
}
