// Implements HostExecutable: load (parse the schedule, link the kernels, allocate the arena, build
// the launches) and Run (check the arguments, call the launches).
#include "runtime/executable/host_executable.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/dialect/gpt_dialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "runtime/collectives/communicator.h"
#include "runtime/device/cpu/host_memory.h"
#include "runtime/executable/op_launches.h"
#include "runtime/executable/schedule.h"
#include "runtime/jit/object_library.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime {

struct HostExecutable::Impl {
  std::unique_ptr<ObjectLibrary> kernels;
  exec::OwnedMemory owned;
  device::cpu::HostMemory arena_memory;
  void* arena = nullptr;  // Addresses point at this pointer
  exec::OwnedBuffer workspace_memory;
  void* workspace = nullptr;  // WorkspaceRefs point at this pointer
  std::vector<std::unique_ptr<exec::Schedule>> schedules;
  bool profile = false;
  std::map<std::string, LaunchProfileEntry> profile_by_op;

  exec::Schedule* Find(std::string_view name) const {
    for (const auto& s : schedules) {
      if (s->name == name) return s.get();
    }
    return nullptr;
  }
  absl::Status NotFound(std::string_view name) const {
    std::vector<std::string> names;
    for (const auto& s : schedules) names.push_back(s->name);
    return absl::NotFoundError(absl::StrCat("the compiled step has no entry point @", std::string(name),
                                            " (it has @", absl::StrJoin(names, ", @"), ")"));
  }
};

namespace {

std::string SpecString(DType dtype, const Shape& shape) { return ShapeToString(shape) + " " + DTypeName(dtype); }

}  // namespace

HostExecutable::HostExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostExecutable::~HostExecutable() = default;

absl::StatusOr<std::unique_ptr<HostExecutable>> HostExecutable::Load(const compiler::StepArtifact& artifact,
                                                             HostExecutableOptions options) {
  if (options.num_threads > 0) kernels::SetNumThreads(options.num_threads);
  auto impl = std::make_unique<Impl>();
  impl->profile = options.profile;
  absl::StatusOr<std::unique_ptr<ObjectLibrary>> kernels = ObjectLibrary::Load(artifact.kernels.object);
  if (!kernels.ok()) {
    return absl::Status(kernels.status().code(), absl::StrCat("compiled step ", artifact.key,
                                                              ": loading its kernels: ", kernels.status().message()));
  }
  impl->kernels = *std::move(kernels);

  // The IR is needed only to build the launches; nothing of MLIR stays once they exist.
  mlir::MLIRContext context;
  context.loadDialect<compiler::gpt::GptDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::linalg::LinalgDialect, mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(artifact.step_ir, &context);
  if (!module) return absl::DataLossError(absl::StrCat("compiled step ", artifact.key, ": its IR does not parse"));

  const int64_t built_for = [&]() -> int64_t {
    auto a = (*module)->getAttrOfType<mlir::IntegerAttr>("gpt.dp_world_size");
    return a ? a.getInt() : 1;
  }();
  const int world = options.communicator ? options.communicator->world_size() : 1;
  if (built_for != world) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compiled step ", artifact.key, " was built for ", built_for, " data-parallel rank(s) but runs on ", world,
        options.communicator ? absl::StrCat(" (", std::string(options.communicator->backend()), " communicator)")
                             : std::string(" (no communicator given)"),
        "; build the step with StepConfig::dp_world_size equal to the world size"));
  }
  if (options.communicator && options.communicator->memory_space() != collectives::MemorySpace::kHost) {
    return absl::FailedPreconditionError(absl::StrCat("compiled step ", artifact.key, ": the CPU executable needs a ",
                                                      "host-memory communicator, got ",
                                                      std::string(options.communicator->backend())));
  }

  std::vector<mlir::func::FuncOp> funcs;
  int64_t arena_bytes = 0;
  for (auto func : module->getOps<mlir::func::FuncOp>()) {
    if (func.isExternal()) continue;
    funcs.push_back(func);
    if (auto a = func->getAttrOfType<mlir::IntegerAttr>("gpt.arena_bytes")) arena_bytes = std::max(arena_bytes, a.getInt());
  }
  if (arena_bytes > 0) {
    absl::StatusOr<device::cpu::HostMemory> arena = device::cpu::HostMemory::Map(arena_bytes);
    if (!arena.ok()) return arena.status();
    impl->arena_memory = *std::move(arena);
    impl->arena = impl->arena_memory.data();
  }
  exec::LaunchBuilder builder(&impl->arena, &impl->workspace, impl->kernels.get(), &impl->owned,
                             options.communicator);
  for (mlir::func::FuncOp func : funcs) {
    absl::StatusOr<std::unique_ptr<exec::Schedule>> schedule = builder.Build(func);
    if (!schedule.ok()) {
      return absl::Status(schedule.status().code(),
                          absl::StrCat("compiled step ", artifact.key, ": ", schedule.status().message()));
    }
    impl->schedules.push_back(*std::move(schedule));
  }
  // The kernels' scratch, one block for every launch (they run one at a time); never
  // empty, so a launch's Workspace is never mistaken for a size query (workspace.h).
  const int64_t workspace_bytes = std::max<int64_t>(kernels::kWorkspaceAlignment, builder.workspace_bytes());
  impl->workspace_memory.reset(static_cast<char*>(std::aligned_alloc(kernels::kWorkspaceAlignment, workspace_bytes)));
  if (!impl->workspace_memory) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the step's kernel workspace of ", workspace_bytes, " bytes"));
  }
  impl->workspace = impl->workspace_memory.get();
  std::unique_ptr<HostExecutable> exe(new HostExecutable(std::move(impl)));
  exe->key_ = artifact.key;
  exe->arena_bytes_ = arena_bytes;
  exe->owned_bytes_ = exe->impl_->owned.bytes;
  exe->workspace_bytes_ = workspace_bytes;
  return exe;
}

std::vector<std::string> HostExecutable::Functions() const {
  std::vector<std::string> names;
  for (const auto& s : impl_->schedules) names.push_back(s->name);
  return names;
}

absl::StatusOr<const std::vector<BufferSpec>*> HostExecutable::Arguments(std::string_view function) const {
  const exec::Schedule* s = impl_->Find(function);
  if (s == nullptr) return impl_->NotFound(function);
  return &s->args;
}

absl::StatusOr<const std::vector<BufferSpec>*> HostExecutable::Results(std::string_view function) const {
  const exec::Schedule* s = impl_->Find(function);
  if (s == nullptr) return impl_->NotFound(function);
  return &s->results;
}

absl::Status HostExecutable::Run(std::string_view function, const std::vector<Tensor>& args) {
  exec::Schedule* s = impl_->Find(function);
  if (s == nullptr) return impl_->NotFound(function);
  if (args.size() != s->args.size()) {
    return absl::InvalidArgumentError(absl::StrCat("@", s->name, " takes ", s->args.size(), " arguments, got ",
                                                   args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const BufferSpec& spec = s->args[i];
    if (!args[i].defined() || args[i].dtype() != spec.dtype || args[i].shape() != spec.shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "@", s->name, " argument ", i, " (", spec.name, "): compiled for ", SpecString(spec.dtype, spec.shape),
          ", got ", args[i].defined() ? SpecString(args[i].dtype(), args[i].shape()) : std::string("no tensor"),
          ". The compiled step runs the one shape it was compiled for and never recompiles; pad the batch to ",
          ShapeToString(spec.shape), " or run with --compile=false"));
    }
    s->arg_ptrs[i] = args[i].raw_data();
  }
  for (const exec::Launch& launch : s->launches) {
    const auto start = impl_->profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    if (absl::Status status = launch.run(); !status.ok()) return status;
    if (impl_->profile) {
      LaunchProfileEntry& e = impl_->profile_by_op[launch.op];
      e.op = launch.op;
      ++e.calls;
      e.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  return absl::OkStatus();
}

const void* HostExecutable::ResultData(std::string_view function, int index) const {
  const exec::Schedule* s = impl_->Find(function);
  if (s == nullptr || index < 0 || index >= static_cast<int>(s->result_addrs.size())) return nullptr;
  return s->result_addrs[index].get();
}

absl::Status HostExecutable::ReleaseScratchMemory() { return impl_->arena_memory.Release(); }

int64_t HostExecutable::num_launches(std::string_view function) const {
  const exec::Schedule* s = impl_->Find(function);
  return s == nullptr ? 0 : static_cast<int64_t>(s->launches.size());
}

std::vector<LaunchProfileEntry> HostExecutable::profile() const {
  std::vector<LaunchProfileEntry> entries;
  for (const auto& [op, e] : impl_->profile_by_op) entries.push_back(e);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return entries;
}

void HostExecutable::ResetProfile() { impl_->profile_by_op.clear(); }

}  // namespace gpt_sft::runtime
