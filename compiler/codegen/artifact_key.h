// The compile cache's key and the compiler version it carries. A key is a hash of the step's
// IR as built, the target's description, the step's dtype and the compiler version, so any
// change to one of them is a different artifact. MLIR-free.
#ifndef GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
#define GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_

#include <string>

namespace gpt_sft::compiler {

/// Bumped whenever a pass, the lowering or the artifact layout changes what a step compiles
/// to: artifacts of another version are never loaded.
/// 8.0: keys name the dtype (bfloat16 steps).
/// 8.1: the GPU rotary tables hold nanochat's bf16 cos/sin in every dtype (f32 steps too).
/// 8.2: the cpu target's rotary reads cos/sin tables baked into the artifact (rotary_tables).
/// 8.3: the cpu target fuses rotary with its QK-norm (rotary_rms_norm, rms_norm_rotary_grad)
///      and a softcap with its loss (softcap_cross_entropy), the residual add with its
///      rms_norm (add_rms_norm, rms_norm_grad_add), a run of adds in one launch (add_list).
/// 8.4: bf16-autocast matmuls on the cpu target call the bf16 GEMM builtins (cpu.matmul_bf16.f32,
///      cpu.matmul_weight_grad_bf16.f32: oneDNN where the CPU has bf16 dot products).
/// 8.7: Muon under bf16 in bf16 (cpu.muon_bf16), the lm_head loss fusion
///      (linear_softcap_cross_entropy_grad), the bf16 rounding epilogues, prologues and
///      softcap builtins (gpt-elide-gemm-input-rounding, *_round builtins, shared fusion
///      kernels), and bf16-autocast attention's builtins (cpu.attention_bf16.f32,
///      cpu.attention_grad_bf16.f32: P and dS rounded to bf16).
/// 8.8-muon: the cpu target runs an entry point's same-shape muon_updates as one launch
///      (cpu.muon_group, cpu.muon_group_bf16: whole matrices as pool tasks).
/// 8.9: the lm_head's loss fused under bf16 autocast too (dy written prepared for the bf16
///      weight gradient), fusion loops marked parallel, transposed weights folded into
///      matmul_grad_input, the bf16 QK-norm fused each way, relu² and the residual add with the
///      next norm as GEMM epilogues, blocks of ignored targets skipped in the lm_head.
/// 8.10: values only bf16 GEMMs read (the blocks' norms, the MLP's hidden activation and its
///      gradient) written prepared for them by their producers (*_prepared_y, *_prepared_r,
///      *_prepared_g) and read so (*_prepared_x, *_prepared_dy builtins); the relu² backward as
///      the epilogue of its cotangent's product (matmul_grad_input_bf16_relu_square_grad); the
///      lm_head's dy written in its weight gradient's slabs (dy layout 2).
/// 8.11: the lm_head's loss fusion reads w itself for dx = dy w (the *_v2 builtins), without
///      the transposed copy it made before each micro-step; the bf16 attention gradient writes
///      dv prepared for the GEMMs that alone read it (attention_grad_bf16_prepared_dv); the
///      gradient accumulation fused with autocast's rounding updates the gradient in place.
inline constexpr char kCompilerVersion[] = "gptc-8.11";

/// xxh3 of `step_ir_as_built`, `target`, `dtype` (the step config's name: "f32", "bf16", ...)
/// and kCompilerVersion, as 16 hex digits. The dtype is named even though the IR shows it
/// (bf16 steps carry gpt.round_bf16), so no two numerics can share a key by accident.
std::string ArtifactKey(const std::string& step_ir_as_built, const std::string& target, const std::string& dtype);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_ARTIFACT_KEY_H_
