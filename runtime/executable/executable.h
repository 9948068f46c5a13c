// Executable: runs a compiled step (artifact/) on a Device. It makes no lowering
// decision - the artifact's launch lists hold them all - and links neither MLIR nor LLVM.
//
// Load does all the preparation once: it loads the kernel modules onto the device, uploads
// the constants, allocates one arena (the largest entry point's; entry points run one at a
// time and share it). The step's state lives in slots (parameters, gradients, optimizer
// state, the batch): the caller binds each slot to device memory (Bind, e.g. host memory the
// cpu driver wraps with no copy) or lets the executable allocate it (AllocateUnboundSlots).
// The first Run of an entry point records its launches into a command buffer (every argument
// resolved to a buffer range); every Run after that submits it and waits. A slot's data is
// moved with Upload (checked: the compiled type and shape, integer values in the slot's valid
// range; a batch of another shape is an error naming both shapes: the step never recompiles)
// and Download.
//
//   auto exe = Executable::Load(artifact, device.get(), {});
//   (*exe)->AllocateUnboundSlots();
//   (*exe)->Upload("inputs", batch.inputs);  ...
//   (*exe)->Run("micro_step");
//   float loss; (*exe)->DownloadResult("micro_step", 0, &loss);
//
// Not thread-safe: one thread drives it. The device must outlive it.
#ifndef GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_
#define GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "artifact/artifact.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime {

namespace collectives {
class Communicator;
}  // namespace collectives

struct ExecutableOptions {
  /// The ranks of the step's data-parallel group (collective launches run through it); null:
  /// one rank. Not owned; must outlive the executable.
  collectives::Communicator* communicator = nullptr;
};

class Executable {
 public:
  /// Errors name the module (with the driver's build log), the launch or the slot at fault.
  static absl::StatusOr<std::unique_ptr<Executable>> Load(const artifact::Artifact& artifact, device::Device* device,
                                                          ExecutableOptions options = {});
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  const artifact::Artifact& artifact() const { return artifact_; }
  device::Device& device() { return *device_; }

  /// Binds slot `name` to `range` (exactly the slot's bytes), before the first Run. No byte of
  /// it may be another bound slot's (InvalidArgument naming both): compiled steps rely on it.
  absl::Status Bind(std::string_view name, device::BufferRange range);
  /// Allocates device memory for every slot not bound yet (owned by the executable).
  absl::Status AllocateUnboundSlots();
  /// The memory slot `name` is bound to; NotFound naming the slots there are.
  absl::StatusOr<device::BufferRange> Slot(std::string_view name) const;

  /// Host -> slot: `data` holds exactly the slot's bytes, of its element type; an integer slot
  /// with a valid range has every value checked first. `shape`, when given, must be the slot's.
  absl::Status Upload(std::string_view name, const void* data, int64_t bytes, const std::vector<int64_t>* shape = nullptr);
  /// Slot -> host (`bytes` must be the slot's).
  absl::Status Download(std::string_view name, void* data, int64_t bytes);

  /// Runs `function` to completion.
  absl::Status Run(std::string_view function);
  /// Result `index` of the last Run of `function`, copied to host (`bytes` must be its size).
  absl::Status DownloadResult(std::string_view function, int index, void* data, int64_t bytes);

  /// Gives the arena's memory back where the driver can (the cpu driver's pages), until the
  /// next Run: for a caller that runs other work between steps and wants one working set
  /// resident at a time. Results in the arena read as garbage afterwards: read them first.
  absl::Status ReleaseScratchMemory();

  int64_t arena_bytes() const { return artifact_.MaxArenaBytes(); }
  /// Device memory this executable allocated: the arena, the constants and the slots it owns
  /// (not the buffers bound to it).
  int64_t allocated_bytes() const;
  /// Launches of `function` (0 for an unknown one).
  int64_t num_launches(std::string_view function) const;

 private:
  struct Prepared;
  Executable(artifact::Artifact artifact, device::Device* device, ExecutableOptions options);
  absl::Status LoadModules();
  absl::StatusOr<device::BufferRange> Resolve(const artifact::BufferRef& ref);
  absl::Status Record(const artifact::Function& function, Prepared& prepared);
  absl::Status RecordLaunch(const artifact::Launch& launch, Prepared& prepared);
  absl::StatusOr<const artifact::Function*> FindFunction(std::string_view name) const;
  absl::StatusOr<int> FindSlot(std::string_view name) const;

  artifact::Artifact artifact_;
  device::Device* device_;
  ExecutableOptions options_;
  std::vector<std::unique_ptr<device::Module>> modules_;
  std::unique_ptr<device::Buffer> arena_, constants_;
  std::vector<std::unique_ptr<device::Buffer>> owned_slots_;
  std::vector<device::BufferRange> slots_;  // bound ranges; buffer null until bound
  std::vector<std::unique_ptr<Prepared>> prepared_;  // per function, recorded at first Run
  bool recorded_any_ = false;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_EXECUTABLE_EXECUTABLE_H_
