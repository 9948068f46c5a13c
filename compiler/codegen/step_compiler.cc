// Implements CompileStep, StepKey and CompileOrLoadStep.
#include "compiler/codegen/step_compiler.h"

#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "compiler/builder/step_builder.h"
#include "compiler/codegen/artifact_cache.h"
#include "compiler/codegen/host_target.h"
#include "compiler/transforms/pipeline.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace gpt_sft::compiler {
namespace {

std::atomic<int64_t> compilations{0};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Print(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return os.str();
}

/// The step for `config` as built, in a context the caller owns.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Build(mlir::MLIRContext& context, const StepConfig& config) {
  LoadStepDialects(context);
  return BuildStepModule(context, config);
}

}  // namespace

absl::StatusOr<std::string> StepKey(const StepConfig& config) {
  mlir::MLIRContext context;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = Build(context, config);
  if (!module.ok()) return module.status();
  return ArtifactKey(Print(**module), DetectHostTarget().Description());
}

absl::StatusOr<StepArtifact> CompileStep(const StepConfig& config, std::vector<std::string>* remarks) {
  const auto start = std::chrono::steady_clock::now();
  mlir::MLIRContext context;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = Build(context, config);
  if (!module.ok()) return module.status();
  StepArtifact artifact;
  artifact.key = ArtifactKey(Print(**module), DetectHostTarget().Description());
  if (absl::Status s = RunToStage(**module, Stage::kLinalg, /*print_ir_after_all=*/false, remarks); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("compiling the step: ", s.message()));
  }
  absl::StatusOr<KernelObject> kernels = CompileFusionKernels(**module);
  if (!kernels.ok()) return kernels.status();
  artifact.kernels = *std::move(kernels);
  artifact.step_ir = Print(**module);
  artifact.compile_seconds = SecondsSince(start);
  ++compilations;
  return artifact;
}

absl::StatusOr<CompileOutcome> CompileOrLoadStep(const StepConfig& config, const std::string& cache_dir) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> key = StepKey(config);
  if (!key.ok()) return key.status();
  const ArtifactCache cache(cache_dir);
  CompileOutcome outcome;
  outcome.cache_entry = cache.EntryDir(*key);
  absl::StatusOr<StepArtifact> cached = cache.Load(*key);
  if (cached.ok()) {
    outcome.artifact = *std::move(cached);
    outcome.cache_hit = true;
    outcome.seconds = SecondsSince(start);
    return outcome;
  }
  if (!absl::IsNotFound(cached.status())) outcome.cache_note = std::string(cached.status().message());
  absl::StatusOr<StepArtifact> compiled = CompileStep(config, &outcome.remarks);
  if (!compiled.ok()) return compiled.status();
  outcome.artifact = *std::move(compiled);
  if (absl::Status s = cache.Store(outcome.artifact); !s.ok()) {
    outcome.cache_note = absl::StrCat(outcome.cache_note.empty() ? "" : outcome.cache_note + "; ",
                                      "not cached: ", s.message());
  }
  outcome.seconds = SecondsSince(start);
  return outcome;
}

int64_t StepCompilations() { return compilations.load(); }

}  // namespace gpt_sft::compiler
