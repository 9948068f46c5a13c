// Implements the opencl driver: device discovery, buffers and sub-buffers, SPIR programs,
// command buffers of prepared kernels, markers and the profile.
#include "runtime/device/opencl/opencl_device.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/device/gemm_builtin.h"
#include "runtime/device/opencl/clblast_api.h"
#include "runtime/device/opencl/opencl_api.h"

namespace gpt_sft::runtime::device::opencl {
namespace {

absl::Status ClError(cl_int code, std::string_view call, std::string_view what) {
  const absl::StatusCode status = code == CL_OUT_OF_RESOURCES || code == CL_OUT_OF_HOST_MEMORY ||
                                          code == CL_MEM_OBJECT_ALLOCATION_FAILURE
                                      ? absl::StatusCode::kResourceExhausted
                                      : absl::StatusCode::kInternal;
  return absl::Status(status, absl::StrCat(std::string(what), ": ", std::string(call), " failed with ",
                                           ClErrorName(code)));
}

std::string DeviceString(const OpenClApi& cl, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (cl.GetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "?";
  std::string s(n, '\0');
  cl.GetDeviceInfo(d, what, n, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string PlatformString(const OpenClApi& cl, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (cl.GetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "?";
  std::string s(n, '\0');
  cl.GetPlatformInfo(p, what, n, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
T DeviceValue(const OpenClApi& cl, cl_device_id d, cl_device_info what) {
  T value{};
  cl.GetDeviceInfo(d, what, sizeof(T), &value, nullptr);
  return value;
}

struct Found {
  cl_platform_id platform;
  cl_device_id device;
  std::string description;
};

/// Every device of every platform, in order; or why there is none.
absl::StatusOr<std::vector<Found>> Discover(const OpenClApi& cl) {
  cl_uint platforms = 0;
  if (cl_int e = cl.GetPlatformIDs(0, nullptr, &platforms); e != CL_SUCCESS || platforms == 0) {
    return absl::NotFoundError(
        "no OpenCL platform (the ocl-icd loader found no ICD: install pocl-opencl-icd for the CPU, or a GPU driver)");
  }
  std::vector<cl_platform_id> ids(platforms);
  cl.GetPlatformIDs(platforms, ids.data(), nullptr);
  std::vector<Found> found;
  for (cl_platform_id p : ids) {
    cl_uint n = 0;
    if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> devices(n);
    cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      // "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, ...": the part before the build flags.
      std::string version = PlatformString(cl, p, CL_PLATFORM_VERSION);
      version = version.substr(0, version.find(','));
      found.push_back({p, d,
                       absl::StrCat(version, ": ",
                                    DeviceString(cl, d, CL_DEVICE_NAME), " (",
                                    DeviceValue<cl_uint>(cl, d, CL_DEVICE_MAX_COMPUTE_UNITS), " compute units)")});
    }
  }
  if (found.empty()) return absl::NotFoundError("the OpenCL platforms have no device");
  return found;
}

class ClBuffer : public Buffer {
 public:
  ClBuffer(const OpenClApi* cl, cl_mem mem, int64_t bytes) : Buffer(bytes), cl_(cl), mem_(mem) {}
  ~ClBuffer() override {
    for (auto& [range, sub] : subs_) cl_->ReleaseMemObject(sub);
    cl_->ReleaseMemObject(mem_);
  }
  void* host_pointer() const override { return nullptr; }
  cl_mem mem() const { return mem_; }

  /// The cl_mem of [offset, offset + bytes): the buffer itself, or a sub-buffer made once.
  absl::StatusOr<cl_mem> Range(int64_t offset, int64_t bytes, int64_t alignment, std::string_view what) {
    if (offset == 0 && bytes == this->bytes()) return mem_;
    if (offset % alignment != 0) {
      return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": a buffer argument at offset ", offset,
                                                     " is not a multiple of the device's ", alignment,
                                                     "-byte base alignment (compile for this target)"));
    }
    auto key = std::make_pair(offset, bytes);
    if (auto it = subs_.find(key); it != subs_.end()) return it->second;
    cl_buffer_region region{static_cast<size_t>(offset), static_cast<size_t>(std::max<int64_t>(bytes, 1))};
    cl_int e = CL_SUCCESS;
    cl_mem sub = cl_->CreateSubBuffer(mem_, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
    if (e != CL_SUCCESS) return ClError(e, "clCreateSubBuffer", what);
    subs_.emplace(key, sub);
    return sub;
  }

 private:
  const OpenClApi* cl_;
  cl_mem mem_;
  std::map<std::pair<int64_t, int64_t>, cl_mem> subs_;
};

class ClKernel : public Kernel {
 public:
  ClKernel(std::string symbol, cl_program program) : symbol_(std::move(symbol)), program_(program) {}
  const std::string& symbol() const override { return symbol_; }
  cl_program program() const { return program_; }

 private:
  std::string symbol_;
  cl_program program_;
};

class ClModule : public Module {
 public:
  ClModule(const OpenClApi* cl, std::string name, cl_program program) : cl_(cl), name_(std::move(name)), program_(program) {}
  ~ClModule() override {
    kernels_.clear();
    cl_->ReleaseProgram(program_);
  }
  absl::StatusOr<Kernel*> FindKernel(std::string_view symbol) override {
    const std::string key(symbol);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second.get();
    cl_int e = CL_SUCCESS;
    cl_kernel probe = cl_->CreateKernel(program_, key.c_str(), &e);
    if (e != CL_SUCCESS) {
      return absl::NotFoundError(absl::StrCat("module '", name_, "' has no kernel '", key, "' (", ClErrorName(e), ")"));
    }
    cl_->ReleaseKernel(probe);
    auto kernel = std::make_unique<ClKernel>(key, program_);
    Kernel* out = kernel.get();
    kernels_.emplace(key, std::move(kernel));
    return out;
  }

 private:
  const OpenClApi* cl_;
  std::string name_;
  cl_program program_;
  std::map<std::string, std::unique_ptr<ClKernel>> kernels_;
};

class ClDevice;

/// One recorded command: enqueue (given the queue and where to put its event) or a host call.
struct ClCommand {
  std::string label;
  std::function<cl_int(cl_command_queue, cl_event*)> enqueue;  // null for a host call
  std::function<absl::Status()> host_call;
};

class ClCommandBuffer : public CommandBuffer {
 public:
  explicit ClCommandBuffer(ClDevice* device) : device_(device) {}
  ~ClCommandBuffer() override;

  absl::Status AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                         std::string_view label) override;
  absl::Status AddCopy(BufferRange dst, BufferRange src, std::string_view label) override;
  absl::Status AddFill(BufferRange dst, uint32_t pattern, std::string_view label) override;
  absl::Status AddBuiltin(std::string_view name, absl::Span<const KernelArg> args, std::string_view label) override;
  absl::Status AddHostCall(std::function<absl::Status()> call, std::string_view label) override {
    commands_.push_back({std::string(label), nullptr, std::move(call)});
    return absl::OkStatus();
  }
  int64_t size() const override { return static_cast<int64_t>(commands_.size()); }
  const std::vector<ClCommand>& commands() const { return commands_; }

 private:
  ClDevice* device_;
  std::vector<ClCommand> commands_;
  std::vector<cl_kernel> kernels_;  // owned: one per recorded launch
  std::vector<cl_mem> widened_;     // owned: the f32 copies of gemm.bf16 operands
};

class ClMarker : public Marker {
 public:
  ClMarker(const OpenClApi* cl, cl_event event) : cl_(cl), event(event) {}
  ~ClMarker() override { cl_->ReleaseEvent(event); }
  const OpenClApi* cl_;
  cl_event event;
};

class ClDevice : public Device {
 public:
  ClDevice(const OpenClApi* cl, const Found& found, cl_context context, cl_command_queue queue, bool profile)
      : cl_(cl), device_(found.device), context_(context), queue_(queue), description_(found.description),
        profile_(profile) {
    limits_.max_workgroup_size = static_cast<int64_t>(DeviceValue<size_t>(*cl, device_, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    size_t dims[3] = {1, 1, 1};
    cl->GetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dims), dims, nullptr);
    limits_.max_workgroup_dims = {static_cast<int64_t>(dims[0]), static_cast<int64_t>(dims[1]),
                                  static_cast<int64_t>(dims[2])};
    limits_.max_workgroup_memory_bytes = static_cast<int64_t>(DeviceValue<cl_ulong>(*cl, device_, CL_DEVICE_LOCAL_MEM_SIZE));
    limits_.max_allocation_bytes = static_cast<int64_t>(DeviceValue<cl_ulong>(*cl, device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
    limits_.total_memory_bytes = static_cast<int64_t>(DeviceValue<cl_ulong>(*cl, device_, CL_DEVICE_GLOBAL_MEM_SIZE));
    limits_.buffer_alignment =
        std::max<int64_t>(1, DeviceValue<cl_uint>(*cl, device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
    limits_.compute_units = static_cast<int>(DeviceValue<cl_uint>(*cl, device_, CL_DEVICE_MAX_COMPUTE_UNITS));
  }
  ~ClDevice() override {
    cl_->Finish(queue_);
    ReleasePending();
    cl_->ReleaseCommandQueue(queue_);
    cl_->ReleaseContext(context_);
  }

  std::string driver() const override { return "opencl"; }
  std::string name() const override { return "opencl: " + description_; }
  const DeviceLimits& limits() const override { return limits_; }
  const OpenClApi& cl() const { return *cl_; }

  absl::StatusOr<std::unique_ptr<Buffer>> Allocate(int64_t bytes) override {
    if (bytes > limits_.max_allocation_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("opencl: ", bytes, " bytes asked for; the device allows ",
                                                       limits_.max_allocation_bytes, " in one buffer (",
                                                       limits_.total_memory_bytes, " in all)"));
    }
    cl_int e = CL_SUCCESS;
    cl_mem mem = cl_->CreateBuffer(context_, CL_MEM_READ_WRITE, static_cast<size_t>(std::max<int64_t>(bytes, 1)), nullptr, &e);
    if (e != CL_SUCCESS) {
      return absl::ResourceExhaustedError(absl::StrCat("opencl: allocating ", bytes, " bytes failed with ",
                                                       ClErrorName(e), " (", limits_.total_memory_bytes,
                                                       " bytes of device memory)"));
    }
    return std::unique_ptr<Buffer>(new ClBuffer(cl_, mem, bytes));
  }

  absl::StatusOr<std::unique_ptr<Buffer>> WrapHostMemory(void*, int64_t) override {
    return absl::UnimplementedError("the opencl driver keeps its buffers in device memory");
  }

  absl::Status Upload(BufferRange dst, const void* src) override {
    if (absl::Status s = CheckRange(dst, "upload"); !s.ok()) return s;
    cl_int e = cl_->EnqueueWriteBuffer(queue_, Mem(dst), CL_TRUE, dst.offset, dst.bytes, src, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? absl::OkStatus() : ClError(e, "clEnqueueWriteBuffer", "upload");
  }

  absl::Status Download(void* dst, BufferRange src) override {
    if (absl::Status s = CheckRange(src, "download"); !s.ok()) return s;
    cl_int e = cl_->EnqueueReadBuffer(queue_, Mem(src), CL_TRUE, src.offset, src.bytes, dst, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? absl::OkStatus() : ClError(e, "clEnqueueReadBuffer", "download");
  }

  absl::Status Discard(Buffer&) override { return absl::OkStatus(); }

  absl::StatusOr<std::unique_ptr<Module>> LoadModule(ModuleFormat format, std::string_view bytes,
                                                     std::string_view name) override;

  absl::StatusOr<std::unique_ptr<CommandBuffer>> CreateCommandBuffer() override {
    return std::unique_ptr<CommandBuffer>(new ClCommandBuffer(this));
  }

  absl::Status Submit(CommandBuffer& commands) override {
    for (const ClCommand& c : static_cast<ClCommandBuffer&>(commands).commands()) {
      if (c.enqueue == nullptr) {
        if (absl::Status s = Synchronize(); !s.ok()) return s;
        if (absl::Status s = c.host_call(); !s.ok()) return absl::Status(s.code(), absl::StrCat(c.label, ": ", s.message()));
        continue;
      }
      cl_event event = nullptr;
      cl_int e = c.enqueue(queue_, profile_ ? &event : nullptr);
      if (e != CL_SUCCESS) return ClError(e, "enqueueing", c.label);
      if (event != nullptr) pending_.push_back({c.label, event});
    }
    return absl::OkStatus();
  }

  absl::Status Synchronize() override {
    cl_int e = cl_->Finish(queue_);
    if (e != CL_SUCCESS) return ClError(e, "clFinish", "synchronize");
    AccountPending();
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Marker>> RecordMarker() override {
    cl_event event = nullptr;
    cl_int e = cl_->EnqueueMarkerWithWaitList(queue_, 0, nullptr, &event);
    if (e != CL_SUCCESS) return ClError(e, "clEnqueueMarkerWithWaitList", "marker");
    return std::unique_ptr<Marker>(new ClMarker(cl_, event));
  }

  absl::StatusOr<double> ElapsedSeconds(const Marker& start, const Marker& end) override {
    const cl_event events[2] = {static_cast<const ClMarker&>(start).event, static_cast<const ClMarker&>(end).event};
    if (cl_int e = cl_->WaitForEvents(2, events); e != CL_SUCCESS) return ClError(e, "clWaitForEvents", "markers");
    cl_ulong t[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      cl_int e = cl_->GetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &t[i], nullptr);
      if (e != CL_SUCCESS) return ClError(e, "clGetEventProfilingInfo", "markers");
    }
    return (static_cast<double>(t[1]) - static_cast<double>(t[0])) * 1e-9;
  }

  std::vector<ProfileEntry> TakeProfile() override {
    cl_->Finish(queue_);
    AccountPending();
    return profile_table_.Take();
  }

  static cl_mem Mem(const BufferRange& r) { return static_cast<ClBuffer*>(r.buffer)->mem(); }
  absl::StatusOr<cl_mem> ArgMem(const BufferRange& r, std::string_view what) {
    if (absl::Status s = CheckRange(r, what); !s.ok()) return s;
    return static_cast<ClBuffer*>(r.buffer)->Range(r.offset, r.bytes, limits_.buffer_alignment, what);
  }
  cl_context context() const { return context_; }

 private:
  void AccountPending() {
    for (auto& [label, event] : pending_) {
      cl_ulong start = 0, end = 0;
      cl_->GetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
      cl_->GetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
      cl_->ReleaseEvent(event);
      profile_table_.Add(label, (static_cast<double>(end) - static_cast<double>(start)) * 1e-9);
    }
    pending_.clear();
  }
  void ReleasePending() {
    for (auto& [label, event] : pending_) cl_->ReleaseEvent(event);
    pending_.clear();
  }

  const OpenClApi* cl_;
  cl_device_id device_;
  cl_context context_;
  cl_command_queue queue_;
  std::string description_;
  bool profile_;
  DeviceLimits limits_;
  std::vector<std::pair<std::string, cl_event>> pending_;
  ProfileTable profile_table_;
};

absl::StatusOr<std::unique_ptr<Module>> ClDevice::LoadModule(ModuleFormat format, std::string_view bytes,
                                                             std::string_view name) {
  if (format != ModuleFormat::kSpir) {
    return absl::UnimplementedError(absl::StrCat("the opencl driver builds SPIR bitcode, not ",
                                                 artifact::ModuleFormatName(format), " (module '", std::string(name),
                                                 "')"));
  }
  const unsigned char* binary = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t size = bytes.size();
  cl_int status = CL_SUCCESS, e = CL_SUCCESS;
  cl_program program = cl_->CreateProgramWithBinary(context_, 1, &device_, &size, &binary, &status, &e);
  if (e != CL_SUCCESS) return ClError(e, "clCreateProgramWithBinary", absl::StrCat("module '", std::string(name), "'"));
  e = cl_->BuildProgram(program, 1, &device_, "-x spir -spir-std=1.2", nullptr, nullptr);
  if (e != CL_SUCCESS) {
    size_t n = 0;
    cl_->GetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n > 0) cl_->GetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    cl_->ReleaseProgram(program);
    return absl::InvalidArgumentError(absl::StrCat("module '", std::string(name), "' does not build on ", description_,
                                                   " (", ClErrorName(e), "); build log:\n", log));
  }
  return std::unique_ptr<Module>(new ClModule(cl_, std::string(name), program));
}

ClCommandBuffer::~ClCommandBuffer() {
  for (cl_kernel k : kernels_) device_->cl().ReleaseKernel(k);
  for (cl_mem m : widened_) device_->cl().ReleaseMemObject(m);
}

namespace {

/// `count` bf16 elements of `from` at byte `offset` as f32 into `to` (from its start): through
/// the host, in queue order (blocking calls on the in-order queue wait for the commands before).
cl_int WidenBf16Through(const OpenClApi* api, cl_command_queue q, cl_mem from, size_t offset, size_t count, cl_mem to) {
  std::vector<uint16_t> bits(count);
  cl_int e = api->EnqueueReadBuffer(q, from, CL_TRUE, offset, count * 2, bits.data(), 0, nullptr, nullptr);
  if (e != CL_SUCCESS) return e;
  std::vector<uint32_t> wide(count);
  for (size_t i = 0; i < count; ++i) wide[i] = static_cast<uint32_t>(bits[i]) << 16;
  return api->EnqueueWriteBuffer(q, to, CL_TRUE, 0, count * 4, wide.data(), 0, nullptr, nullptr);
}

}  // namespace

absl::Status ClCommandBuffer::AddLaunch(Kernel& kernel, const LaunchConfig& config, absl::Span<const KernelArg> args,
                                        std::string_view label) {
  const OpenClApi& cl = device_->cl();
  auto& k = static_cast<ClKernel&>(kernel);
  cl_int e = CL_SUCCESS;
  cl_kernel ck = cl.CreateKernel(k.program(), k.symbol().c_str(), &e);
  if (e != CL_SUCCESS) return ClError(e, "clCreateKernel", absl::StrCat(std::string(label), " (", k.symbol(), ")"));
  kernels_.push_back(ck);
  const std::string what = absl::StrCat(std::string(label), " (kernel ", k.symbol(), ")");
  for (cl_uint i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    if (a.is_buffer) {
      absl::StatusOr<cl_mem> mem = device_->ArgMem(a.buffer, what);
      if (!mem.ok()) return mem.status();
      e = cl.SetKernelArg(ck, i, sizeof(cl_mem), &*mem);
    } else {
      switch (a.scalar.type) {
        case Scalar::Type::kI64: { cl_long v = a.scalar.i; e = cl.SetKernelArg(ck, i, sizeof(v), &v); break; }
        case Scalar::Type::kI32: { cl_int v = static_cast<cl_int>(a.scalar.i); e = cl.SetKernelArg(ck, i, sizeof(v), &v); break; }
        case Scalar::Type::kF64: { cl_double v = a.scalar.f; e = cl.SetKernelArg(ck, i, sizeof(v), &v); break; }
        case Scalar::Type::kF32: { cl_float v = static_cast<cl_float>(a.scalar.f); e = cl.SetKernelArg(ck, i, sizeof(v), &v); break; }
      }
    }
    if (e != CL_SUCCESS) return ClError(e, absl::StrCat("clSetKernelArg ", i), what);
  }
  if (config.workgroup_bytes > 0) {
    e = cl.SetKernelArg(ck, static_cast<cl_uint>(args.size()), config.workgroup_bytes, nullptr);
    if (e != CL_SUCCESS) return ClError(e, "clSetKernelArg (workgroup memory)", what);
  }
  std::array<size_t, 3> global{}, local{};
  for (int d = 0; d < 3; ++d) {
    local[d] = static_cast<size_t>(config.block[d]);
    global[d] = static_cast<size_t>(config.grid[d] * config.block[d]);
  }
  const OpenClApi* api = &cl;
  commands_.push_back({std::string(label),
                       [api, ck, global, local](cl_command_queue q, cl_event* event) {
                         return api->EnqueueNDRangeKernel(q, ck, 3, nullptr, global.data(), local.data(), 0, nullptr,
                                                          event);
                       },
                       nullptr});
  return absl::OkStatus();
}

absl::Status ClCommandBuffer::AddCopy(BufferRange dst, BufferRange src, std::string_view label) {
  if (absl::Status s = CheckRange(dst, label); !s.ok()) return s;
  if (absl::Status s = CheckRange(src, label); !s.ok()) return s;
  if (dst.bytes != src.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a copy of ", src.bytes, " bytes into ", dst.bytes));
  }
  if (dst.bytes == 0 || (ClDevice::Mem(dst) == ClDevice::Mem(src) && dst.offset == src.offset)) return absl::OkStatus();
  const OpenClApi* api = &device_->cl();
  cl_mem from = ClDevice::Mem(src), to = ClDevice::Mem(dst);
  const size_t from_offset = src.offset, to_offset = dst.offset, bytes = dst.bytes;
  commands_.push_back({std::string(label),
                       [api, from, to, from_offset, to_offset, bytes](cl_command_queue q, cl_event* event) {
                         return api->EnqueueCopyBuffer(q, from, to, from_offset, to_offset, bytes, 0, nullptr, event);
                       },
                       nullptr});
  return absl::OkStatus();
}

absl::Status ClCommandBuffer::AddFill(BufferRange dst, uint32_t pattern, std::string_view label) {
  if (absl::Status s = CheckRange(dst, label); !s.ok()) return s;
  if (dst.bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(label), ": a fill of ", dst.bytes,
                                                   " bytes, not whole 32-bit words"));
  }
  if (dst.bytes == 0) return absl::OkStatus();
  const OpenClApi* api = &device_->cl();
  cl_mem to = ClDevice::Mem(dst);
  const size_t offset = dst.offset, bytes = dst.bytes;
  commands_.push_back({std::string(label),
                       [api, to, offset, bytes, pattern](cl_command_queue q, cl_event* event) {
                         return api->EnqueueFillBuffer(q, to, &pattern, sizeof(pattern), offset, bytes, 0, nullptr,
                                                       event);
                       },
                       nullptr});
  return absl::OkStatus();
}

/// The vendor gemm (runtime/device/GEMM_BUILTIN.md) through CLBlast's row-major Sgemm (a batch:
/// SgemmStridedBatched) on the step's queue; c_in other than c is copied into c first (CLBlast
/// accumulates in place).
absl::Status ClCommandBuffer::AddBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label) {
  absl::StatusOr<GemmCall> call = ReadGemmBuiltin(name, args, label, "opencl");
  if (!call.ok()) return call.status();
  absl::StatusOr<const ClBlastApi*> blast = ClBlastApi::Get();
  if (!blast.ok()) return absl::Status(blast.status().code(), absl::StrCat(std::string(label), ": ", blast.status().message()));
  GemmCall g = *call;
  const OpenClApi* api = &device_->cl();
  const ClBlastApi* lt = *blast;
  cl_mem a = ClDevice::Mem(g.a), b = ClDevice::Mem(g.b);
  const cl_mem c = ClDevice::Mem(g.c), c_in = ClDevice::Mem(g.c_in);
  // gemm.bf16: CLBlast has no bf16, so its operands are widened into f32 copies this command
  // buffer owns, through the host (PoCL checks the compiler's side of the contract, not speed).
  const cl_mem bf16_a = a, bf16_b = b;
  const size_t a_offset = g.a.offset, b_offset = g.b.offset;
  const size_t a_count = static_cast<size_t>(g.batch * g.M * g.K), b_count = static_cast<size_t>(g.batch * g.K * g.N);
  if (g.ab_stored_bf16) {
    for (auto [mem, count] : {std::pair{&a, a_count}, std::pair{&b, b_count}}) {
      cl_int e = CL_SUCCESS;
      *mem = api->CreateBuffer(device_->context(), CL_MEM_READ_WRITE, count * 4, nullptr, &e);
      if (e != CL_SUCCESS) return ClError(e, "clCreateBuffer", label);
      widened_.push_back(*mem);
    }
    g.a.offset = 0;
    g.b.offset = 0;
  }
  const bool copy_in = g.beta != 0 && (c_in != c || g.c_in.offset != g.c.offset);
  const size_t c_bytes = static_cast<size_t>(g.batch * g.M * g.N * 4);
  commands_.push_back({std::string(label),
                       [api, lt, g, a, b, c, c_in, copy_in, c_bytes, bf16_a, bf16_b, a_offset, b_offset, a_count,
                        b_count](cl_command_queue q, cl_event* event) -> cl_int {
                         if (g.ab_stored_bf16) {
                           cl_int e = WidenBf16Through(api, q, bf16_a, a_offset, a_count, a);
                           if (e == CL_SUCCESS) e = WidenBf16Through(api, q, bf16_b, b_offset, b_count, b);
                           if (e != CL_SUCCESS) return e;
                         }
                         if (copy_in) {
                           cl_int e = api->EnqueueCopyBuffer(q, c_in, c, g.c_in.offset, g.c.offset, c_bytes, 0,
                                                             nullptr, nullptr);
                           if (e != CL_SUCCESS) return e;
                         }
                         cl_command_queue queue = q;
                         const int ta = g.a_transposed ? kClBlastTransposeYes : kClBlastTransposeNo;
                         const int tb = g.b_transposed ? kClBlastTransposeYes : kClBlastTransposeNo;
                         const size_t lda = g.a_transposed ? g.M : g.K, ldb = g.b_transposed ? g.K : g.N;
                         const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
                         if (g.batch > 1) {
                           return lt->SgemmStridedBatched(kClBlastLayoutRowMajor, ta, tb, g.M, g.N, g.K, alpha, a,
                                                          g.a.offset / 4, lda, g.M * g.K, b, g.b.offset / 4, ldb,
                                                          g.K * g.N, beta, c, g.c.offset / 4, g.N, g.M * g.N, g.batch,
                                                          &queue, event);
                         }
                         return lt->Sgemm(kClBlastLayoutRowMajor, ta, tb, g.M, g.N, g.K, alpha, a, g.a.offset / 4, lda,
                                          b, g.b.offset / 4, ldb, beta, c, g.c.offset / 4, g.N, &queue, event);
                       },
                       nullptr});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListOpenClDevices() {
  absl::StatusOr<const OpenClApi*> cl = OpenClApi::Get();
  if (!cl.ok()) return cl.status();
  absl::StatusOr<std::vector<Found>> found = Discover(**cl);
  if (!found.ok()) return found.status();
  std::vector<std::string> out;
  for (const Found& f : *found) out.push_back(f.description);
  return out;
}

absl::StatusOr<std::unique_ptr<Device>> CreateOpenClDevice(int index, const DeviceOptions& options) {
  absl::StatusOr<const OpenClApi*> cl = OpenClApi::Get();
  if (!cl.ok()) return absl::InvalidArgumentError(absl::StrCat("opencl: ", cl.status().message()));
  absl::StatusOr<std::vector<Found>> found = Discover(**cl);
  if (!found.ok()) return absl::InvalidArgumentError(absl::StrCat("opencl: ", found.status().message()));
  if (index < 0 || index >= static_cast<int>(found->size())) {
    std::vector<std::string> list;
    for (size_t i = 0; i < found->size(); ++i) list.push_back(absl::StrCat(i, ": ", (*found)[i].description));
    return absl::InvalidArgumentError(absl::StrCat("opencl:", index, ": there are ", found->size(),
                                                   " OpenCL device(s): ", absl::StrJoin(list, "; ")));
  }
  const Found& f = (*found)[index];
  const OpenClApi& api = **cl;
  cl_int e = CL_SUCCESS;
  cl_context context = api.CreateContext(nullptr, 1, &f.device, nullptr, nullptr, &e);
  if (e != CL_SUCCESS) return ClError(e, "clCreateContext", "opencl");
  const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue queue = api.CreateCommandQueueWithProperties(context, f.device, properties, &e);
  if (e != CL_SUCCESS) {
    api.ReleaseContext(context);
    return ClError(e, "clCreateCommandQueueWithProperties", "opencl");
  }
  return std::unique_ptr<Device>(new ClDevice(&api, f, context, queue, options.profile));
}

}  // namespace gpt_sft::runtime::device::opencl
