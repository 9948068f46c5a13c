//===- ukernel_launch.h - launches of the cpu micro-kernel families -------===//
//
// The cpu lowering's side of the micro-kernel contract (ukernel/): one emitter per family that
// checks the params against what the driver runs, writes them as the launch's scalars and the
// buffers in the family's slot order, and names the variant in words (gpt.ukernel) for readers
// of the IR and its FileCheck tests. The lowering decides the params; this file only writes
// them, so no builtin name is ever assembled from pieces.
//
//===----------------------------------------------------------------------===//
#ifndef GPT_SFT_COMPILER_LOWERING_CPU_UKERNEL_LAUNCH_H_
#define GPT_SFT_COMPILER_LOWERING_CPU_UKERNEL_LAUNCH_H_

#include <array>
#include <string>

#include "compiler/lowering/planned_function.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "ukernel/attention.h"
#include "ukernel/gemm.h"
#include "ukernel/norm.h"
#include "ukernel/rotary.h"

namespace gpt_sft::compiler::lowering {

/// "cpu.<name>.f32" / ".f64" after `typed`'s element type; empty for any other.
std::string CpuBuiltinName(const std::string& name, mlir::Value typed);

/// A family launch's buffers indexed by its slot enum; null where the params have no such slot.
using GemmBuffers = std::array<mlir::Value, ukernel::kGemmSlotCount>;
using NormBuffers = std::array<mlir::Value, ukernel::kNormSlotCount>;
using RotaryBuffers = std::array<mlir::Value, ukernel::kRotarySlotCount>;
using AttentionBuffers = std::array<mlir::Value, ukernel::kAttentionSlotCount>;

/// Each emits its family's launch at `l`'s insertion point; `typed` is a value of the element
/// type. A combination the driver does not run is an error on `l`'s op.
mlir::LogicalResult CallGemm(OpLowering& l, mlir::Value typed, const ukernel::GemmParams& p, const GemmBuffers& b);
mlir::LogicalResult CallNorm(OpLowering& l, mlir::Value typed, const ukernel::NormParams& p, const NormBuffers& b);
mlir::LogicalResult CallRotary(OpLowering& l, mlir::Value typed, const ukernel::RotaryParams& p,
                               const RotaryBuffers& b);
mlir::LogicalResult CallAttention(OpLowering& l, mlir::Value typed, const ukernel::AttentionParams& p,
                                  const AttentionBuffers& b);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_CPU_UKERNEL_LAUNCH_H_
