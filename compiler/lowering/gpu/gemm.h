//===- gemm.h - the tiled matrix multiply every GPU matmul uses -----------===//
//
// Declares EmitGemm: C[M, N] (= | +=) alpha op(A) op(B) (+ beta C_in), row-major, op in
// {identity, transpose}, as one gpu.launch of 64 x 64 output tiles. Each workgroup of 256
// work-items steps through K in slices of 16, staging the A and B slices in workgroup memory
// (loaded along each operand's contiguous dim, so neighbouring work-items read neighbouring
// floats), and each work-item accumulates a 4 x 4 block of C in registers. Edges of any size
// are handled by clamped, masked loads and guarded stores, so any M, N, K >= 1 work.
//
// The epilogue is where other work rides along: by default it stores
// alpha acc + beta C_in[row, col] into C; a custom epilogue receives that value with its
// position and writes whatever it wants (gpt.matmul absorbs the elementwise op after it that
// way: a residual add, the softcap, a gradient accumulation). gpt.matmul (x w^T),
// gpt.matmul_weight_grad (dy^T x) and Muon's Newton-Schulz products (X X^T; c A A + b A;
// a X + B X) are all this kernel with other transposes and epilogues.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_

#include <cstdint>
#include <functional>
#include <string>

#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/gpu/kernel_builder.h"
#include "compiler/lowering/planned_function.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace gpt_sft::compiler::gpu_lowering {

struct GemmOperand {
  mlir::Value buffer;       // a flat memref of f32, or of i16 (bf16 storage: kernel_builder.h)
  bool transposed = false;  // A: stored [K, M] (else [M, K]); B: stored [N, K] (else [K, N])
};

/// Writes the result of element (row, col) of C, whose flat index is `at` = row N + col;
/// `value` is alpha acc (+ beta C_in[at]). Called only for elements inside [M, N].
using GemmEpilogue =
    std::function<void(KernelBuilder& k, mlir::Value value, mlir::Value at, mlir::Value row, mlir::Value col)>;

struct GemmSpec {
  std::string name;  // the kernel's name
  int64_t M = 0, N = 0, K = 0;
  GemmOperand a, b;
  /// Flat [M * N]; where the epilogue is custom, may be null (the epilogue stores).
  mlir::Value c;
  double alpha = 1.0;
  /// With beta != 0, value = alpha A B + beta C_in. C_in may be C itself (beta 1: C += A B)
  /// or an operand. Nothing the kernel writes may alias A or B: other workgroups still read
  /// them while one writes.
  double beta = 0.0;
  mlir::Value c_in;
  /// Null: C[at] = value.
  GemmEpilogue epilogue;
  /// Every value of A and B is a bf16 value (gpt.matmul ops under gpt-autocast-bf16): the vendor
  /// gemm may multiply at TF32 precision, which is exact for them.
  bool inputs_bf16 = false;
  /// `batch` > 1: that many independent products in one launch, matrix i of every buffer
  /// (a, b, c_in, c) at i times its matrix's size (contiguous, strided batches); the
  /// epilogue's `at` is then the flat index over the whole batch (i M N + row N + col).
  int64_t batch = 1;
};

/// Emits the gemm at the lowering's place: the tiled kernel (a batch along the grid's z), or
/// (kVendorBuiltin) a gpt.call_builtin "gemm.f32" (M, N, K, a_transposed, b_transposed,
/// inputs_bf16, alpha, beta, a, b, c_in, c; runtime/device/GEMM_BUILTIN.md), "gemm_batched.f32"
/// (batch first) when batch > 1, "gemm.bf16" / "gemm_batched.bf16" when A and B are both bf16
/// buffers (else a bf16 operand is widened into scratch first), writing the product into `c` or op-private scratch, followed
/// by a generated elementwise kernel "<name>_epilogue" when the spec has an epilogue.
void EmitGemm(lowering::OpLowering& lowering, const GemmSpec& spec, GemmBackend backend);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_
