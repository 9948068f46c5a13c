//===- kernel_builder.h - writing gpu.launch bodies in C++ ----------------===//
//
// Declares what every GPU kernel generator (compiler/lowering/gpu/*_kernels.cc) builds
// its kernels with: EmitLaunch puts a `gpu.launch` of static grid and workgroup sizes into
// the launch schedule (named, for outlining: gpt.kernel_name), and KernelBuilder writes
// its body: ids, index arithmetic, loops, branches, loads and stores, barriers,
// workgroup memory and workgroup-wide reductions. Everything it emits is target-neutral
// gpu/scf/arith/math/memref, so the same kernels lower to SPIR-V (OpenCL) and NVVM (CUDA).
//
//   EmitLaunch(host, loc, "softcap_f32", {blocks, 1, 1}, {256, 1, 1}, /*workgroup=*/{},
//              [&](KernelBuilder& k, mlir::ValueRange) {
//                mlir::Value i = k.GlobalId();
//                k.If(k.Lt(i, k.Index(n)), [&] { ... k.Store(y, out, {i}); });
//              });
//
// Buffers a body reads or writes are the host function's memrefs, used directly: outlining
// (gpt-outline-kernels) turns them into kernel arguments. Constants are made inside the
// body (KernelBuilder::Index, F32, ...) so that they never become arguments.
// Barriers must be reached by every work-item of a workgroup: only in uniform control flow.
//
//===----------------------------------------------------------------------===//

#ifndef GPT_SFT_COMPILER_LOWERING_GPU_KERNEL_BUILDER_H_
#define GPT_SFT_COMPILER_LOWERING_GPU_KERNEL_BUILDER_H_

#include <array>
#include <cstdint>

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace gpt_sft::compiler::gpu_lowering {

using Dims = std::array<int64_t, 3>;

/// Ceil(a / b) for positive b: how many workgroups of b cover a.
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

class KernelBuilder {
 public:
  KernelBuilder(mlir::OpBuilder& builder, mlir::Location loc, mlir::gpu::LaunchOp launch, Dims grid, Dims block);

  mlir::ImplicitLocOpBuilder& b() { return b_; }
  const Dims& grid() const { return grid_; }
  const Dims& block() const { return block_; }
  int64_t threads() const { return block_[0] * block_[1] * block_[2]; }

  // Ids (index values).
  mlir::Value BlockId(int dim) const { return block_ids_[dim]; }
  mlir::Value ThreadId(int dim) const { return thread_ids_[dim]; }
  /// thread.x + block.x * x + ... over the launch's x, y, z: the work-item's rank in its workgroup.
  mlir::Value LocalLinearId();
  /// blockId.x * block.x + threadId.x: the work-item's x over the whole grid.
  mlir::Value GlobalId();

  // Constants.
  mlir::Value Index(int64_t v);
  mlir::Value F32(double v);
  mlir::Value I32(int32_t v);
  /// A float constant of `type` (f32 or f64).
  mlir::Value Float(mlir::Type type, double v);

  // Index arithmetic.
  mlir::Value Add(mlir::Value a, mlir::Value b);
  mlir::Value Sub(mlir::Value a, mlir::Value b);
  mlir::Value Mul(mlir::Value a, mlir::Value b);
  mlir::Value Div(mlir::Value a, mlir::Value b);  // unsigned
  mlir::Value Rem(mlir::Value a, mlir::Value b);  // unsigned
  mlir::Value Min(mlir::Value a, mlir::Value b);  // unsigned
  mlir::Value Lt(mlir::Value a, mlir::Value b);   // unsigned <
  mlir::Value Le(mlir::Value a, mlir::Value b);
  mlir::Value Eq(mlir::Value a, mlir::Value b);
  mlir::Value And(mlir::Value a, mlir::Value b);  // i1
  /// index <-> i32 (token ids, segment ids, positions are i32 in memory).
  mlir::Value IndexFromI32(mlir::Value v);
  mlir::Value I32FromIndex(mlir::Value v);

  // Float arithmetic (both operands of one float type).
  mlir::Value FAdd(mlir::Value a, mlir::Value b);
  mlir::Value FSub(mlir::Value a, mlir::Value b);
  mlir::Value FMul(mlir::Value a, mlir::Value b);
  mlir::Value FDiv(mlir::Value a, mlir::Value b);
  mlir::Value FMax(mlir::Value a, mlir::Value b);
  mlir::Value FMin(mlir::Value a, mlir::Value b);
  mlir::Value FNeg(mlir::Value a);
  /// a * b + c, fused.
  mlir::Value Fma(mlir::Value a, mlir::Value b, mlir::Value c);
  mlir::Value Exp(mlir::Value a);
  mlir::Value Log(mlir::Value a);
  mlir::Value Sqrt(mlir::Value a);
  mlir::Value Rsqrt(mlir::Value a);
  mlir::Value Tanh(mlir::Value a);
  mlir::Value Select(mlir::Value cond, mlir::Value a, mlir::Value b);
  /// Float comparisons (ordered).
  mlir::Value FLt(mlir::Value a, mlir::Value b);
  mlir::Value FGt(mlir::Value a, mlir::Value b);
  /// Converts between f32 and f64 (no-op when equal); i32 -> float.
  mlir::Value FCast(mlir::Value v, mlir::Type to);
  mlir::Value IntToFloat(mlir::Value v, mlir::Type to);

  // Memory. Load and Store are the bf16 seam: a bf16-storage buffer (IsBf16Storage) is read
  /// as f32 and written from f32, so a kernel computes in f32 whatever its buffers hold.
  /// `n` elements of `type` private to the work-item (registers or local memory).
  mlir::Value PrivateArray(int64_t n, mlir::Type type);
  mlir::Value Load(mlir::Value memref, mlir::ValueRange indices);
  void Store(mlir::Value value, mlir::Value memref, mlir::ValueRange indices);
  void Barrier();

  // Control flow.
  /// for iv in [lo, hi) step `step`: body(iv).
  void For(mlir::Value lo, mlir::Value hi, mlir::Value step, llvm::function_ref<void(mlir::Value)> body);
  void For(int64_t lo, int64_t hi, int64_t step, llvm::function_ref<void(mlir::Value)> body);
  /// A loop carrying values: body(iv, carried) returns the next values; returns the final ones.
  llvm::SmallVector<mlir::Value> For(mlir::Value lo, mlir::Value hi, mlir::Value step, mlir::ValueRange init,
                                     llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)> body);
  void If(mlir::Value cond, llvm::function_ref<void()> then);
  /// cond ? then() : otherwise(), both yielding values of the same types.
  llvm::SmallVector<mlir::Value> IfElse(mlir::Value cond, mlir::TypeRange types,
                                        llvm::function_ref<llvm::SmallVector<mlir::Value>()> then,
                                        llvm::function_ref<llvm::SmallVector<mlir::Value>()> otherwise);

  enum class Reduction { kSum, kMax };
  /// Every work-item's `value` combined over the workgroup, returned to all of them.
  /// `scratch` is workgroup memory of at least threads() elements of value's type. Must be
  /// reached by the whole workgroup (uniform control flow); it synchronises on entry and exit.
  mlir::Value WorkgroupReduce(mlir::Value value, mlir::Value scratch, Reduction kind);
  /// The same over each row of the workgroup along x: `value` combined over the work-items
  /// that share thread ids y and z, returned to them (block {x, rows, 1} reduces `rows` rows
  /// of x work-items at once). Same rules: scratch of threads() elements, uniform control
  /// flow, synchronised on entry and exit.
  mlir::Value ReduceAlongX(mlir::Value value, mlir::Value scratch, Reduction kind);

 private:
  /// The tree behind both reductions: `lanes` work-items, this one `lane` of them, whose
  /// slots in `scratch` start at `first` (null: at 0).
  mlir::Value TreeReduce(mlir::Value value, mlir::Value scratch, Reduction kind, int64_t lanes, mlir::Value lane,
                         mlir::Value first);

  mlir::ImplicitLocOpBuilder b_;
  Dims grid_, block_;
  std::array<mlir::Value, 3> block_ids_, thread_ids_;
};

/// The memref type of workgroup memory: `shape` of `element` in #gpu.address_space<workgroup>.
mlir::MemRefType WorkgroupMemRef(mlir::MLIRContext* context, llvm::ArrayRef<int64_t> shape, mlir::Type element);

/// Emits at `host`'s insertion point a gpu.launch of `grid` workgroups of `block` work-items
/// named `name` (gpt.kernel_name; outlining names the kernel after it), with one workgroup
/// buffer per type in `workgroup` (gpu.launch workgroup attributions), and fills its body.
mlir::gpu::LaunchOp EmitLaunch(mlir::OpBuilder& host, mlir::Location loc, llvm::StringRef name, Dims grid, Dims block,
                               llvm::ArrayRef<mlir::MemRefType> workgroup,
                               llvm::function_ref<void(KernelBuilder&, mlir::ValueRange workgroup)> body);

/// bf16 storage (compiler/transforms/bf16_storage.h): a buffer (or element type) of i16
/// holds bf16 bit patterns; nothing else in a step is i16.
bool IsBf16Storage(mlir::Type memref_or_element);
/// A bf16 bit pattern (i16) as the f32 of the same value: exact.
mlir::Value WidenBf16(mlir::OpBuilder& b, mlir::Location loc, mlir::Value bits);
/// An f32 that holds a bf16 value (autocast rounded it) as its bit pattern: the dropped low
/// half is zero, so this is exact; it does not round.
mlir::Value NarrowToBf16(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value);

/// `buffer` (a memref of static shape, identity layout) seen as one dimension of its elements,
/// created at `host`'s insertion point (a reinterpret_cast the launch list follows).
mlir::Value Flatten(mlir::OpBuilder& host, mlir::Location loc, mlir::Value buffer);

}  // namespace gpt_sft::compiler::gpu_lowering

#endif  // GPT_SFT_COMPILER_LOWERING_GPU_KERNEL_BUILDER_H_
