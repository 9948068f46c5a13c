//===- muon_group_fusion.h - same-shape Muon updates run as one group -----===//
//
// Declares the grouping of an entry point's gpt.muon_update ops: the updates of one shape
// (nanochat's Muon steps its parameters in groups of one shape too) run together, emitted at
// the first one's place. The cpu target makes the group one builtin, muon_group
// (muon_group_bf16 under bf16 autocast), which runs the group's matrices in parallel over the
// pool, a whole matrix per task (runtime/kernels/cpu/muon_group.h), where one launch per
// matrix splits each small Newton-Schulz GEMM over the pool and pays its overheads 5 x 3
// times per matrix. The GPU targets run each Newton-Schulz product of the group as one
// batched gemm (compiler/lowering/gpu/optimizer_kernels.cc). Each matrix gets the bits its
// own launch gives.
//
// When an update joins the group of an earlier one, `first` (MatchMuonGroup):
//  * it agrees with `first` on what the launch takes once: shape, element type, momentum,
//    Nesterov, Newton-Schulz steps (the autocast numerics are the module's);
//  * every operand exists at `first`'s place (defined before it, or an argument), so the
//    data-parallel step, whose all_reduce feeds each update right before it, keeps its
//    launches (and its overlap of one exchange with the previous update);
//  * no member of the group writes a byte another reads or writes (they run at once);
//  * no op between `first` and it that stays in place touches a byte it reads or writes
//    with a write on either side (it runs earlier than the plan has it: before those ops).
// Bytes: the lowering's arena ranges (`disjoint`), and the entry point's slots: a value in
// an argument's buffer (the argument, or a result the plan donated to it) lives in the slot
// named by the argument's gpt.name, and two slots never share a byte (the runtime refuses
// to bind overlapping ranges: runtime/executable/executable.h). Constants are never written.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_MUON_GROUP_FUSION_H_
#define GPT_SFT_COMPILER_LOWERING_MUON_GROUP_FUSION_H_

#include <cstdint>

#include "ir/gpt_ops.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace gpt_sft::compiler::lowering {

/// The most updates in one group (runtime/device/cpu/host_builtins.cc, muon_group's table).
inline constexpr int64_t kMaxMuonGroup = 256;

/// Whether the lowering knows two values of the entry point to share no byte (its plan).
using DisjointBytesFn = llvm::function_ref<bool(mlir::Value, mlir::Value)>;
/// Whether an earlier lowering already runs `op` in its launch.
using AbsorbedFn = llvm::function_ref<bool(mlir::Operation*)>;

/// The updates that run in `first`'s launch, `first` included, in block order (see above):
/// `first` alone when none can join it.
llvm::SmallVector<gpt::MuonUpdateOp> MatchMuonGroup(gpt::MuonUpdateOp first, DisjointBytesFn disjoint,
                                                    AbsorbedFn absorbed);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_MUON_GROUP_FUSION_H_
