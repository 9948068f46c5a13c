// Executable: runs a compiled step (compiler/codegen/step_artifact.h) on the CPU.
//
// Loading does all the work once: it parses the artifact's schedule (the step's IR at the
// linalg stage), links the fusion kernels' object code into the process (runtime/jit),
// allocates one arena of the plan's size (the largest entry point's; entry points run one at
// a time and share it), and turns every op into a launch whose buffers are resolved: an
// arena offset from gpt-plan-buffers, an argument's memory (donated: parameters, gradient
// accumulators and optimizer state are updated in place), or a small buffer of the
// executable's own (attention's log-sum-exp, constants). The kernels' scratch (attention's
// transposed k/v and tiles, Muon's Newton-Schulz matrices, ...) is one workspace block sized
// at load for the largest launch and kernels::NumThreads() threads. Run then only checks the
// arguments' types and calls the launches in order: no allocation (executable_allocations_test
// counts them), no shape inference, no compilation. A batch of another shape is an error naming the argument and both shapes;
// the executable never recompiles.
//
//   auto exe = Executable::Load(artifact);
//   (*exe)->Run("micro_step", args);          // args: Tensors of the compiled types
//   const float* loss = (*exe)->ResultData<float>("micro_step", 0);
//
// Not thread-safe: one Run at a time. The kernels split each launch over the cores
// (runtime/kernels/cpu/parallel.h).
#ifndef GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_
#define GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/step_artifact.h"
#include "runtime/base/tensor.h"

namespace gpt_sft::runtime {

namespace collectives {
class Communicator;
}  // namespace collectives

struct ExecutableOptions {
  /// > 0: sets the kernels' thread count (kernels::SetNumThreads) at load; 0 leaves it.
  int num_threads = 0;
  /// Time every launch and sum by op name (profile()).
  bool profile = false;
  /// The ranks of the step's "dp" group (gpt.all_reduce runs through it, on host buffers);
  /// null: one rank. Its world size must be the one the step was built for
  /// (StepConfig::dp_world_size, the module's gpt.dp_world_size), else Load refuses. Not owned;
  /// it must outlive the executable.
  collectives::Communicator* communicator = nullptr;
};

/// An argument or result of an entry point as compiled.
struct BufferSpec {
  std::string name;  // gpt.name ("transformer.wte.weight", "grad/lm_head.weight", "inputs", ...)
  DType dtype = DType::kF32;
  Shape shape;
};

struct LaunchProfileEntry {
  std::string op;  // "gpt.matmul", "fusion" (compiled kernels), ...
  int64_t calls = 0;
  double seconds = 0;
};

class Executable {
 public:
  static absl::StatusOr<std::unique_ptr<Executable>> Load(const compiler::StepArtifact& artifact,
                                                          ExecutableOptions options = {});
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  /// Entry points, in module order.
  std::vector<std::string> Functions() const;
  /// NotFound naming the function (and the ones there are) when absent.
  absl::StatusOr<const std::vector<BufferSpec>*> Arguments(std::string_view function) const;
  absl::StatusOr<const std::vector<BufferSpec>*> Results(std::string_view function) const;

  /// Runs `function` on `args` (exactly the compiled dtypes and shapes). Donated arguments
  /// are overwritten. Results stay readable through ResultData until the next Run.
  absl::Status Run(std::string_view function, const std::vector<Tensor>& args);

  /// Result `index` of the last Run of `function`: arena memory, or the donated argument's
  /// memory it was written into. Null for an unknown function or index.
  const void* ResultData(std::string_view function, int index) const;
  template <typename T>
  const T* ResultData(std::string_view function, int index) const {
    return static_cast<const T*>(ResultData(function, index));
  }

  /// Gives the arena's pages back to the OS until the next Run touches them again. The arena
  /// holds only a Run's intermediates, so nothing is lost but the last Run's results that
  /// live there (ResultData then reads zeros): read them first. For a caller that runs other
  /// work between steps (the trainer's interpreted evaluation) and wants one working set
  /// resident at a time.
  absl::Status ReleaseScratchMemory();

  const std::string& key() const { return key_; }
  int64_t arena_bytes() const { return arena_bytes_; }
  /// Bytes the executable holds besides the arena and the workspace (log-sum-exps, constants).
  int64_t owned_bytes() const { return owned_bytes_; }
  /// The kernels' scratch block (attention tiles, Muon's matrices, ...): the largest launch's
  /// need, sized at load for kernels::NumThreads() threads and shared by every launch.
  int64_t workspace_bytes() const { return workspace_bytes_; }
  int64_t num_launches(std::string_view function) const;
  std::vector<LaunchProfileEntry> profile() const;
  void ResetProfile();

 private:
  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string key_;
  int64_t arena_bytes_ = 0;
  int64_t owned_bytes_ = 0;
  int64_t workspace_bytes_ = 0;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_
