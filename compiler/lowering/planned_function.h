//===- planned_function.h - a planned entry point into its launch schedule -===//
//
// Declares the target-neutral half of lowering an entry point out of `gpt`: after
// gpt-plan-buffers every op result has its place (an arena offset, or a donated argument),
// so bufferization is already decided. LowerPlannedFunction rewrites the function over
// tensors into its *launch schedule*, a function over memrefs:
//
//   func.func @micro_step(%arg0: memref<256x64xf32> {gpt.name = ...}, ...,
//                         %arena: memref<?xi8> {gpt.arena}) -> (memref<f32>, ...)
//       attributes {gpt.arena_bytes = N}
//
// Every value becomes a memref: an argument, a `memref.view` of the arena at its planned
// offset, a `memref.get_global` of a constant (the artifact's constants). It handles the ops
// whose meaning is placement alone (tensor.empty, constants, gpt.reshape: a view where the
// plan shares the bytes, else a `memref.copy`) and hands every other op to the target's
// OpLowering callback, which emits its launches (gpu.launch, gpt.call_builtin, ...) at the
// op's place in program order. Memory beyond the plan that a lowering asks for goes after
// the planned bytes: persistent buffers (live for the whole entry point: attention's
// log-sum-exp between forward and backward) and then one scratch region that each op's
// launches may use until the next op (sized by the largest need). A result named like an
// argument (gpt.name: the new parameters, gradients, optimizer state) always ends in that
// argument's buffer: where the plan could not write it in place, a copy takes it home.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_PLANNED_FUNCTION_H_
#define GPT_SFT_COMPILER_LOWERING_PLANNED_FUNCTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace gpt_sft::compiler::lowering {

/// The attributes of the launch schedule's function: the arena argument and its size.
inline constexpr char kArenaArgAttr[] = "gpt.arena";
inline constexpr char kArenaBytesAttr[] = "gpt.arena_bytes";
/// On each launch of the schedule: the op it computes ("gpt.matmul"), for profiles and errors.
inline constexpr char kOpNameAttr[] = "gpt.op";
/// On an integer argument the kernels index with: array<i64: first, end>, the values allowed.
inline constexpr char kValidRangeAttr[] = "gpt.valid_range";

class PlannedFunctionLowering;

/// What a target's lowering of one op sees. Buffers are memrefs of static shape and identity
/// layout whose element type is the tensor's.
class OpLowering {
 public:
  mlir::Operation* op() const { return op_; }
  mlir::Location loc() const { return op_->getLoc(); }
  /// Inserts into the schedule, at this op's place.
  mlir::OpBuilder& builder() { return builder_; }

  /// The buffer of operand `i`, and the buffer result `i` must be written to.
  mlir::Value operand(unsigned i);
  mlir::Value result(unsigned i);
  /// The buffer of any value of the entry point defined before this op, or placed by the plan
  /// (a result of a later op, for a lowering that absorbs it: see Absorb).
  mlir::Value BufferOf(mlir::Value tensor);

  /// The arena bytes [first, end) the plan gave `tensor` (through views), or nullopt when it
  /// lives elsewhere (an argument, a constant): lowerings that fuse ops check overlaps with it.
  std::optional<std::pair<int64_t, int64_t>> PlannedArenaBytes(mlir::Value tensor);

  /// Records that the kernels index with the integers of `tensor`: when it is an argument of
  /// the entry point (through reshapes), its values must lie in [first, end) (kValidRangeAttr,
  /// checked by the runtime on upload; ranges given twice intersect).
  void RequireArgumentRange(mlir::Value tensor, int64_t first, int64_t end);

  /// Memory only this op's launches use: valid until the next op's launches.
  mlir::Value Scratch(mlir::MemRefType type);
  /// `type`'s bytes from `byte_offset` within `scratch` (a view Scratch returned), as a view of
  /// its own: a kernel handed one part of a larger scratch sees an identity-layout buffer, so
  /// the kernels for every part are one kernel.
  mlir::Value ScratchPart(mlir::Value scratch, int64_t byte_offset, mlir::MemRefType type);
  /// Memory that lives for the whole entry point, past the plan's arena, under `key` so a
  /// later op's lowering finds it with FindPersistent (attention's log-sum-exp).
  mlir::Value Persistent(mlir::MemRefType type, mlir::Value key);
  /// The persistent buffer stored under `key`, or null.
  mlir::Value FindPersistent(mlir::Value key);
  /// A read-only buffer holding `value` (the artifact's constants); equal values share one.
  mlir::Value Constant(mlir::DenseElementsAttr value);
  /// Scalar arguments for builtins: arith.constant i64 / f64 / f32.
  mlir::Value I64(int64_t value);
  mlir::Value F64(double value);
  mlir::Value F32(float value);

  /// Marks `later` (an op after this one) as computed by this op's launches (an epilogue):
  /// the driver will not lower it. Only ops between this one and `later` that are pure
  /// placement (reshapes) may stand between them, or ops the lowering has checked touch none
  /// of the bytes `later` reads or writes (muon_group_fusion.h).
  void Absorb(mlir::Operation* later);
  /// Whether an earlier op's lowering absorbed `op`.
  bool IsAbsorbed(mlir::Operation* op) const;
  /// Puts a launch's kernel name on what the lowering emits (gpt.kernel_name), for outlining.
  static constexpr char kKernelNameAttr[] = "gpt.kernel_name";

 private:
  friend class PlannedFunctionLowering;
  OpLowering(PlannedFunctionLowering& driver, mlir::Operation* op, mlir::OpBuilder& builder)
      : driver_(driver), op_(op), builder_(builder) {}
  PlannedFunctionLowering& driver_;
  mlir::Operation* op_;
  mlir::OpBuilder& builder_;
};

/// Whether `a` and `b` share no byte: by their planned arena ranges; one outside the arena
/// (an argument, a constant) and the other in it: none; both outside: unknown, so no.
bool DisjointBytes(OpLowering& l, mlir::Value a, mlir::Value b);

/// Emits the launches of `lowering.op()`; on failure, emits an error at the op naming what
/// the target cannot do.
using OpLoweringFn = std::function<mlir::LogicalResult(OpLowering& lowering)>;

/// Rewrites the planned entry point `func` in place into its launch schedule (see the file
/// comment), calling `lower_op` for every op that computes. Extra memory is aligned to
/// `alignment` bytes. Fails, with a diagnostic at the op, on an unplanned op or a value whose
/// type is not a static tensor.
mlir::LogicalResult LowerPlannedFunction(mlir::func::FuncOp func, int64_t alignment, const OpLoweringFn& lower_op);

}  // namespace gpt_sft::compiler::lowering

#endif  // GPT_SFT_COMPILER_LOWERING_PLANNED_FUNCTION_H_
