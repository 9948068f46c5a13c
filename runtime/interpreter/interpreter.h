// Interpreter: runs a func.func of `gpt` dialect IR op by op on the CPU, with dynamic
// shapes, calling the kernels of runtime/kernels/cpu. It is the eager baseline (one
// output buffer per op, no fusion), the evaluation path and the numerical definition of
// every op for the compiled path.
//
//   Interpreter interpreter(module);                      // module outlives interpreter
//   auto results = interpreter.Run("micro_step", std::move(args));
//
// Values: f32 and f64 activations (f64 for gradient checks), i32 ids/targets/positions/
// segment ids, rank-0 f32 for loss, lr and step. Result shapes come from the operands'
// run-time shapes; a static dim of the IR that disagrees is an error naming the op, its
// location and both shapes. Each intermediate is released right after its last use.
//
// Donation (in-place updates, e.g. gpt.adamw_update / gpt.muon_update): an op may write
// into an operand's buffer when this op is the operand's last use and the run holds the
// only reference to it. That is the case for
//   * an owned argument the caller moved into `args` and holds no other copy of;
//   * an argument listed in RunOptions::donated_args: the caller promises not to read
//     the old contents. This is how the trainer passes ParamStore weights as views and
//     gets them updated in place (the result is then a view of the same memory);
//   * an intermediate nothing else shares.
// Otherwise the op copies, then updates the copy.
//
// Not thread-safe: one Run at a time per Interpreter.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_INTERPRETER_H_
#define GPT_SFT_RUNTIME_INTERPRETER_INTERPRETER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/base/caching_allocator.h"
#include "runtime/base/tensor.h"
#include "runtime/interpreter/collectives.h"

namespace mlir {
class ModuleOp;
class Operation;
}  // namespace mlir

namespace gpt_sft::runtime::interp {
class OpContext;
}  // namespace gpt_sft::runtime::interp

namespace gpt_sft::runtime {

/// What an observer sees after each op of a run (MLIR-free).
struct OpEvent {
  std::string_view function;         // "micro_step"
  std::string_view op_name;          // "gpt.matmul"
  const std::string& location;       // the op's location, as MLIR prints it
  int step;                          // the op's index in the function body
  const std::vector<Tensor>& results;
};

struct InterpreterOptions {
  /// > 0: sets the kernels' thread count (kernels::SetNumThreads, process-wide) when the
  /// Interpreter is built; 0 leaves it as it is.
  int num_threads = 0;
  /// Where tensors come from; null: an allocator of the interpreter's own. Share one to
  /// pool memory between interpreters (train and eval).
  std::shared_ptr<CachingAllocator> allocator;
  /// The collectives' ranks; null: a single rank (every collective is the identity).
  std::shared_ptr<Collectives> collectives;
  /// Called after every op with its results (to dump or check intermediates, as ggml's
  /// eval callback); null: none, at no cost. The results are the run's own tensors: an
  /// observer may copy them, not write into them.
  std::function<void(const OpEvent&)> observer;
  /// Time every op and sum by op name (profile()); costs two clock reads per op.
  bool profile = false;
};

/// Wall time per op name over the runs since the last ResetProfile(), most expensive first.
struct OpProfileEntry {
  std::string op;  // e.g. "gpt.attention_grad"
  int64_t calls = 0;
  double seconds = 0;
};

struct RunOptions {
  /// Indices of the arguments whose buffers the run may overwrite (see the header
  /// comment: donation). Owned or views.
  std::vector<int> donated_args;
};

class Interpreter {
 public:
  /// `module` must outlive the Interpreter and not change while it exists (functions
  /// are prepared once, on first Run, and cached).
  explicit Interpreter(mlir::ModuleOp module, InterpreterOptions options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  /// Runs func `function` on `args` (one per block argument; element type, rank and static
  /// dims are checked, an error names the function, the argument's index, its `gpt.name`
  /// attribute when present, and the expected and actual shapes). Returns the values of
  /// its func.return. An op the interpreter does not know (e.g. gpt.gradients before
  /// gpt-autodiff) fails before anything runs.
  absl::StatusOr<std::vector<Tensor>> Run(std::string_view function, std::vector<Tensor> args,
                                          const RunOptions& run_options = {});

  /// The `gpt.name` of each argument / result of `function` ("" where absent), so that an
  /// MLIR-free caller can bind ParamStore tensors by name.
  absl::StatusOr<std::vector<std::string>> ArgumentNames(std::string_view function) const;
  absl::StatusOr<std::vector<std::string>> ResultNames(std::string_view function) const;

  /// A snapshot of the allocator's stats (live, peak, cached bytes; cache hits).
  AllocatorStats allocator_stats() const;
  /// The allocator: ResetPeak() before a Run measures that run's peak; ReleaseCache()
  /// returns the cached blocks to the OS (e.g. between training and a large evaluation).
  CachingAllocator& allocator();
  /// Empty unless InterpreterOptions::profile.
  std::vector<OpProfileEntry> profile() const;
  void ResetProfile();

 private:
  void Observe(std::string_view function, int step, mlir::Operation* op, const interp::OpContext& ctx);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_INTERPRETER_INTERPRETER_H_
