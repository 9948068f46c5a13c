// Implements CompareOpenClWithInterpreter:
//   1. parse the IR twice: one module for the interpreter, one to compile;
//   2. compile: gpt-plan-buffers with the GPU alignment (unless the IR is placed already),
//      gpt-lower-fusions, the opencl target;
//   3. make the inputs (given ones, else seeded uniform floats);
//   4. run on the OpenCL device through the Executable, and on the interpreter;
//   5. compare result by result.
#include "tests/kernels/kernel_harness.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/opencl_target.h"
#include "compiler/lowering/gpu/lower_to_gpu_pass.h"
#include "compiler/transforms/lower_fusions_pass.h"
#include "compiler/transforms/plan_buffers_pass.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/device/device.h"
#include "runtime/executable/executable.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/test_module.h"

namespace gpt_sft::tests {
namespace {

using runtime::DType;
using runtime::Tensor;

absl::StatusOr<artifact::Artifact> Compile(const std::string& ir, bool plan) {
  absl::StatusOr<std::unique_ptr<runtime::testing::TestModule>> parsed = runtime::testing::TestModule::Parse(ir);
  if (!parsed.ok()) return parsed.status();
  mlir::ModuleOp module = (*parsed)->module();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    if (d.getSeverity() != mlir::DiagnosticSeverity::Remark) absl::StrAppend(&diagnostics, d.str(), "\n");
    return mlir::success();
  });
  mlir::PassManager pm(module.getContext());
  if (plan) pm.addPass(compiler::CreatePlanBuffersPass(compiler::kGpuBufferAlignment));
  pm.addPass(compiler::CreateLowerFusionsPass());
  if (mlir::failed(pm.run(module))) return absl::InternalError("planning the test function: " + diagnostics);
  return compiler::CompileForOpenCl(module);
}

/// The function's arguments: given, else uniform [-1, 1) floats.
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> Inputs(mlir::func::FuncOp func, const KernelRun& run) {
  std::mt19937_64 rng(run.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<std::pair<std::string, Tensor>> out;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name");
    if (!name) return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has no gpt.name"));
    if (auto it = run.inputs.find(name.str()); it != run.inputs.end()) {
      out.push_back({name.str(), it->second});
      continue;
    }
    auto type = llvm::cast<mlir::RankedTensorType>(func.getArgument(i).getType());
    runtime::Shape shape(type.getShape().begin(), type.getShape().end());
    if (type.getElementType().isF32()) {
      Tensor t = Tensor::Empty(DType::kF32, shape);
      for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(uniform(rng));
      out.push_back({name.str(), t});
    } else if (type.getElementType().isF64()) {
      Tensor t = Tensor::Empty(DType::kF64, shape);
      for (int64_t k = 0; k < t.numel(); ++k) t.data<double>()[k] = uniform(rng);
      out.push_back({name.str(), t});
    } else {
      return absl::InvalidArgumentError(absl::StrCat("integer argument '", name.str(), "' must be given"));
    }
  }
  return out;
}

ResultComparison Compare(const std::string& name, const Tensor& reference, const std::vector<char>& device_bytes) {
  ResultComparison c;
  c.name = name;
  const int64_t n = reference.numel();
  auto value = [&](int64_t i) -> std::pair<double, double> {
    switch (reference.dtype()) {
      case DType::kF32:
        return {reference.data<float>()[i], reinterpret_cast<const float*>(device_bytes.data())[i]};
      case DType::kF64:
        return {reference.data<double>()[i], reinterpret_cast<const double*>(device_bytes.data())[i]};
      case DType::kI32:
        return {static_cast<double>(reference.data<int32_t>()[i]),
                static_cast<double>(reinterpret_cast<const int32_t*>(device_bytes.data())[i])};
    }
    return {0, 0};
  };
  for (int64_t i = 0; i < n; ++i) {
    const auto [want, got] = value(i);
    c.max_reference = std::max(c.max_reference, std::fabs(want));
    const double err = std::isnan(got) != std::isnan(want) ? INFINITY : std::fabs(got - want);
    if (!(err <= c.max_abs_error)) c.max_abs_error = std::isnan(err) ? 0 : err;
  }
  c.max_rel_error = c.max_reference > 0 ? c.max_abs_error / c.max_reference : c.max_abs_error;
  return c;
}

}  // namespace

bool OpenClAvailable(std::string* why) {
  absl::StatusOr<std::unique_ptr<runtime::device::Device>> device = runtime::device::CreateDevice("opencl");
  if (!device.ok() && why != nullptr) *why = std::string(device.status().message());
  return device.ok();
}

absl::StatusOr<std::vector<ResultComparison>> CompareOpenClWithInterpreter(const std::string& ir,
                                                                           const KernelRun& run) {
  absl::StatusOr<std::unique_ptr<runtime::device::Device>> device = runtime::device::CreateDevice("opencl");
  if (!device.ok()) return absl::UnavailableError(std::string(device.status().message()));
  absl::StatusOr<artifact::Artifact> artifact = Compile(ir, run.plan);
  if (!artifact.ok()) return artifact.status();

  absl::StatusOr<std::unique_ptr<runtime::testing::TestModule>> reference = runtime::testing::TestModule::Parse(ir);
  if (!reference.ok()) return reference.status();
  auto func = (*reference)->module().lookupSymbol<mlir::func::FuncOp>(run.function);
  if (!func) return absl::InvalidArgumentError("the IR has no function @" + run.function);
  absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> inputs = Inputs(func, run);
  if (!inputs.ok()) return inputs.status();

  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = runtime::Executable::Load(*artifact, device->get());
  if (!exe.ok()) return exe.status();
  if (absl::Status s = (*exe)->AllocateUnboundSlots(); !s.ok()) return s;
  std::vector<Tensor> args;
  for (const auto& [name, tensor] : *inputs) {
    if (absl::Status s = (*exe)->Upload(name, tensor.raw_data(), static_cast<int64_t>(tensor.bytes()), &tensor.shape());
        !s.ok()) {
      return s;
    }
    args.push_back(tensor.Clone());  // the interpreter may update donated arguments in place
  }
  if (absl::Status s = (*exe)->Run(run.function); !s.ok()) return s;

  std::unique_ptr<runtime::Interpreter> interpreter = (*reference)->NewInterpreter();
  absl::StatusOr<std::vector<Tensor>> expected = interpreter->Run(run.function, std::move(args));
  if (!expected.ok()) return expected.status();

  std::vector<ResultComparison> out;
  for (size_t i = 0; i < expected->size(); ++i) {
    const Tensor& want = (*expected)[i];
    std::vector<char> got(want.bytes());
    if (absl::Status s = (*exe)->DownloadResult(run.function, static_cast<int>(i), got.data(), want.bytes()); !s.ok()) {
      return s;
    }
    std::string name = absl::StrCat("result ", i);
    if (auto attr = func.getResultAttrOfType<mlir::StringAttr>(i, "gpt.name")) name = attr.str();
    out.push_back(Compare(name, want, got));
  }
  return out;
}

}  // namespace gpt_sft::tests
