// LaunchBuilder: turns the ops of one entry point of a compiled step into Launches
// (schedule.h), resolving every operand and result to an Address once.
//
// Where values live: a block argument in the caller's memory (Schedule::arg_ptrs); an op
// result at its gpt.offsets arena offset, or, where gpt-plan-buffers donated it
// (gpt.donates), in that argument's memory (in-place updates). Side buffers the plan does
// not know (attention's log-sum-exp, constants' values, default positions) are allocated
// here, once. Kernels' scratch (attention's tiles, Muon's Newton-Schulz matrices, ...) is a
// WorkspaceRef into one block the executable allocates at the largest launch's need.
//
// When several kernels run inside a ParallelFor they share their scratch per thread, sized for
// kernels::NumThreads() at load (a larger count later runs on the threads the slices fit).
#ifndef GPT_SFT_RUNTIME_EXECUTABLE_OP_LAUNCHES_H_
#define GPT_SFT_RUNTIME_EXECUTABLE_OP_LAUNCHES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "runtime/executable/schedule.h"
#include "runtime/jit/object_library.h"

namespace gpt_sft::runtime::collectives {
class Communicator;
}  // namespace gpt_sft::runtime::collectives

namespace gpt_sft::runtime::exec {

class LaunchBuilder {
 public:
  /// `arena_base` points at the executable's arena pointer, `workspace_base` at its
  /// workspace block's; `owned` receives side buffers; `communicator` (null: one rank) runs
  /// the collectives.
  LaunchBuilder(void* const* arena_base, void* const* workspace_base, const ObjectLibrary* kernels,
                OwnedMemory* owned, collectives::Communicator* communicator = nullptr)
      : arena_base_(arena_base), workspace_base_(workspace_base), kernels_(kernels), owned_(owned),
        communicator_(communicator) {}

  /// The schedule of `func`: argument and result specs, addresses, one launch per op.
  absl::StatusOr<std::unique_ptr<Schedule>> Build(mlir::func::FuncOp func);

  /// The largest workspace any launch built so far needs: the block's size.
  int64_t workspace_bytes() const { return workspace_bytes_; }

 private:
  absl::Status Place(mlir::Operation* op, Schedule& schedule);
  absl::Status AddLaunch(mlir::Operation* op, Schedule& schedule);
  Address Of(mlir::Value value) const { return where_.lookup(value); }
  /// `bytes` of zeroed, 64-byte aligned memory owned by the executable.
  char* Own(int64_t bytes);
  /// The same, as an Address (its base pointer kept in OwnedMemory::bases).
  Address OwnAddress(int64_t bytes);
  /// `bytes` of scratch for one launch (the block grows to the largest).
  WorkspaceRef Scratch(int64_t bytes);

  void* const* arena_base_;
  void* const* workspace_base_;
  int64_t workspace_bytes_ = 0;
  const ObjectLibrary* kernels_;
  OwnedMemory* owned_;
  collectives::Communicator* communicator_;
  llvm::DenseMap<mlir::Value, Address> where_;
  llvm::DenseMap<mlir::Value, Address> lse_of_;  // gpt.attention result -> its log-sum-exp
  llvm::DenseSet<mlir::Operation*> absorbed_;  // ops an earlier launch computes (epilogues)
};

}  // namespace gpt_sft::runtime::exec

#endif  // GPT_SFT_RUNTIME_EXECUTABLE_OP_LAUNCHES_H_
