// Implements CompileStep, StepKey and CompileOrLoadStep.
#include "compiler/codegen/step_compiler.h"

#include <atomic>
#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/builder/step_builder.h"
#include "compiler/codegen/artifact_cache.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/cuda_target.h"
#include "compiler/codegen/artifact_key.h"
#include "compiler/codegen/host_target.h"
#include "compiler/codegen/opencl_target.h"
#include "compiler/lowering/gpu/lower_to_gpu_pass.h"
#include "compiler/transforms/buffer_plan.h"
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

/// The step as built, with the key its IR gives.
struct BuiltStep {
  std::unique_ptr<mlir::MLIRContext> context = std::make_unique<mlir::MLIRContext>();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string key;
};

/// The target's description in the cache key: what its code depends on besides the IR.
std::string TargetKey(Target target) {
  switch (target) {
    case Target::kCpu: return absl::StrCat("cpu ", DetectHostTarget().Description());
    case Target::kOpenCl:
    case Target::kCuda: {
      absl::StatusOr<GemmChoice> gemm = GemmChoiceFor(target);
      absl::StatusOr<AttentionChoice> attention = AttentionChoiceFor(target);
      return absl::StrCat(target == Target::kCuda ? "cuda sm_90 ptx" : "opencl spir64",
                          " gemm=", gemm.ok() ? GemmChoiceName(target, *gemm) : "invalid",
                          target == Target::kCuda && (!attention.ok() || *attention != AttentionChoice::kGenerated)
                              ? absl::StrCat(" attention=", attention.ok() ? AttentionChoiceName(*attention) : "invalid")
                              : "");
    }
  }
  return "?";
}

absl::StatusOr<BuiltStep> BuildKeyedFor(const StepConfig& config, Target target) {
  BuiltStep step;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = Build(*step.context, config);
  if (!module.ok()) return module.status();
  step.module = *std::move(module);
  step.key = ArtifactKey(Print(*step.module), TargetKey(target), DtypeName(config.dtype));
  return step;
}

absl::StatusOr<artifact::Artifact> CompileBuiltFor(const StepConfig& config, BuiltStep& step, Target target,
                                                   std::chrono::steady_clock::time_point start,
                                                   std::vector<std::string>* remarks) {
  const int64_t alignment = target == Target::kCpu ? kBufferAlignment : kGpuBufferAlignment;
  const TargetPasses passes = target == Target::kCpu ? CpuTargetPasses() : GpuTargetPasses();
  if (absl::Status s = RunToStage(*step.module, Stage::kLinalg, /*print_ir_after_all=*/false, remarks, alignment, passes);
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("compiling the step: ", s.message()));
  }
  absl::StatusOr<artifact::Artifact> a;
  switch (target) {
    case Target::kCpu:
      a = CompileForCpu(*step.module);
      break;
    case Target::kOpenCl:
    case Target::kCuda: {
      absl::StatusOr<GemmChoice> gemm = GemmChoiceFor(target);
      if (!gemm.ok()) return gemm.status();
      absl::StatusOr<AttentionChoice> attention = AttentionChoiceFor(target);
      if (!attention.ok()) return attention.status();
      a = target == Target::kCuda ? CompileForCuda(*step.module, *gemm, *attention)
                                  : CompileForOpenCl(*step.module, *gemm);
      break;
    }
  }
  if (!a.ok()) return a.status();
  a->key = step.key;
  a->compiler_version = kCompilerVersion;
  a->step_config = config.ToJson();
  a->compile_seconds = SecondsSince(start);
  ++compilations;
  return a;
}

}  // namespace

absl::StatusOr<artifact::Artifact> CompileStep(const StepConfig& config, Target target,
                                               std::vector<std::string>* remarks) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<BuiltStep> step = BuildKeyedFor(config, target);
  if (!step.ok()) return step.status();
  return CompileBuiltFor(config, *step, target, start, remarks);
}

absl::StatusOr<std::string> StepKey(const StepConfig& config, Target target) {
  absl::StatusOr<BuiltStep> step = BuildKeyedFor(config, target);
  if (!step.ok()) return step.status();
  return step->key;
}

absl::StatusOr<CompileOutcome> CompileOrLoadStep(const StepConfig& config, Target target,
                                                 const std::string& cache_dir) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<BuiltStep> step = BuildKeyedFor(config, target);
  if (!step.ok()) return step.status();
  const ArtifactCache cache(cache_dir);
  CompileOutcome outcome;
  outcome.cache_entry = cache.EntryDir(step->key);
  absl::StatusOr<artifact::Artifact> cached = cache.Load(step->key);
  if (cached.ok()) {
    outcome.artifact = *std::move(cached);
    outcome.cache_hit = true;
    outcome.seconds = SecondsSince(start);
    outcome.cache_log.push_back(
        absl::StrFormat("found %s and loaded it in %.3f s", outcome.cache_entry, outcome.seconds));
    return outcome;
  }
  outcome.cache_log.push_back(absl::IsNotFound(cached.status())
                                  ? absl::StrCat("no entry ", outcome.cache_entry)
                                  : absl::StrCat("entry ", outcome.cache_entry, " not usable (",
                                                 cached.status().message(), ")"));
  absl::StatusOr<artifact::Artifact> compiled = CompileBuiltFor(config, *step, target, start, &outcome.remarks);
  if (!compiled.ok()) return compiled.status();
  outcome.artifact = *std::move(compiled);
  outcome.cache_log.push_back(absl::StrFormat("compiled the step in %.2f s", outcome.artifact.compile_seconds));
  if (absl::Status s = cache.Store(outcome.artifact); !s.ok()) {
    outcome.cache_log.push_back(absl::StrCat("could not store it: ", s.message()));
  } else {
    outcome.cache_log.push_back(absl::StrCat("stored it as ", outcome.cache_entry));
  }
  outcome.seconds = SecondsSince(start);
  return outcome;
}

int64_t StepCompilations() { return compilations.load(); }

}  // namespace gpt_sft::compiler
