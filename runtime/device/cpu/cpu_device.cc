// Implements the cpu driver: host buffers, shared-object modules through a memfd and
// dlopen, and command buffers of closures run in order.
#include "runtime/device/cpu/cpu_device.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/device/cpu/host_builtins.h"
#include "runtime/device/cpu/host_memory.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

/// Elements per chunk of a range kernel: a few microseconds of work, well above the pool's
/// hand-off cost.
constexpr int64_t kRangeGrain = 16384;

class HostBuffer : public Buffer {
 public:
  // Reports the bytes asked for, not the mapping's rounded size: ranges are checked against it.
  HostBuffer(HostMemory memory, int64_t bytes) : Buffer(bytes), memory_(std::move(memory)), data_(memory_.data()) {}
  HostBuffer(void* data, int64_t bytes) : Buffer(bytes), data_(data) {}
  void* host_pointer() const override { return data_; }
  /// Gives an owned mapping's pages back; wrapped memory is the caller's.
  absl::Status Discard() { return memory_.data() != nullptr ? memory_.Release() : absl::OkStatus(); }

 private:
  HostMemory memory_;
  void* data_;
};

using RangeKernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end);

class HostKernel : public Kernel {
 public:
  HostKernel(std::string symbol, RangeKernelFn fn) : symbol_(std::move(symbol)), fn_(fn) {}
  const std::string& symbol() const override { return symbol_; }
  RangeKernelFn fn() const { return fn_; }

 private:
  std::string symbol_;
  RangeKernelFn fn_;
};

class HostModule : public Module {
 public:
  HostModule(std::string name, void* handle, int fd) : name_(std::move(name)), handle_(handle), fd_(fd) {}
  ~HostModule() override {
    kernels_.clear();
    if (handle_ != nullptr) dlclose(handle_);
    if (fd_ >= 0) close(fd_);
  }

  absl::StatusOr<Kernel*> FindKernel(std::string_view symbol) override {
    const std::string key(symbol);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second.get();
    void* fn = dlsym(handle_, key.c_str());
    if (fn == nullptr) return absl::NotFoundError(absl::StrCat("module '", name_, "' has no kernel '", key, "'"));
    auto kernel = std::make_unique<HostKernel>(key, reinterpret_cast<RangeKernelFn>(fn));
    Kernel* out = kernel.get();
    kernels_.emplace(key, std::move(kernel));
    return out;
  }

 private:
  std::string name_;
  void* handle_;
  int fd_;
  std::map<std::string, std::unique_ptr<HostKernel>> kernels_;
};

class CpuDevice;

class CpuCommandBuffer : public CommandBuffer {
 public:
  explicit CpuCommandBuffer(CpuDevice* device) : device_(device) {}

  absl::Status AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                         std::string_view label) override;
  absl::Status AddCopy(BufferRange dst, BufferRange src, std::string_view label) override;
  absl::Status AddFill(BufferRange dst, uint32_t pattern, std::string_view label) override;
  absl::Status AddBuiltin(std::string_view name, absl::Span<const KernelArg> args, std::string_view label) override;
  absl::Status AddHostCall(std::function<absl::Status()> call, std::string_view label) override {
    commands_.push_back({std::string(label), std::move(call)});
    return absl::OkStatus();
  }
  int64_t size() const override { return static_cast<int64_t>(commands_.size()); }

  struct Command {
    std::string label;
    std::function<absl::Status()> run;
  };
  const std::vector<Command>& commands() const { return commands_; }

 private:
  CpuDevice* device_;
  std::vector<Command> commands_;
};

class CpuMarker : public Marker {
 public:
  explicit CpuMarker(std::chrono::steady_clock::time_point t) : time(t) {}
  std::chrono::steady_clock::time_point time;
};

class CpuDevice : public Device {
 public:
  explicit CpuDevice(const DeviceOptions& options) : profile_(options.profile) {
    if (options.num_threads > 0) kernels::SetNumThreads(options.num_threads);
    limits_.max_workgroup_size = 1;
    limits_.max_workgroup_dims = {1, 1, 1};
    limits_.max_allocation_bytes = int64_t{1} << 46;
    limits_.total_memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    limits_.buffer_alignment = 1;
    limits_.compute_units = kernels::NumThreads();
  }

  std::string driver() const override { return "cpu"; }
  std::string name() const override {
    return absl::StrCat("cpu: ", kernels::NumThreads(), " thread", kernels::NumThreads() == 1 ? "" : "s");
  }
  const DeviceLimits& limits() const override { return limits_; }

  absl::StatusOr<std::unique_ptr<Buffer>> Allocate(int64_t bytes) override {
    absl::StatusOr<HostMemory> memory = HostMemory::Map(std::max<int64_t>(bytes, 1));
    if (!memory.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat("the cpu device cannot allocate ", bytes, " bytes (",
                                                       limits_.total_memory_bytes, " bytes of RAM): ",
                                                       memory.status().message()));
    }
    return std::unique_ptr<Buffer>(new HostBuffer(*std::move(memory), bytes));
  }

  absl::StatusOr<std::unique_ptr<Buffer>> WrapHostMemory(void* data, int64_t bytes) override {
    return std::unique_ptr<Buffer>(new HostBuffer(data, bytes));
  }

  absl::Status Upload(BufferRange dst, const void* src) override {
    if (absl::Status s = CheckRange(dst, "upload"); !s.ok()) return s;
    std::memcpy(At(dst), src, dst.bytes);
    return absl::OkStatus();
  }

  absl::Status Download(void* dst, BufferRange src) override {
    if (absl::Status s = CheckRange(src, "download"); !s.ok()) return s;
    std::memcpy(dst, At(src), src.bytes);
    return absl::OkStatus();
  }

  absl::Status Discard(Buffer& buffer) override { return static_cast<HostBuffer&>(buffer).Discard(); }

  absl::StatusOr<std::unique_ptr<Module>> LoadModule(ModuleFormat format, std::string_view bytes,
                                                     std::string_view name) override;

  absl::StatusOr<std::unique_ptr<CommandBuffer>> CreateCommandBuffer() override {
    return std::unique_ptr<CommandBuffer>(new CpuCommandBuffer(this));
  }

  absl::Status Submit(CommandBuffer& commands) override {
    for (const CpuCommandBuffer::Command& c : static_cast<CpuCommandBuffer&>(commands).commands()) {
      const auto start = std::chrono::steady_clock::now();
      absl::Status s = c.run();
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(c.label, ": ", s.message()));
      if (profile_) profile_table_.Add(c.label, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return absl::OkStatus();
  }

  absl::Status Synchronize() override { return absl::OkStatus(); }

  absl::StatusOr<std::unique_ptr<Marker>> RecordMarker() override {
    return std::unique_ptr<Marker>(new CpuMarker(std::chrono::steady_clock::now()));
  }

  absl::StatusOr<double> ElapsedSeconds(const Marker& start, const Marker& end) override {
    return std::chrono::duration<double>(static_cast<const CpuMarker&>(end).time -
                                         static_cast<const CpuMarker&>(start).time)
        .count();
  }

  std::vector<ProfileEntry> TakeProfile() override {
    return profile_table_.Take();
  }

  /// The builtins' shared workspace, grown when a recorded call needs more (never while
  /// commands run: recording and submitting do not overlap).
  absl::Status ReserveWorkspace(int64_t bytes) {
    if (bytes <= workspace_bytes_) return absl::OkStatus();
    absl::StatusOr<HostMemory> memory = HostMemory::Map(bytes);
    if (!memory.ok()) return memory.status();
    workspace_ = *std::move(memory);
    workspace_bytes_ = bytes;
    return absl::OkStatus();
  }
  kernels::Workspace workspace() const {
    return kernels::Workspace{static_cast<char*>(workspace_.data()), workspace_bytes_};
  }

  static char* At(const BufferRange& r) { return static_cast<char*>(r.buffer->host_pointer()) + r.offset; }


 private:
  DeviceLimits limits_;
  bool profile_;
  ProfileTable profile_table_;
  HostMemory workspace_;
  int64_t workspace_bytes_ = 0;
};

absl::StatusOr<std::unique_ptr<Module>> CpuDevice::LoadModule(ModuleFormat format, std::string_view bytes,
                                                              std::string_view name) {
  if (format != ModuleFormat::kHostSharedObject) {
    return absl::UnimplementedError(absl::StrCat("the cpu driver runs host shared objects, not ",
                                                 artifact::ModuleFormatName(format), " (module '", std::string(name),
                                                 "')"));
  }
  // dlopen wants a file: a memfd is one that never touches the disk.
  const int fd = memfd_create(std::string(name).c_str(), MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create for module '", std::string(name), "' failed"));
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      close(fd);
      return absl::InternalError(absl::StrCat("writing module '", std::string(name), "' to its memfd failed"));
    }
    done += static_cast<size_t>(n);
  }
  const std::string path = absl::StrCat("/proc/self/fd/", fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("module '", std::string(name), "' does not load: ",
                                                   error ? error : "dlopen failed"));
  }
  return std::unique_ptr<Module>(new HostModule(std::string(name), handle, fd));
}

absl::Status CpuCommandBuffer::AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                                         std::string_view label) {
  auto buffers = std::make_shared<std::vector<void*>>();
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_buffer) {
      return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": argument ", i,
                                                     " is a scalar; host range kernels take buffers only"));
    }
    if (absl::Status s = CheckRange(args[i].buffer, std::string(label)); !s.ok()) return s;
    buffers->push_back(CpuDevice::At(args[i].buffer));
  }
  const RangeKernelFn fn = static_cast<HostKernel&>(kernel).fn();
  const int64_t n = config.grid[0];
  commands_.push_back({std::string(label), [fn, buffers, n] {
                         void* const* b = buffers->data();
                         kernels::ParallelFor(n, kRangeGrain, [fn, b](int64_t begin, int64_t end) { fn(b, begin, end); });
                         return absl::OkStatus();
                       }});
  return absl::OkStatus();
}

absl::Status CpuCommandBuffer::AddCopy(BufferRange dst, BufferRange src, std::string_view label) {
  if (absl::Status s = CheckRange(dst, std::string(label)); !s.ok()) return s;
  if (absl::Status s = CheckRange(src, std::string(label)); !s.ok()) return s;
  if (dst.bytes != src.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a copy of ", src.bytes, " bytes into ",
                                                   dst.bytes));
  }
  char* to = CpuDevice::At(dst);
  const char* from = CpuDevice::At(src);
  const int64_t bytes = dst.bytes;
  commands_.push_back({std::string(label), [to, from, bytes] {
                         if (to != from) std::memmove(to, from, bytes);
                         return absl::OkStatus();
                       }});
  return absl::OkStatus();
}

absl::Status CpuCommandBuffer::AddFill(BufferRange dst, uint32_t pattern, std::string_view label) {
  if (absl::Status s = CheckRange(dst, std::string(label)); !s.ok()) return s;
  if (dst.bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a fill of ", dst.bytes,
                                                   " bytes, not whole 32-bit words"));
  }
  uint32_t* words = reinterpret_cast<uint32_t*>(CpuDevice::At(dst));
  const int64_t n = dst.bytes / 4;
  commands_.push_back({std::string(label), [words, n, pattern] {
                         if (pattern == 0) {
                           std::memset(words, 0, n * 4);
                         } else {
                           std::fill(words, words + n, pattern);
                         }
                         return absl::OkStatus();
                       }});
  return absl::OkStatus();
}

absl::Status CpuCommandBuffer::AddBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                          std::string_view label) {
  const HostBuiltin* builtin = FindHostBuiltin(name);
  if (builtin == nullptr) {
    return absl::UnimplementedError(absl::StrCat(std::string(label), ": the cpu driver has no builtin '",
                                                 std::string(name), "'"));
  }
  std::vector<HostArg> host_args;
  for (const KernelArg& a : args) {
    HostArg h;
    h.is_buffer = a.is_buffer;
    if (a.is_buffer) {
      if (absl::Status s = CheckRange(a.buffer, std::string(label)); !s.ok()) return s;
      h.data = CpuDevice::At(a.buffer);
      h.bytes = a.buffer.bytes;
    } else {
      h.scalar = a.scalar;
    }
    host_args.push_back(h);
  }
  absl::StatusOr<int64_t> workspace = builtin->prepare(host_args, kernels::NumThreads());
  if (!workspace.ok()) {
    return absl::Status(workspace.status().code(), absl::StrCat(std::string(label), ": ", workspace.status().message()));
  }
  if (absl::Status s = device_->ReserveWorkspace(kernels::RoundUpToWorkspaceAlignment(*workspace)); !s.ok()) return s;
  CpuDevice* device = device_;
  commands_.push_back({std::string(label), [builtin, host_args = std::move(host_args), device] {
                         return builtin->run(host_args, device->workspace());
                       }});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> CreateCpuDevice(const DeviceOptions& options) {
  return std::unique_ptr<Device>(new CpuDevice(options));
}

}  // namespace gpt_sft::runtime::device::cpu
