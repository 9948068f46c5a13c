//===- elide_gemm_input_rounding_pass.h - gpt-elide-gemm-input-rounding ---===//
//
// Declares the pass that drops a gpt.round_bf16 whose every reader is a bf16 GEMM (a
// gpt.matmul or gpt.matmul_weight_grad under bf16 autocast), possibly through gpt.transpose
// and gpt.reshape: for a target whose bf16 GEMMs narrow each input to bf16 with
// round-to-nearest-even themselves (the cpu driver's matmul_bf16 on every path,
// runtime/kernels/cpu/matmul_bf16.h), that rounding happens again inside the GEMM, so the
// step computes the same bits without the separate pass over memory (and without the
// rounded copy's bytes). Rounding commutes with a transpose and a reshape (both move
// elements, never change one), so the readers may see the value through them.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_ELIDE_GEMM_INPUT_ROUNDING_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_ELIDE_GEMM_INPUT_ROUNDING_PASS_H_

#include <memory>

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-elide-gemm-input-rounding`, on any op holding functions (a module).
std::unique_ptr<mlir::Pass> CreateElideGemmInputRoundingPass();
void RegisterElideGemmInputRoundingPass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_ELIDE_GEMM_INPUT_ROUNDING_PASS_H_
