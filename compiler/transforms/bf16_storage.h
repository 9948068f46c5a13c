//===- bf16_storage.h - which values the GPU targets store as bf16 --------===//
//
// Declares the one decision behind bf16 storage: gpt-mark-bf16-storage puts
// `gpt.bf16_storage = array<i1: ...>` (one flag per result) on the ops whose results are
// bf16 values (autocast rounded them) and that nothing outside the step's arena reads as f32.
// gpt-plan-buffers sizes a marked result at 2 bytes per element; the GPU lowering gives its
// buffer an i16 element type (bf16 bit patterns: SPIR-V has no bf16 type), and the kernel
// builder widens on load and truncates on store (kernel_builder.h, exact: the value stored is
// already a bf16 value). Tensor types stay f32, so the ops, their verifiers and the
// interpreter see nothing of it.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_TRANSFORMS_BF16_STORAGE_H_
#define GPT_SFT_COMPILER_TRANSFORMS_BF16_STORAGE_H_

#include <memory>

namespace mlir {
class Pass;
class Value;
}  // namespace mlir

namespace gpt_sft::compiler {

inline constexpr char kBf16StorageAttr[] = "gpt.bf16_storage";

/// Whether `value` (an op result) is marked to be stored as bf16.
bool StoredAsBf16(mlir::Value value);

/// `--gpt-mark-bf16-storage` (after gpt-fuse, before gpt-plan-buffers; GPU targets only). Marks:
///   * a gpt.fusion result whose yielded value is a gpt.round_bf16, or a rotary/softcap with
///     `round_bf16` (autocast rounds after each of their inner ops);
///   * a gpt.rotary / gpt.rotary_grad with `round_bf16`;
///   * a gpt.reshape or gpt.transpose of a marked value (they move elements, never change one);
/// except a value the function returns, itself or through reshapes and transposes (its home
/// is the caller's f32 buffer).
std::unique_ptr<mlir::Pass> CreateMarkBf16StoragePass();
void RegisterMarkBf16StoragePass();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_TRANSFORMS_BF16_STORAGE_H_
