// Implements Interpreter: find and prepare the function (cached), check and bind the
// arguments, run the steps releasing values after their last use, collect the results.
#include "runtime/interpreter/interpreter.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/interpreter/op_context.h"
#include "runtime/interpreter/op_registry.h"
#include "runtime/interpreter/prepared_function.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime {

using interp::Frame;
using interp::OpContext;
using interp::PreparedFunction;
using interp::TypeToString;

struct Interpreter::Impl {
  mlir::ModuleOp module;
  InterpreterOptions options;
  std::map<std::string, std::unique_ptr<PreparedFunction>, std::less<>> prepared;
  std::map<std::string, OpProfileEntry> profile;  // by op name
};

namespace {


/// `@f argument 2 ("targets")`.
std::string DescribeArgument(mlir::func::FuncOp func, unsigned index) {
  std::string text = absl::StrCat("@", func.getSymName().str(), " argument ", index);
  if (auto name = func.getArgAttrOfType<mlir::StringAttr>(index, "gpt.name")) {
    absl::StrAppend(&text, " (\"", name.getValue().str(), "\")");
  }
  return text;
}

absl::Status CheckArgument(mlir::func::FuncOp func, unsigned index, const Tensor& arg) {
  mlir::Type type = func.getArgumentTypes()[index];
  std::optional<DType> dtype = interp::DTypeOfType(type);
  if (!dtype) return interp::UninterpretedTypeError(type, DescribeArgument(func, index));
  auto ranked = llvm::cast<mlir::RankedTensorType>(type);
  bool ok = arg.defined() && arg.dtype() == *dtype && arg.rank() == ranked.getRank();
  for (int64_t i = 0; ok && i < arg.rank(); ++i) ok = ranked.isDynamicDim(i) || ranked.getDimSize(i) == arg.dim(i);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(DescribeArgument(func, index), ": expected ", TypeToString(type),
                                                 ", got ", arg.defined() ? arg.ShapeString() : "a null tensor"));
}

/// A donated argument's storage: the same data, with a holder of its own (which keeps
/// the original storage, if any, alive), so the sole-holder test sees only the run.
Tensor Donated(const Tensor& arg) {
  std::shared_ptr<void> keep = arg.storage();
  std::shared_ptr<void> storage(arg.raw_data(), [keep](void*) {});
  return Tensor::FromStorage(arg.dtype(), arg.shape(), std::move(storage), arg.raw_data());
}

}  // namespace

Interpreter::Interpreter(mlir::ModuleOp module, InterpreterOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->module = module;
  if (options.num_threads > 0) kernels::SetNumThreads(options.num_threads);
  if (!options.allocator) options.allocator = std::make_shared<CachingAllocator>();
  if (!options.collectives) options.collectives = std::make_shared<SingleRankCollectives>();
  impl_->options = std::move(options);
}

Interpreter::~Interpreter() = default;

void Interpreter::Observe(std::string_view function, int step, mlir::Operation* op, const interp::OpContext& ctx) {
  std::vector<Tensor> results;
  for (mlir::Value result : op->getResults()) results.push_back(ctx.Get(result));
  std::string location;
  llvm::raw_string_ostream os(location);
  op->getLoc().print(os);
  const std::string op_name = op->getName().getStringRef().str();
  impl_->options.observer(OpEvent{function, op_name, os.str(), step, results});
}

absl::StatusOr<std::vector<std::string>> Interpreter::ArgumentNames(std::string_view function) const {
  auto func = impl_->module.lookupSymbol<mlir::func::FuncOp>(std::string(function));
  if (!func) return absl::NotFoundError(absl::StrCat("no func.func @", std::string(function), " in the module"));
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name");
    names.push_back(name ? name.getValue().str() : "");
  }
  return names;
}

absl::StatusOr<std::vector<std::string>> Interpreter::ResultNames(std::string_view function) const {
  auto func = impl_->module.lookupSymbol<mlir::func::FuncOp>(std::string(function));
  if (!func) return absl::NotFoundError(absl::StrCat("no func.func @", std::string(function), " in the module"));
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "gpt.name");
    names.push_back(name ? name.getValue().str() : "");
  }
  return names;
}

AllocatorStats Interpreter::allocator_stats() const { return impl_->options.allocator->stats(); }

CachingAllocator& Interpreter::allocator() { return *impl_->options.allocator; }

absl::StatusOr<std::vector<Tensor>> Interpreter::Run(std::string_view function, std::vector<Tensor> args,
                                                     const RunOptions& run_options) {
  // 1. The function, prepared once.
  auto it = impl_->prepared.find(function);
  if (it == impl_->prepared.end()) {
    auto func = impl_->module.lookupSymbol<mlir::func::FuncOp>(std::string(function));
    if (!func) {
      std::string names;
      for (auto f : impl_->module.getOps<mlir::func::FuncOp>()) absl::StrAppend(&names, " @", f.getSymName().str());
      return absl::NotFoundError(
          absl::StrCat("no func.func @", std::string(function), " in the module; it has:", names));
    }
    auto prepared = interp::Prepare(func, interp::BuiltinOps());
    if (!prepared.ok()) return prepared.status();
    it = impl_->prepared.emplace(std::string(function), std::make_unique<PreparedFunction>(*std::move(prepared))).first;
  }
  const PreparedFunction& fn = *it->second;

  // 2. Arguments.
  mlir::func::FuncOp func = fn.func;  // MLIR's accessors are not const
  const unsigned num_args = func.getNumArguments();
  if (args.size() != num_args) {
    return absl::InvalidArgumentError(absl::StrCat("@", std::string(function), " takes ", num_args,
                                                   " arguments, got ", args.size()));
  }
  for (unsigned i = 0; i < num_args; ++i) {
    if (absl::Status s = CheckArgument(func, i, args[i]); !s.ok()) return s;
  }
  for (int index : run_options.donated_args) {
    if (index < 0 || index >= static_cast<int>(num_args)) {
      return absl::InvalidArgumentError(
          absl::StrCat("@", std::string(function), ": donated argument ", index, " does not exist"));
    }
    args[index] = Donated(args[index]);
  }
  Frame frame;
  frame.fn = &fn;
  frame.slots.resize(fn.num_slots);
  frame.lse.resize(fn.num_slots);
  frame.allocator = impl_->options.allocator.get();
  frame.collectives = impl_->options.collectives.get();
  for (unsigned i = 0; i < num_args; ++i) frame.slots[i] = std::move(args[i]);
  args.clear();
  for (int slot : fn.release_at_start) frame.Release(slot);

  // 3. Steps.
  for (int i = 0; i < static_cast<int>(fn.steps.size()); ++i) {
    const interp::Step& step = fn.steps[i];
    OpContext ctx(frame, i);
    const auto start = impl_->options.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    absl::Status status = step.fn(ctx);
    if (impl_->options.profile) {
      OpProfileEntry& entry = impl_->profile[step.op->getName().getStringRef().str()];
      ++entry.calls;
      entry.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (absl::Status s = std::move(status); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("in @", std::string(function), ": ", s.message()));
    }
    for (mlir::Value result : step.op->getResults()) {
      if (!ctx.Get(result).defined()) {
        return absl::InternalError(absl::StrCat("in @", std::string(function), ": ", interp::DescribeOp(step.op),
                                                " left result ", llvm::cast<mlir::OpResult>(result).getResultNumber(),
                                                " unset"));
      }
    }
    if (impl_->options.observer) Observe(function, i, step.op, ctx);
    for (int slot : step.release_after) frame.Release(slot);
  }

  // 4. Results.
  std::vector<Tensor> results;
  results.reserve(fn.result_slots.size());
  for (int slot : fn.result_slots) results.push_back(frame.slots[slot]);
  return results;
}

}  // namespace gpt_sft::runtime

namespace gpt_sft::runtime {

std::vector<OpProfileEntry> Interpreter::profile() const {
  std::vector<OpProfileEntry> entries;
  for (const auto& [name, entry] : impl_->profile) {
    entries.push_back(entry);
    entries.back().op = name;
  }
  std::sort(entries.begin(), entries.end(),
            [](const OpProfileEntry& a, const OpProfileEntry& b) { return a.seconds > b.seconds; });
  return entries;
}

void Interpreter::ResetProfile() { impl_->profile.clear(); }

}  // namespace gpt_sft::runtime
