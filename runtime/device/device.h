// Device: the hardware seam of the runtime, a small HAL in the spirit of IREE's. Everything
// the device runtime (runtime/executable) does to a CPU or a GPU goes through it:
//
//   * buffers: Allocate (one arena per step, the step's state), Upload/Download (host <->
//     device, blocking), and in command buffers Copy and Fill;
//   * kernel modules loaded from an artifact, tagged with their format (a host shared object,
//     SPIR bitcode, PTX), and the kernels found in them by symbol;
//   * command buffers: a step's launches recorded once (kernel + grid + workgroup size +
//     workgroup-memory bytes + arguments as buffer ranges and scalars; driver builtins; copies;
//     fills; host calls for collectives), then submitted every step with nothing to resolve;
//   * Synchronize, and the elapsed time between two markers recorded in the device's stream.
//
// Drivers live in runtime/device/<driver>/ and register in device_registry.cc:
//   cpu     host memory; modules are host shared objects (dlopen); builtins are the CPU
//           library kernels (runtime/device/cpu/host_builtins.h) over BLAS;
//   opencl  the ocl-icd loader and whatever ICD is installed (PoCL here): SPIR modules;
//   cuda    the NVIDIA driver (libcuda.so.1, dlopen'ed): PTX modules, steps as CUDA graphs.
// One conformance suite (runtime/device/conformance) runs against every driver present.
//
// MLIR-free and LLVM-free: binaries that only run artifacts link this. Not thread-safe: one
// thread drives a device. Ownership: buffers, modules and command buffers belong to their
// creator and must not outlive the Device; kernels belong to their module.
#ifndef GPT_SFT_RUNTIME_DEVICE_DEVICE_H_
#define GPT_SFT_RUNTIME_DEVICE_DEVICE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "artifact/artifact.h"

namespace gpt_sft::runtime::device {

using artifact::ModuleFormat;
using artifact::Scalar;

struct DeviceLimits {
  int64_t max_workgroup_size = 1;          // work-items per workgroup, all dimensions together
  std::array<int64_t, 3> max_workgroup_dims = {1, 1, 1};
  int64_t max_workgroup_memory_bytes = 0;  // per workgroup
  int64_t max_allocation_bytes = 0;        // one buffer
  int64_t total_memory_bytes = 0;
  /// A buffer range passed to a kernel must start at a multiple of this many bytes.
  int64_t buffer_alignment = 1;
  int compute_units = 1;
};

class Buffer {
 public:
  virtual ~Buffer() = default;
  int64_t bytes() const { return bytes_; }
  /// The bytes' host address where the device shares host memory (cpu), else null.
  virtual void* host_pointer() const = 0;
  /// The bytes' address in the device's own address space where it has one that other
  /// libraries take (a CUdeviceptr on cuda, for NCCL), else 0.
  virtual uint64_t device_address() const { return 0; }

 protected:
  explicit Buffer(int64_t bytes) : bytes_(bytes) {}

 private:
  int64_t bytes_;
};

/// `bytes` bytes at `offset` in `buffer` (not owned).
struct BufferRange {
  Buffer* buffer = nullptr;
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// A whole buffer as a range.
inline BufferRange WholeBuffer(Buffer& buffer) { return BufferRange{&buffer, 0, buffer.bytes()}; }

/// Whether `r` names a buffer and lies inside it.
bool InsideItsBuffer(const BufferRange& r);
/// InvalidArgument "<what>: bytes [a, b) lie outside the buffer of n bytes" unless InsideItsBuffer:
/// the check every driver makes of a range it is handed.
absl::Status CheckRange(const BufferRange& r, std::string_view what);

/// A kernel or builtin argument: a buffer range or a scalar by value.
struct KernelArg {
  bool is_buffer = true;
  BufferRange buffer;
  Scalar scalar;

  static KernelArg Of(BufferRange range) { return KernelArg{true, range, {}}; }
  static KernelArg Of(Scalar s) { return KernelArg{false, {}, s}; }
};

/// A kernel of a loaded module (owned by the module).
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& symbol() const = 0;
};

class Module {
 public:
  virtual ~Module() = default;
  /// NotFound naming the symbol and the module when absent.
  virtual absl::StatusOr<Kernel*> FindKernel(std::string_view symbol) = 0;
};

struct LaunchConfig {
  std::array<int64_t, 3> grid = {1, 1, 1};   // workgroups per dimension
  std::array<int64_t, 3> block = {1, 1, 1};  // work-items per workgroup
  int64_t workgroup_bytes = 0;               // dynamic workgroup memory
};

/// A recorded sequence of device work. Recording checks and prepares everything (argument
/// kinds and sizes, sub-buffers, a builtin's workspace); Device::Submit then only enqueues.
/// Every command carries a label (the op it computes) for profiles and errors.
class CommandBuffer {
 public:
  virtual ~CommandBuffer() = default;
  virtual absl::Status AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                                 std::string_view label) = 0;
  virtual absl::Status AddCopy(BufferRange dst, BufferRange src, std::string_view label) = 0;
  /// Every 32-bit word of `dst` (a whole number of them) set to `pattern`.
  virtual absl::Status AddFill(BufferRange dst, uint32_t pattern, std::string_view label) = 0;
  /// A kernel the driver provides by name; Unimplemented naming the driver and builtin when
  /// it has none of that name.
  virtual absl::Status AddBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                  std::string_view label) = 0;
  /// Host work in stream order (collectives): runs when every earlier command is done;
  /// later commands start after it returns. A non-OK status fails the submission.
  virtual absl::Status AddHostCall(std::function<absl::Status()> call, std::string_view label) = 0;
  virtual int64_t size() const = 0;
};

/// Elapsed time between two points of a device's stream.
class Marker {
 public:
  virtual ~Marker() = default;
};

struct ProfileEntry {
  std::string label;
  int64_t calls = 0;
  double seconds = 0;
};

/// A driver's per-label profile: calls and seconds summed by label, in the order labels were
/// first seen (what TakeProfile returns).
class ProfileTable {
 public:
  void Add(const std::string& label, double seconds);
  /// The entries so far; the table starts empty again.
  std::vector<ProfileEntry> Take();

 private:
  std::vector<ProfileEntry> entries_;
  std::map<std::string, size_t> index_;
};

class Device {
 public:
  virtual ~Device() = default;

  /// The driver: "cpu", "opencl".
  virtual std::string driver() const = 0;
  /// What it runs on, for logs: "cpu: 2 threads", "opencl: PoCL 3.1, pthread-skylake-avx512 (2 compute units)".
  virtual std::string name() const = 0;
  virtual const DeviceLimits& limits() const = 0;

  /// `bytes` of device memory, contents undefined. ResourceExhausted naming the bytes asked
  /// for and the bytes available when it does not fit.
  virtual absl::StatusOr<std::unique_ptr<Buffer>> Allocate(int64_t bytes) = 0;
  /// A buffer over the caller's host memory, which must outlive it (the cpu driver binds the
  /// ParamStore's weights this way, with no copy). Unimplemented on drivers that cannot.
  virtual absl::StatusOr<std::unique_ptr<Buffer>> WrapHostMemory(void* data, int64_t bytes) = 0;
  /// Blocking copies between host memory and `range` (after earlier submitted work).
  virtual absl::Status Upload(BufferRange dst, const void* src) = 0;
  virtual absl::Status Download(void* dst, BufferRange src) = 0;
  /// The buffer's contents may be dropped until it is written again (the cpu driver gives the
  /// pages back to the OS). A hint: drivers that cannot do nothing.
  virtual absl::Status Discard(Buffer& buffer) = 0;

  /// Loads a kernel module. A module that fails to build is an error naming `name` and
  /// carrying the driver's build log; a format the driver cannot run is Unimplemented.
  virtual absl::StatusOr<std::unique_ptr<Module>> LoadModule(ModuleFormat format, std::string_view bytes,
                                                             std::string_view name) = 0;

  virtual absl::StatusOr<std::unique_ptr<CommandBuffer>> CreateCommandBuffer() = 0;
  /// Enqueues the recorded commands; may return before they finish.
  virtual absl::Status Submit(CommandBuffer& commands) = 0;
  /// Waits for everything submitted; returns the first error any of it met.
  virtual absl::Status Synchronize() = 0;

  /// A point in the stream, passed when the work submitted before it is done.
  virtual absl::StatusOr<std::unique_ptr<Marker>> RecordMarker() = 0;
  /// Seconds between two markers of this device (synchronizes).
  virtual absl::StatusOr<double> ElapsedSeconds(const Marker& start, const Marker& end) = 0;

  /// Per-label time of every command run since the last call (DeviceOptions::profile),
  /// in first-run order; empty when profiling is off.
  virtual std::vector<ProfileEntry> TakeProfile() = 0;
};

struct DeviceOptions {
  /// cpu: kernel threads (0: the machine's cores, kernels::NumThreads()).
  int num_threads = 0;
  /// Time every command by label (TakeProfile). Costs a synchronisation per command.
  bool profile = false;
};

/// "cpu", "opencl" or "opencl:<n>" (the n-th device over all platforms, 0 first), "cuda" or
/// "cuda:<n>". An unknown
/// driver, or an OpenCL runtime with no platform or device, is InvalidArgument naming the
/// spec and what was found (the message is meant for a --device flag's error).
absl::StatusOr<std::unique_ptr<Device>> CreateDevice(std::string_view spec, const DeviceOptions& options = {});

/// The drivers compiled into this binary, and for each whether it can open a device here:
/// "cpu: available", "opencl: available (PoCL 3.1: 1 device)", "opencl: no platform (ocl-icd found no ICD)".
std::vector<std::string> DescribeDrivers();

}  // namespace gpt_sft::runtime::device

#endif  // GPT_SFT_RUNTIME_DEVICE_DEVICE_H_
