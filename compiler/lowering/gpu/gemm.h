//===- gemm.h - the tiled matrix multiply every GPU matmul uses -----------===//
//
// Declares EmitGemm: C[M, N] = alpha op(A) op(B) + beta C_in, row-major, as one gpu.launch of
// 64 x 64 output tiles. Each workgroup of 256 work-items steps through K in slices of 16,
// staging the A and B slices in workgroup memory (loaded along each operand's contiguous
// dim, so neighbouring work-items read neighbouring floats), and each work-item accumulates a
// 4 x 4 block of C in registers. Edges of any size are handled by clamped, masked loads.
// gpt.matmul (x w^T), gpt.matmul_weight_grad (dy^T x) and Muon's Newton-Schulz products are
// all this kernel with other transposes and epilogues.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_

#include <cstdint>
#include <string>

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace gpt_sft::compiler::gpu_lowering {

struct GemmOperand {
  mlir::Value buffer;       // a flat memref of f32
  bool transposed = false;  // A: stored [K, M] (else [M, K]); B: stored [N, K] (else [K, N])
};

struct GemmSpec {
  std::string name;  // the kernel's name
  int64_t M = 0, N = 0, K = 0;
  GemmOperand a, b;
  mlir::Value c;     // flat [M * N]
  double alpha = 1.0;
  /// With beta != 0, C = alpha A B + beta C_in. C_in may be C itself or an operand; C must not
  /// alias A or B (other workgroups still read them while C is written).
  double beta = 0.0;
  mlir::Value c_in;
};

/// Emits the gemm at `host`'s insertion point.
void EmitGemm(mlir::OpBuilder& host, mlir::Location loc, const GemmSpec& spec);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_GEMM_H_
