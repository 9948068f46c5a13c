//===- gptc_main.cc - gptc, the step compiler's driver --------------------===//
//
// gptc builds the training step for a model config and prints it at a stage:
//   gptc --depth=4 --n_embd=256 --n_head=2 --vocab=8192 --emit=autodiff
// --function picks one entry point (logits, loss, micro_step, optimizer_step); --output
// writes the IR to a file instead of stdout. --emit=cost prices the cuda artifact's launches
// on a GPU (compiler/cost):
//   gptc --target=cuda --dtype=bfloat16 --depth=20 --emit=cost --gpu=h100
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/atomic_file.h"
#include "base/command_line.h"
#include "compiler/builder/step_builder.h"
#include "artifact/artifact_file.h"
#include "compiler/codegen/fusion_kernels.h"
#include "compiler/codegen/cuda_target.h"
#include "compiler/codegen/opencl_target.h"
#include "compiler/codegen/ptx_kernels.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"
#include "compiler/cost/cost_report.h"
#include "compiler/cost/cost_report_format.h"
#include "compiler/cost/gpu_spec.h"
#include "compiler/cost/ptxas_report.h"
#include "compiler/lowering/gpu/lower_to_gpu_pass.h"
#include "compiler/transforms/pipeline.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

ABSL_FLAG(int, depth, 4, "model depth (nanochat's --depth): n_embd = 64 x depth, heads of dim 128");
ABSL_FLAG(int, n_embd, 0, "model width; 0: 64 x depth");
ABSL_FLAG(int, n_head, 0, "query heads; 0: n_embd / 128 rounded up");
ABSL_FLAG(int, n_kv_head, 0, "key/value heads; 0: n_head");
ABSL_FLAG(int, vocab, 65536, "vocabulary size (the tokenizer's)");
ABSL_FLAG(int, sequence_len, 2048, "the model's sequence_len (rotary cache = 10x)");
ABSL_FLAG(int64_t, batch, 4, "rows per micro-batch (B)");
ABSL_FLAG(int64_t, seq, 2048, "positions per row (T); -1: dynamic");
ABSL_FLAG(bool, packed, false, "batches carry segment_ids and positions (best-fit packing)");
ABSL_FLAG(int, grad_accum_steps, 1, "micro-steps per optimizer step (loss divided by it)");
ABSL_FLAG(int, dp_world_size, 1, "data-parallel ranks: above 1, optimizer_step averages each gradient over them");
ABSL_FLAG(std::string, dtype, "f32",
          "element type: f32, f64, or bfloat16 (bf16: nanochat's bf16 autocast, bf16 values in f32 tensors)");
ABSL_FLAG(std::string, emit, "gpt",
          "stage to print: gpt (as built), autodiff, fused, planned, linalg, then per target: llvm (cpu: the fusion "
          "kernels' optimized LLVM IR); gpu (opencl, cuda: launch schedules of target-neutral GPU kernels), spirv "
          "(opencl: the kernels in SPIR-V), ptx (cuda: the kernels' PTX for sm_90), launches (the artifact's launch list), artifact (the artifact file itself: "
          "--output is required; //trainer:run_step runs it), cost (cuda: every launch priced on --gpu: FLOPs by unit, "
          "bytes, predicted time and bound, totals, tokens/s and MFU; compiler/cost/README.md), cost_json (the same as "
          "one JSON object)");
ABSL_FLAG(std::string, target, "cpu", "what the step is compiled for: cpu, opencl or cuda");
ABSL_FLAG(std::string, gemm, "",
          "GPU targets: the step's gemms through the vendor library (cublaslt for cuda, clblast for opencl: the "
          "driver's gemm.f32 builtin) or tiled (the compiler's kernel); empty: $GPT_SFT_CUDA_GEMM / "
          "$GPT_SFT_OPENCL_GEMM, else cublaslt on cuda and tiled on opencl");
ABSL_FLAG(std::string, attention, "",
          "cuda target: the step's attention through the compiler's flash kernels (generated) or cuDNN's fused SDPA "
          "(cudnn: the driver's sdpa_fwd.cudnn / sdpa_bwd.cudnn builtins; packed rows keep the generated kernels); "
          "empty: $GPT_SFT_CUDA_ATTENTION, else generated");
ABSL_FLAG(std::string, gpu, "h100", "--emit=cost, cost_json: the GPU the launches are priced on: h100, h200, a100");
ABSL_FLAG(std::string, function, "", "print only this entry point (logits, loss, micro_step, optimizer_step)");
ABSL_FLAG(std::string, output, "", "write the IR here instead of stdout");
ABSL_FLAG(bool, print_ir_after_all, false, "print the module after every pass (stderr)");
ABSL_FLAG(bool, stats, false, "print to stderr the build and pass times and each function's op counts");
ABSL_FLAG(bool, locations, false, "print each op's location: the module it belongs to, e.g. transformer.h.3.attn");

namespace gpt_sft::compiler {
namespace {

int Fail(const std::string& message) {
  std::cerr << "gptc: " << message << "\n";
  return 1;
}

absl::StatusOr<StepConfig> ConfigFromFlags() {
  auto optional = [](int v) { return v > 0 ? std::optional<int>(v) : std::nullopt; };
  absl::StatusOr<ModelConfig> model =
      ModelConfig::FromDepth(absl::GetFlag(FLAGS_depth), absl::GetFlag(FLAGS_vocab), absl::GetFlag(FLAGS_sequence_len),
                             optional(absl::GetFlag(FLAGS_n_embd)), optional(absl::GetFlag(FLAGS_n_head)),
                             optional(absl::GetFlag(FLAGS_n_kv_head)));
  if (!model.ok()) return model.status();
  StepConfig config;
  config.model = *model;
  config.batch_size = absl::GetFlag(FLAGS_batch);
  config.seq_len = absl::GetFlag(FLAGS_seq);
  config.packed = absl::GetFlag(FLAGS_packed);
  config.grad_accum_steps = absl::GetFlag(FLAGS_grad_accum_steps);
  config.dp_world_size = absl::GetFlag(FLAGS_dp_world_size);
  absl::StatusOr<ElementType> dtype = ParseDtype(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype: ", dtype.status().message()));
  config.dtype = *dtype;
  if (absl::Status s = config.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(std::string(s.message()) + " (check --batch, --seq, --grad_accum_steps, --dp_world_size)");
  }
  return config;
}

/// Under `bazel run` a relative path means the user's directory, not the runfiles tree.
std::string UserPath(const std::string& path) {
  const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
  return (dir && !path.empty() && path[0] != '/') ? std::string(dir) + "/" + path : path;
}

/// `text` into --output's file atomically (base/atomic_file.h), so a failed write never
/// leaves a truncated IR file where an old one was.
absl::Status WriteOutput(const std::string& path, const std::string& text) {
  if (absl::Status s = base::WriteFileAtomically(path, text); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("--output: ", s.message()));
  }
  return absl::OkStatus();
}

/// "@micro_step: 412 ops: gpt.matmul 50, gpt.add 50, ..." per function, most frequent first.
void PrintStats(mlir::ModuleOp module, double build_ms, double passes_ms, const std::string& stage) {
  std::cerr << "gptc: stage '" << stage << "': built in " << build_ms << " ms, passes " << passes_ms << " ms\n";
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    std::map<std::string, int> counts;
    int total = 0;
    func.walk([&](mlir::Operation* op) {
      if (op == func.getOperation()) return;
      ++counts[op->getName().getStringRef().str()];
      ++total;
    });
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [name, n] : counts) sorted.push_back({-n, name});
    std::sort(sorted.begin(), sorted.end());
    std::cerr << "  @" << func.getSymName().str() << ": " << total << " ops:";
    for (size_t i = 0; i < sorted.size(); ++i) {
      std::cerr << (i ? ", " : " ") << sorted[i].second << " " << -sorted[i].first;
    }
    std::cerr << "\n";
  }
}

/// `text` to --output or stdout.
int Emit(const std::string& text) {
  if (const std::string path = absl::GetFlag(FLAGS_output); !path.empty()) {
    if (absl::Status s = WriteOutput(UserPath(path), text); !s.ok()) return Fail(std::string(s.message()));
  } else {
    std::cout << text;
  }
  return 0;
}

/// The GPU targets' stages past linalg: gpu (opencl, cuda), spirv (opencl), ptx (cuda).
bool IsGpuStage(const std::string& emit) { return emit == "gpu" || emit == "spirv" || emit == "ptx"; }

/// "" when `emit` is a stage of `target`, else the error.
std::string StageError(const std::string& emit, const std::string& target) {
  if (emit == "llvm" && target != "cpu") return "--emit=llvm is a stage of --target=cpu";
  if (emit == "gpu" && target == "cpu") return "--emit=gpu is a stage of --target=opencl and --target=cuda";
  if (emit == "spirv" && target != "opencl") return "--emit=spirv is a stage of --target=opencl";
  if (emit == "ptx" && target != "cuda") return "--emit=ptx is a stage of --target=cuda";
  return "";
}

bool IsCostStage(const std::string& emit) { return emit == "cost" || emit == "cost_json"; }

/// Exit status of a usage error gptc reports before compiling (an unknown --gpu).
constexpr int kUsageError = 2;

/// cost and cost_json: "" when the flags allow pricing, else the error. The cost model knows
/// the cuda target with cuBLASLt gemms; the tiled gemm's kernels have no cost rule.
std::string CostStageError(Target target) {
  if (target != Target::kCuda) return "--emit=cost prices a --target=cuda artifact";
  absl::StatusOr<GemmChoice> gemm = GemmChoiceFor(target);
  if (!gemm.ok()) return std::string(gemm.status().message());
  if (*gemm != GemmChoice::kVendor) return "--emit=cost prices cuBLASLt gemms; the tiled gemm has no cost rule yet";
  return "";
}

/// Whether some module is PTX the compiler did not assemble (ptxas must run now to report it).
bool NeedsPtxasNow(const artifact::Artifact& artifact) {
  return std::any_of(artifact.modules.begin(), artifact.modules.end(), [](const artifact::KernelModule& m) {
    return m.assembler_report.empty() && m.format == artifact::ModuleFormat::kPtx;
  });
}

/// Every kernel's registers, stack frame and spills from the toolkit's ptxas: what it said when
/// the compiler assembled the modules, or run now on PTX modules if it is installed.
absl::StatusOr<cost::ArtifactResources> KernelResources(const artifact::Artifact& artifact, const std::string& ptxas) {
  if (NeedsPtxasNow(artifact) && !std::filesystem::exists(ptxas)) {
    return absl::NotFoundError(ptxas + " does not exist");
  }
  return cost::RunPtxas(artifact, ptxas);
}

/// The artifact priced on `gpu` (compiler/cost), as text or JSON.
int EmitCost(const artifact::Artifact& artifact, const cost::GpuSpec& gpu, const std::string& emit) {
  const std::string ptxas = CudaToolkitPath({}) + "/bin/ptxas";
  absl::StatusOr<cost::ArtifactResources> resources = KernelResources(artifact, ptxas);
  const std::string source = resources.ok() ? absl::StrCat("ptxas -arch=sm_90 -v (", ptxas,
                                                            NeedsPtxasNow(artifact) ? ")" : ", at compile time)")
                                            : "n/a (no ptxas): " + std::string(resources.status().message());
  absl::StatusOr<cost::CostReport> report =
      cost::BuildCostReport(artifact, gpu, resources.ok() ? &*resources : nullptr, source);
  if (!report.ok()) return Fail(std::string(report.status().message()));
  return Emit(emit == "cost" ? cost::CostReportText(*report) : cost::CostReportJson(*report));
}

/// launches, artifact, cost: the whole compile (compiler/codegen/step_compiler.h), as the trainer does it.
int EmitArtifact(const StepConfig& config, Target target, const std::string& emit, const cost::GpuSpec* gpu) {
  absl::StatusOr<artifact::Artifact> artifact = CompileStep(config, target);
  if (!artifact.ok()) return Fail(std::string(artifact.status().message()));
  std::cerr << "gptc: artifact " << artifact->key << " for " << artifact->target << " compiled in "
            << artifact->compile_seconds << " s: " << artifact->Summary() << "\n";
  if (emit == "launches") return Emit(artifact::LaunchListText(*artifact));
  if (IsCostStage(emit)) return EmitCost(*artifact, *gpu, emit);
  const std::string path = absl::GetFlag(FLAGS_output);
  if (path.empty()) return Fail("--emit=artifact writes a binary file: give --output");
  return Emit(artifact::SerializeArtifact(*artifact));
}

int EmitGpuStage(mlir::ModuleOp module, Target target, const std::string& emit) {
  gpu_lowering::GpuLoweringOptions options;
  absl::StatusOr<GemmChoice> gemm = GemmChoiceFor(target);
  if (!gemm.ok()) return Fail(std::string(gemm.status().message()));
  if (*gemm == GemmChoice::kVendor) options.gemm = gpu_lowering::GemmBackend::kVendorBuiltin;
  absl::StatusOr<AttentionChoice> attention = AttentionChoiceFor(target);
  if (!attention.ok()) return Fail(std::string(attention.status().message()));
  if (*attention == AttentionChoice::kCudnn) options.attention = gpu_lowering::AttentionBackend::kCudnnBuiltin;
  if (target == Target::kCuda) options.mma = gpu_lowering::MmaRealization::kNvvm;
  if (absl::Status s = LowerToGpuKernels(module, options); !s.ok()) return Fail(std::string(s.message()));
  if (emit == "ptx") {
    absl::StatusOr<std::vector<PtxKernels>> ptx = CompilePtxKernels(module, {});
    if (!ptx.ok()) return Fail(std::string(ptx.status().message()));
    std::string text;
    for (const PtxKernels& k : *ptx) absl::StrAppend(&text, "// gpu.module @", k.gpu_module, "\n", k.ptx, "\n");
    return Emit(text);
  }
  if (emit == "spirv") {
    if (absl::Status s = LowerGpuKernelsToSpirv(module); !s.ok()) return Fail(std::string(s.message()));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo(absl::GetFlag(FLAGS_locations), /*prettyForm=*/true));
  os << "\n";
  return Emit(os.str());
}

/// --attention: sets GPT_SFT_CUDA_ATTENTION for this process (as --gemm sets its variable);
/// 0, or the exit status of a usage error (cudnn on a target whose driver has no cuDNN).
int ApplyAttentionFlag(Target target, const StepConfig& config) {
  const std::string attention = absl::GetFlag(FLAGS_attention);
  if (attention.empty()) return 0;
  if (attention != "generated" && attention != "cudnn") {
    Fail("--attention=" + attention + ": the attention is generated or cudnn");
    return kUsageError;
  }
  if (attention == "cudnn" && target != Target::kCuda) {
    Fail("--attention=cudnn: cuDNN's SDPA runs on --target=cuda only; the " + std::string(TargetName(target)) +
         " target's attention is the generated kernels (--attention=generated)");
    return kUsageError;
  }
  if (target == Target::kCuda) setenv(kAttentionChoiceVariable, attention.c_str(), 1);
  if (attention == "cudnn" && config.dtype != ElementType::kBF16) {
    std::cerr << "gptc: --attention=cudnn: cuDNN computes attention on bf16 values; this " << DtypeName(config.dtype)
              << " step's attention inputs are rounded to bf16 around each call (--dtype=bfloat16 is what it is "
                 "meant for)\n";
  }
  if (attention == "cudnn" && config.packed) {
    std::cerr << "gptc: --attention=cudnn: packed rows (segment ids) keep the generated attention kernels (cuDNN's "
                 "variable-length attention cannot express a row's documents)\n";
  }
  return 0;
}

int Main() {
  absl::StatusOr<StepConfig> config = ConfigFromFlags();
  if (!config.ok()) return Fail(std::string(config.status().message()));
  const std::string target = absl::GetFlag(FLAGS_target), emit = absl::GetFlag(FLAGS_emit);
  absl::StatusOr<Target> parsed_target = ParseTarget(target);
  if (!parsed_target.ok()) return Fail("--target: " + std::string(parsed_target.status().message()));
  // The compiler reads the choice from the environment (so the trainer's compiles and their
  // cache keys see it too); the flag sets it for this process.
  if (const std::string gemm = absl::GetFlag(FLAGS_gemm); !gemm.empty()) {
    const std::string vendor = GemmChoiceName(*parsed_target, GemmChoice::kVendor);
    if (*parsed_target == Target::kCpu || (gemm != vendor && gemm != "tiled")) {
      return Fail("--gemm=" + gemm + ": " +
                  (*parsed_target == Target::kCpu ? std::string("the cpu target has no gemm choice")
                                                  : "the " + target + " target's gemm is " + vendor + " or tiled"));
    }
    setenv(GemmChoiceVariable(*parsed_target), gemm.c_str(), 1);
  }
  if (const int status = ApplyAttentionFlag(*parsed_target, *config); status != 0) return status;
  if (emit == "launches" || emit == "artifact" || IsCostStage(emit)) {
    if (!absl::GetFlag(FLAGS_function).empty()) return Fail("--function: not with --emit=" + emit);
    if (!IsCostStage(emit)) return EmitArtifact(*config, *parsed_target, emit, nullptr);
    absl::StatusOr<cost::GpuSpec> gpu = cost::FindGpu(absl::GetFlag(FLAGS_gpu));
    if (!gpu.ok()) {
      Fail("--gpu: " + std::string(gpu.status().message()));
      return kUsageError;
    }
    if (const std::string error = CostStageError(*parsed_target); !error.empty()) return Fail(error);
    return EmitArtifact(*config, *parsed_target, emit, &*gpu);
  }
  if (const std::string error = StageError(emit, target); !error.empty()) return Fail(error);
  // llvm and the target stages are gptc's own: the linalg stage, then the target's code.
  const bool emit_llvm = emit == "llvm";
  Stage stage = Stage::kLinalg;
  if (!emit_llvm && !IsGpuStage(emit)) {
    if (absl::Status s = ParseStage(absl::GetFlag(FLAGS_emit), &stage); !s.ok()) {
      return Fail("--emit: " + std::string(s.message()) + ", llvm, gpu, spirv, ptx, launches, artifact, cost, cost_json");
    }
  }
  mlir::MLIRContext context;
  const auto build_start = std::chrono::steady_clock::now();
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = BuildStepModule(context, *config);
  if (!module.ok()) return Fail(std::string(module.status().message()));
  const auto passes_start = std::chrono::steady_clock::now();
  std::vector<std::string> remarks;
  const int64_t alignment = target == "cpu" ? 64 : kGpuBufferAlignment;
  const TargetPasses passes = target == "cpu" ? CpuTargetPasses() : GpuTargetPasses();
  if (absl::Status s = RunToStage(**module, stage, absl::GetFlag(FLAGS_print_ir_after_all), &remarks, alignment, passes);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  for (const std::string& remark : remarks) std::cerr << "gptc: " << remark << "\n";
  if (absl::GetFlag(FLAGS_stats)) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    PrintStats(**module, ms(build_start, passes_start), ms(passes_start, std::chrono::steady_clock::now()),
               absl::GetFlag(FLAGS_emit));
  }
  if (IsGpuStage(emit)) {
    if (!absl::GetFlag(FLAGS_function).empty()) return Fail("--function: not with --emit=" + emit + " (the module is one program)");
    return EmitGpuStage(**module, *parsed_target, emit);
  }
  if (emit_llvm) {
    if (!absl::GetFlag(FLAGS_function).empty()) return Fail("--function: not with --emit=llvm (the kernels are per module)");
    const auto codegen_start = std::chrono::steady_clock::now();
    absl::StatusOr<KernelObject> kernels = CompileFusionKernels(**module);
    if (!kernels.ok()) return Fail(std::string(kernels.status().message()));
    if (absl::GetFlag(FLAGS_stats)) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - codegen_start).count();
      std::cerr << "gptc: stage 'llvm': " << kernels->kernels.size() << " fusion kernels compiled in " << ms
                << " ms, object " << kernels->object.size() << " bytes, target " << kernels->target.substr(0, kernels->target.find(' ', kernels->target.find(' ') + 1)) << "\n";
    }
    if (const std::string path = absl::GetFlag(FLAGS_output); !path.empty()) {
      if (absl::Status s = WriteOutput(UserPath(path), kernels->llvm_ir); !s.ok()) return Fail(std::string(s.message()));
    } else {
      std::cout << kernels->llvm_ir;
    }
    return 0;
  }
  mlir::Operation* to_print = module->get();
  if (const std::string name = absl::GetFlag(FLAGS_function); !name.empty()) {
    to_print = (**module).lookupSymbol<mlir::func::FuncOp>(name);
    if (!to_print) return Fail("--function: no entry point named '" + name + "' (logits, loss, micro_step, optimizer_step)");
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  to_print->print(os, mlir::OpPrintingFlags().enableDebugInfo(absl::GetFlag(FLAGS_locations), /*prettyForm=*/true));
  os << "\n";
  os.flush();
  if (const std::string path = absl::GetFlag(FLAGS_output); !path.empty()) {
    if (absl::Status s = WriteOutput(UserPath(path), text); !s.ok()) return Fail(std::string(s.message()));
  } else {
    std::cout << text;
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::compiler

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("gptc: build the training step of a nanochat-style GPT and print its IR");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::compiler::Main();
}
