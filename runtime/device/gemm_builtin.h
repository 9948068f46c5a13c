// The GPU drivers' vendor-gemm builtin `gemm.f32` (GEMM_BUILTIN.md beside this file): a GPU
// target whose gemms go to the vendor library calls it for every product of two matrices; the
// cuda driver runs it with cuBLASLt, the opencl driver with CLBlast.
//
// Reading the arguments and mapping the row-major product onto a column-major BLAS are plain
// functions here, shared by the drivers and tested on any machine.
#ifndef GPT_SFT_RUNTIME_DEVICE_GEMM_BUILTIN_H_
#define GPT_SFT_RUNTIME_DEVICE_GEMM_BUILTIN_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {

inline constexpr std::string_view kGemmBuiltin = "gemm.f32";
/// `batch` products in one call: the same scalars after a leading batch count, each buffer
/// holding `batch` matrices back to back (Muon's Newton-Schulz over a group of same-shape
/// matrices).
inline constexpr std::string_view kGemmBatchedBuiltin = "gemm_batched.f32";
/// The same two with A and B stored as bf16 (2 bytes an element; C_in and C stay f32): the
/// product of bf16 values accumulated in fp32 (cuBLASLt: CUDA_R_16BF operands, CUBLAS_COMPUTE_32F).
inline constexpr std::string_view kGemmBf16Builtin = "gemm.bf16";
inline constexpr std::string_view kGemmBatchedBf16Builtin = "gemm_batched.bf16";

/// C[M, N] = alpha op(A) op(B) + beta C_in, every matrix row-major f32; A is stored [M, K]
/// ([K, M] when a_transposed), B [K, N] ([N, K] when b_transposed). C_in may be C itself.
/// inputs_bf16: every value of A and B is a bfloat16 value (the compiler knows it under bf16
/// autocast), so products at TF32 precision are exact and a driver may use them (tensor cores).
struct GemmCall {
  int64_t batch = 1;  // matrices per buffer, back to back (strided batches)
  int64_t M = 0, N = 0, K = 0;
  bool a_transposed = false, b_transposed = false, inputs_bf16 = false;
  bool ab_stored_bf16 = false;  // gemm.bf16: a and b hold bf16 elements
  double alpha = 1, beta = 0;
  BufferRange a, b, c_in, c;
};

/// The builtin's arguments in order: scalars M, N, K, a_transposed, b_transposed, inputs_bf16
/// (i64), alpha, beta (f64); buffers a, b, c_in, c. InvalidArgument naming `label` and the argument at fault
/// (a count, a kind, a dim below 1, a range outside its buffer or smaller than its matrix).
/// `batched`: the gemm_batched.f32 form, a leading batch count (>= 1) first, every buffer
/// `batch` times as large.
/// `ab_bf16`: the gemm.bf16 forms, a and b of 2-byte elements.
absl::StatusOr<GemmCall> ReadGemmCall(absl::Span<const KernelArg> args, std::string_view label, bool batched = false,
                                      bool ab_bf16 = false);

/// What a driver's AddBuiltin does first: Unimplemented naming `driver` unless `name` is one of
/// the gemm builtins, else ReadGemmCall.
absl::StatusOr<GemmCall> ReadGemmBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label, std::string_view driver);

/// The same product as a column-major BLAS (cuBLAS) sees it: column-major, so C^T[N, M] = op(B)^T op(A)^T, cuBLAS's
/// A being our B and its B our A. Each operand as cuBLAS's layout (rows, cols, leading dim of
/// what is stored) and its op (0: N, 1: T).
struct ColumnMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  int32_t op_a = 0, op_b = 0;
  int64_t a_rows = 0, a_cols = 0, a_ld = 0;
  int64_t b_rows = 0, b_cols = 0, b_ld = 0;
  int64_t c_rows = 0, c_cols = 0, c_ld = 0;
};
ColumnMajorGemm ToColumnMajor(const GemmCall& call);

}  // namespace gpt_sft::runtime::device

#endif  // GPT_SFT_RUNTIME_DEVICE_GEMM_BUILTIN_H_
