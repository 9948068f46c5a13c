// LaunchBuilder: turns the ops of one entry point of a compiled step into Launches
// (schedule.h), resolving every operand and result to an Address once.
//
// Where values live: a block argument in the caller's memory (Schedule::arg_ptrs); an op
// result at its gpt.offsets arena offset, or, where gpt-plan-buffers donated it
// (gpt.donates), in that argument's memory (in-place updates). Side buffers the plan does
// not know (attention's log-sum-exp, Muon's scratch, constants' values, default positions)
// are allocated here, once.
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

namespace gpt_sft::runtime::exec {

class LaunchBuilder {
 public:
  /// `arena_base` points at the executable's arena pointer; `owned` receives side buffers.
  LaunchBuilder(void* const* arena_base, const ObjectLibrary* kernels, OwnedMemory* owned)
      : arena_base_(arena_base), kernels_(kernels), owned_(owned) {}

  /// The schedule of `func`: argument and result specs, addresses, one launch per op.
  absl::StatusOr<std::unique_ptr<Schedule>> Build(mlir::func::FuncOp func);

 private:
  absl::Status Place(mlir::Operation* op, Schedule& schedule);
  absl::Status AddLaunch(mlir::Operation* op, Schedule& schedule);
  Address Of(mlir::Value value) const { return where_.lookup(value); }
  /// `bytes` of zeroed, 64-byte aligned memory owned by the executable.
  char* Own(int64_t bytes);
  /// The same, as an Address (its base pointer kept in OwnedMemory::bases).
  Address OwnAddress(int64_t bytes);

  void* const* arena_base_;
  const ObjectLibrary* kernels_;
  OwnedMemory* owned_;
  llvm::DenseMap<mlir::Value, Address> where_;
  llvm::DenseMap<mlir::Value, Address> lse_of_;  // gpt.attention result -> its log-sum-exp
  llvm::DenseSet<mlir::Operation*> absorbed_;
  char* muon_scratch_ = nullptr;                  // shared by the Muon updates of a function     // ops an earlier launch computes (epilogues)
};

}  // namespace gpt_sft::runtime::exec

#endif  // GPT_SFT_RUNTIME_EXECUTABLE_OP_LAUNCHES_H_
