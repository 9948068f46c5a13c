// Implements Executable: load (modules, constants, arena), slot binding and checked
// transfers, and per entry point a command buffer recorded at its first Run.
#include "runtime/executable/executable.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/collectives/communicator.h"

namespace gpt_sft::runtime {
namespace {

using artifact::BufferRef;
using artifact::ElementType;
using artifact::Launch;
using artifact::LaunchKind;

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

absl::StatusOr<collectives::DataType> CollectiveType(ElementType type) {
  switch (type) {
    case ElementType::kF32: return collectives::DataType::kFloat32;
    case ElementType::kF64: return collectives::DataType::kFloat64;
    case ElementType::kBF16: return collectives::DataType::kBFloat16;
    case ElementType::kI32: return collectives::DataType::kInt32;
    case ElementType::kI64: return collectives::DataType::kInt64;
  }
  return absl::InvalidArgumentError("unknown element type");
}

absl::StatusOr<collectives::ReduceOp> CollectiveOp(const std::string& reduction) {
  if (reduction == "sum") return collectives::ReduceOp::kSum;
  if (reduction == "avg") return collectives::ReduceOp::kAvg;
  if (reduction == "max") return collectives::ReduceOp::kMax;
  if (reduction == "min") return collectives::ReduceOp::kMin;
  return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", reduction, "'"));
}

/// Whether two ranges share a byte: by host address where the device shares host memory
/// (two wrappers of one host block are two buffers), by device address where it has one,
/// else within one buffer only (two buffers are two allocations).
bool ShareBytes(const device::BufferRange& a, const device::BufferRange& b) {
  auto overlap = [&](uint64_t a_start, uint64_t b_start) {
    return a_start < b_start + b.bytes && b_start < a_start + a.bytes;
  };
  if (a.buffer->host_pointer() != nullptr && b.buffer->host_pointer() != nullptr) {
    return overlap(reinterpret_cast<uintptr_t>(a.buffer->host_pointer()) + a.offset,
                   reinterpret_cast<uintptr_t>(b.buffer->host_pointer()) + b.offset);
  }
  if (a.buffer->device_address() != 0 && b.buffer->device_address() != 0) {
    return overlap(a.buffer->device_address() + a.offset, b.buffer->device_address() + b.offset);
  }
  return a.buffer == b.buffer && overlap(a.offset, b.offset);
}

/// The first value of `data` (integers of `type`) outside [first, end), as an error naming
/// the slot; OK when all lie inside.
absl::Status CheckRange(const artifact::TensorSpec& spec, const void* data) {
  const auto [first, end] = *spec.valid_range;
  const int64_t n = spec.elements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = spec.type == ElementType::kI32 ? static_cast<const int32_t*>(data)[i]
                                                      : static_cast<const int64_t*>(data)[i];
    if (v < first || v >= end) {
      return absl::InvalidArgumentError(absl::StrCat("'", spec.name, "': value ", v, " at flat index ", i,
                                                     " is outside [", first, ", ", end, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

/// One entry point's recorded launches, and the host staging its collectives use on drivers
/// whose memory the host cannot address.
struct Executable::Prepared {
  std::unique_ptr<device::CommandBuffer> commands;
  std::vector<std::unique_ptr<std::vector<char>>> staging;
};

Executable::Executable(artifact::Artifact artifact, device::Device* device, ExecutableOptions options)
    : artifact_(std::move(artifact)), device_(device), options_(options) {
  slots_.resize(artifact_.slots.size());
  prepared_.resize(artifact_.functions.size());
}

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Load(const artifact::Artifact& artifact,
                                                             device::Device* device, ExecutableOptions options) {
  if (absl::Status s = artifact::Validate(artifact); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("artifact ", artifact.key, ": ", s.message()));
  }
  std::unique_ptr<Executable> exe(new Executable(artifact, device, options));
  if (absl::Status s = exe->LoadModules(); !s.ok()) return s;
  if (const int64_t bytes = exe->artifact_.MaxArenaBytes(); bytes > 0) {
    absl::StatusOr<std::unique_ptr<device::Buffer>> arena = device->Allocate(bytes);
    if (!arena.ok()) return absl::Status(arena.status().code(), absl::StrCat("the step's arena: ", arena.status().message()));
    exe->arena_ = *std::move(arena);
  }
  if (!exe->artifact_.constants.empty()) {
    absl::StatusOr<std::unique_ptr<device::Buffer>> constants = device->Allocate(exe->artifact_.constants.size());
    if (!constants.ok()) return constants.status();
    exe->constants_ = *std::move(constants);
    if (absl::Status s = device->Upload(device::WholeBuffer(*exe->constants_), exe->artifact_.constants.data()); !s.ok()) {
      return s;
    }
  }
  return exe;
}

int64_t Executable::allocated_bytes() const {
  int64_t bytes = (arena_ ? arena_->bytes() : 0) + (constants_ ? constants_->bytes() : 0);
  for (const std::unique_ptr<device::Buffer>& b : owned_slots_) bytes += b ? b->bytes() : 0;
  return bytes;
}

absl::Status Executable::LoadModules() {
  for (const artifact::KernelModule& m : artifact_.modules) {
    absl::StatusOr<std::unique_ptr<device::Module>> module = device_->LoadModule(m.format, m.bytes, m.name);
    if (!module.ok()) {
      return absl::Status(module.status().code(), absl::StrCat("loading kernel module '", m.name, "' (",
                                                               artifact::ModuleFormatName(m.format), ") on ",
                                                               device_->name(), ": ", module.status().message()));
    }
    modules_.push_back(*std::move(module));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Executable::FindSlot(std::string_view name) const {
  const int slot = artifact_.FindSlot(name);
  if (slot >= 0) return slot;
  std::vector<std::string> names;
  for (const artifact::TensorSpec& s : artifact_.slots) names.push_back(s.name);
  return absl::NotFoundError(absl::StrCat("the step has no slot '", std::string(name), "' (it has: ",
                                          absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<const artifact::Function*> Executable::FindFunction(std::string_view name) const {
  if (const artifact::Function* f = artifact_.FindFunction(name)) return f;
  std::vector<std::string> names;
  for (const artifact::Function& f : artifact_.functions) names.push_back(f.name);
  return absl::NotFoundError(absl::StrCat("the step has no entry point '", std::string(name), "' (it has: ",
                                          absl::StrJoin(names, ", "), ")"));
}

absl::Status Executable::Bind(std::string_view name, device::BufferRange range) {
  absl::StatusOr<int> slot = FindSlot(name);
  if (!slot.ok()) return slot.status();
  if (recorded_any_) {
    return absl::FailedPreconditionError(absl::StrCat("slot '", std::string(name), "' bound after the first Run"));
  }
  const int64_t want = artifact_.slots[*slot].bytes();
  if (range.buffer == nullptr || range.bytes != want || range.offset < 0 ||
      range.offset + range.bytes > range.buffer->bytes()) {
    return absl::InvalidArgumentError(absl::StrCat("slot '", std::string(name), "' needs ", want,
                                                   " bytes; the range given has ", range.bytes));
  }
  // Distinct slots are distinct bytes: the compiler runs updates of differently named state
  // at once (the cpu target's muon_group), trusting that no byte of one is another's.
  for (size_t other = 0; other < slots_.size(); ++other) {
    if (static_cast<int>(other) == *slot || slots_[other].buffer == nullptr) continue;
    if (ShareBytes(range, slots_[other])) {
      return absl::InvalidArgumentError(absl::StrCat("slot '", std::string(name), "' would share bytes with slot '",
                                                     artifact_.slots[other].name,
                                                     "': bind each slot to its own memory"));
    }
  }
  slots_[*slot] = range;
  return absl::OkStatus();
}

absl::Status Executable::AllocateUnboundSlots() {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].buffer != nullptr) continue;
    const int64_t bytes = std::max<int64_t>(artifact_.slots[i].bytes(), 1);
    absl::StatusOr<std::unique_ptr<device::Buffer>> buffer = device_->Allocate(bytes);
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(),
                          absl::StrCat("slot '", artifact_.slots[i].name, "': ", buffer.status().message()));
    }
    slots_[i] = device::BufferRange{buffer->get(), 0, artifact_.slots[i].bytes()};
    owned_slots_.push_back(*std::move(buffer));
  }
  return absl::OkStatus();
}

absl::StatusOr<device::BufferRange> Executable::Slot(std::string_view name) const {
  absl::StatusOr<int> slot = FindSlot(name);
  if (!slot.ok()) return slot.status();
  if (slots_[*slot].buffer == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("slot '", std::string(name), "' is not bound"));
  }
  return slots_[*slot];
}

absl::Status Executable::Upload(std::string_view name, const void* data, int64_t bytes,
                                const std::vector<int64_t>* shape) {
  absl::StatusOr<device::BufferRange> range = Slot(name);
  if (!range.ok()) return range.status();
  const artifact::TensorSpec& spec = artifact_.slots[artifact_.FindSlot(name)];
  const std::string compiled = absl::StrCat(ShapeText(spec.shape), " ", artifact::ElementTypeName(spec.type));
  if ((shape != nullptr && *shape != spec.shape) || bytes != spec.bytes()) {
    const std::string got =
        shape != nullptr ? ShapeText(*shape) : absl::StrCat(bytes / artifact::ElementBytes(spec.type), " elements");
    return absl::InvalidArgumentError(absl::StrCat("'", spec.name, "': the step was compiled for ", compiled, ", got ",
                                                   got, " (static shapes: the compiled step never recompiles)"));
  }
  if (spec.valid_range) {
    if (absl::Status s = CheckRange(spec, data); !s.ok()) return s;
  }
  return device_->Upload(*range, data);
}

absl::Status Executable::Download(std::string_view name, void* data, int64_t bytes) {
  absl::StatusOr<device::BufferRange> range = Slot(name);
  if (!range.ok()) return range.status();
  if (bytes != range->bytes) {
    return absl::InvalidArgumentError(absl::StrCat("slot '", std::string(name), "' has ", range->bytes,
                                                   " bytes; asked for ", bytes));
  }
  return device_->Download(data, *range);
}

absl::StatusOr<device::BufferRange> Executable::Resolve(const BufferRef& ref) {
  switch (ref.space) {
    case BufferRef::Space::kArena:
      return device::BufferRange{arena_.get(), ref.offset, ref.bytes};
    case BufferRef::Space::kConstants:
      return device::BufferRange{constants_.get(), ref.offset, ref.bytes};
    case BufferRef::Space::kSlot: {
      const device::BufferRange& slot = slots_.at(ref.slot);
      if (slot.buffer == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat("slot '", artifact_.slots[ref.slot].name,
                                                          "' is not bound (Bind or AllocateUnboundSlots first)"));
      }
      return device::BufferRange{slot.buffer, slot.offset + ref.offset, ref.bytes};
    }
  }
  return absl::InternalError("unknown buffer space");
}

absl::Status Executable::RecordLaunch(const Launch& launch, Prepared& prepared) {
  device::CommandBuffer& commands = *prepared.commands;
  std::vector<device::KernelArg> args;
  for (const artifact::Arg& a : launch.args) {
    if (!a.is_buffer) {
      args.push_back(device::KernelArg::Of(a.scalar));
      continue;
    }
    absl::StatusOr<device::BufferRange> range = Resolve(a.buffer);
    if (!range.ok()) return range.status();
    args.push_back(device::KernelArg::Of(*range));
  }
  switch (launch.kind) {
    case LaunchKind::kKernel: {
      absl::StatusOr<device::Kernel*> kernel = modules_[launch.module]->FindKernel(launch.name);
      if (!kernel.ok()) return kernel.status();
      device::LaunchConfig config{launch.grid, launch.block, launch.workgroup_bytes};
      return commands.AddLaunch(**kernel, config, args, launch.op);
    }
    case LaunchKind::kBuiltin:
      // The op and the builtin that computes it (a fused one names what it absorbed), so a
      // profile or an error tells one matmul kernel from another.
      return commands.AddBuiltin(launch.name, args, absl::StrCat(launch.op, " (", launch.name, ")"));
    case LaunchKind::kCopy:
      return commands.AddCopy(args[1].buffer, args[0].buffer, launch.op);
    case LaunchKind::kFill:
      return commands.AddFill(args[0].buffer, static_cast<uint32_t>(args[1].scalar.i), launch.op);
    case LaunchKind::kCollective:
      break;
  }
  // A collective: in place on the buffer, through the host where the device's memory is not
  // the host's. One rank: nothing to do.
  collectives::Communicator* comm = options_.communicator;
  if (comm == nullptr || comm->world_size() == 1) return absl::OkStatus();
  if (launch.name != "all_reduce") {
    return absl::UnimplementedError(absl::StrCat(launch.where, ": the runtime runs all_reduce collectives only"));
  }
  absl::StatusOr<collectives::DataType> type = CollectiveType(launch.element_type);
  absl::StatusOr<collectives::ReduceOp> op = CollectiveOp(launch.reduction);
  if (!type.ok()) return type.status();
  if (!op.ok()) return op.status();
  const device::BufferRange range = args[0].buffer;
  const int64_t count = range.bytes / artifact::ElementBytes(launch.element_type);
  device::Device* device = device_;
  const std::string where = launch.where;
  // A communicator of device memory (NCCL on cuda) reduces the buffer where it is: after the
  // step's work so far (a host call synchronises the device first), before what follows.
  if (comm->memory_space() == collectives::MemorySpace::kCuda) {
    if (range.buffer->device_address() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the ", std::string(comm->backend()), " communicator reduces device ",
                                                     "memory, and the ", device_->driver(), " device has none it takes"));
    }
    void* data = reinterpret_cast<void*>(range.buffer->device_address() + static_cast<uint64_t>(range.offset));
    return commands.AddHostCall(
        [comm, data, count, type = *type, op = *op, where]() -> absl::Status {
          absl::Status s = comm->AllReduce(data, count, type, op);
          return s.ok() ? s : absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
        },
        launch.op);
  }
  if (char* host = static_cast<char*>(range.buffer->host_pointer())) {
    char* data = host + range.offset;
    return commands.AddHostCall(
        [comm, data, count, type = *type, op = *op, where]() -> absl::Status {
          absl::Status s = comm->AllReduce(data, count, type, op);
          return s.ok() ? s : absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
        },
        launch.op);
  }
  auto staging = std::make_unique<std::vector<char>>(range.bytes);
  char* data = staging->data();
  prepared.staging.push_back(std::move(staging));
  return commands.AddHostCall(
      [comm, device, range, data, count, type = *type, op = *op, where]() -> absl::Status {
        if (absl::Status s = device->Download(data, range); !s.ok()) return s;
        if (absl::Status s = comm->AllReduce(data, count, type, op); !s.ok()) {
          return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
        }
        return device->Upload(range, data);
      },
      launch.op);
}

absl::Status Executable::Record(const artifact::Function& function, Prepared& prepared) {
  for (size_t i = 0; i < function.launches.size(); ++i) {
    const Launch& launch = function.launches[i];
    if (absl::Status s = RecordLaunch(launch, prepared); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("@", function.name, " launch ", i, " (", launch.name, ", from ",
                                                 launch.where, "): ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status Executable::Run(std::string_view name) {
  absl::StatusOr<const artifact::Function*> function = FindFunction(name);
  if (!function.ok()) return function.status();
  const size_t index = *function - artifact_.functions.data();
  std::unique_ptr<Prepared>& prepared = prepared_[index];
  if (prepared == nullptr) {
    recorded_any_ = true;
    absl::StatusOr<std::unique_ptr<device::CommandBuffer>> commands = device_->CreateCommandBuffer();
    if (!commands.ok()) return commands.status();
    prepared = std::make_unique<Prepared>();
    prepared->commands = *std::move(commands);
    if (absl::Status recorded = Record(**function, *prepared); !recorded.ok()) {
      prepared.reset();
      return recorded;
    }
  }
  if (absl::Status s = device_->Submit(*prepared->commands); !s.ok()) return s;
  return device_->Synchronize();
}

absl::Status Executable::DownloadResult(std::string_view name, int index, void* data, int64_t bytes) {
  absl::StatusOr<const artifact::Function*> function = FindFunction(name);
  if (!function.ok()) return function.status();
  if (index < 0 || index >= static_cast<int>((*function)->results.size())) {
    return absl::InvalidArgumentError(absl::StrCat("@", std::string(name), " has no result ", index));
  }
  absl::StatusOr<device::BufferRange> range = Resolve((*function)->result_refs[index]);
  if (!range.ok()) return range.status();
  if (bytes != range->bytes) {
    return absl::InvalidArgumentError(absl::StrCat("@", std::string(name), " result ", index, " has ", range->bytes,
                                                   " bytes; asked for ", bytes));
  }
  return device_->Download(data, *range);
}

absl::Status Executable::ReleaseScratchMemory() {
  if (arena_ == nullptr) return absl::OkStatus();
  return device_->Discard(*arena_);
}

int64_t Executable::num_launches(std::string_view function) const {
  const artifact::Function* f = artifact_.FindFunction(function);
  return f == nullptr ? 0 : static_cast<int64_t>(f->launches.size());
}

}  // namespace gpt_sft::runtime
