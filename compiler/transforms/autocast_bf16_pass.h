//===- autocast_bf16_pass.h - gpt-autocast-bf16 ---------------------------===//
//
// Declares the pass that states nanochat's bf16 autocast (NANOCHAT.md 1.2-1.6) on an f32
// forward: it inserts gpt.round_bf16 wherever autocast leaves a bf16 tensor, so f32 storage
// carries bf16 values. It runs on the forward before gpt-autodiff; the rounding ops' VJP
// then rounds the cotangents too, as PyTorch's gradients of bf16 tensors are bf16.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_AUTOCAST_BF16_PASS_H_
#define GPT_SFT_COMPILER_TRANSFORMS_AUTOCAST_BF16_PASS_H_

#include <memory>

#include "ir/autocast.h"  // kAutocastAttr, the attribute the pass sets

namespace mlir {
class Pass;
}  // namespace mlir

namespace gpt_sft::compiler {

/// `--gpt-autocast-bf16`, on a module.
std::unique_ptr<mlir::Pass> CreateAutocastBf16Pass();

/// Makes `--gpt-autocast-bf16` known to the pass registry (gptc-opt).
void RegisterAutocastBf16Pass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_AUTOCAST_BF16_PASS_H_
