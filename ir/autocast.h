// The module attribute that says which autocast numerics a step has, and the question every
// backend's matmul asks of it. gpt-autocast-bf16 (compiler/transforms) sets it; the GPU and
// CPU lowerings and the interpreter read it to run a matmul's bf16 kernel, so they live
// here, below all of them.
#ifndef GPT_SFT_IR_AUTOCAST_H_
#define GPT_SFT_IR_AUTOCAST_H_

namespace mlir {
class Operation;
}  // namespace mlir

namespace gpt_sft::compiler {

/// The module attribute gpt-autocast-bf16 sets, `gpt.autocast = "bf16"`: printed IR and
/// artifacts say which numerics the step has.
inline constexpr char kAutocastAttr[] = "gpt.autocast";

/// True when `op` is in a module under bf16 autocast. Then every gpt.matmul and
/// gpt.matmul_weight_grad reads bf16 values only: the weights and activations are rounded
/// where they enter a matmul, and each cotangent by the VJP of the round after a matmul.
bool UnderBf16Autocast(mlir::Operation* op);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_IR_AUTOCAST_H_
