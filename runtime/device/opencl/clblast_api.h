// CLBlast's single-precision gemm, reached by dlopen at run time (libclblast.so.1, Debian's
// libclblast1, or $GPT_SFT_LIBCLBLAST): the opencl driver's `gemm.f32` builtin calls it on the
// step's queue. Like the OpenCL loader itself it is never linked, so binaries start without it
// and only a step compiled with GPT_SFT_OPENCL_GEMM=clblast needs it. The few enums are
// declared here as clblast_c.h defines them; //runtime/device/opencl:clblast_api_test checks
// them against that header where it is installed.
#ifndef GPT_SFT_RUNTIME_DEVICE_OPENCL_CLBLAST_API_H_
#define GPT_SFT_RUNTIME_DEVICE_OPENCL_CLBLAST_API_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "runtime/device/opencl/opencl_api.h"

namespace gpt_sft::runtime::device::opencl {

inline constexpr int kClBlastSuccess = 0;
inline constexpr int kClBlastLayoutRowMajor = 101;
inline constexpr int kClBlastTransposeNo = 111, kClBlastTransposeYes = 112;

struct ClBlastApi {
  /// CLBlastSgemm: C = alpha op(A) op(B) + beta C; offsets and leading dims in elements.
  int (*Sgemm)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k, float alpha, cl_mem a,
               size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld, float beta, cl_mem c,
               size_t c_offset, size_t c_ld, cl_command_queue* queue, cl_event* event);
  /// CLBlastSgemmStridedBatched: `batch_count` such products, matrix i of each at its offset +
  /// i x its stride (elements).
  int (*SgemmStridedBatched)(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k, float alpha,
                             cl_mem a, size_t a_offset, size_t a_ld, size_t a_stride, cl_mem b, size_t b_offset,
                             size_t b_ld, size_t b_stride, float beta, cl_mem c, size_t c_offset, size_t c_ld,
                             size_t c_stride, size_t batch_count, cl_command_queue* queue, cl_event* event);

  /// The table, loaded once per process; FailedPrecondition naming the library and the way out.
  static absl::StatusOr<const ClBlastApi*> Get();
};

}  // namespace gpt_sft::runtime::device::opencl

#endif  // GPT_SFT_RUNTIME_DEVICE_OPENCL_CLBLAST_API_H_
