// Implements CompileSpirKernels: serialize (MLIR's SPIR-V serializer), then translate with
// llvm-spirv-15 in a scratch directory.
#include "compiler/codegen/spir_kernels.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/external_tool.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/SPIRV/Serialization.h"

#ifndef GPT_LLVM_SPIRV_PATH
#error "GPT_LLVM_SPIRV_PATH must name llvm-spirv-15 (third_party/system_paths.bzl)"
#endif

namespace gpt_sft::compiler {

absl::StatusOr<std::vector<SpirKernels>> CompileSpirKernels(mlir::ModuleOp module) {
  std::vector<SpirKernels> out;
  for (auto gpu_module : module.getOps<mlir::gpu::GPUModuleOp>()) {
    auto spirv_modules = gpu_module.getOps<mlir::spirv::ModuleOp>();
    if (spirv_modules.empty()) continue;
    mlir::spirv::ModuleOp spirv_module = *spirv_modules.begin();
    SpirKernels kernels;
    kernels.gpu_module = gpu_module.getName().str();
    for (auto entry : spirv_module.getOps<mlir::spirv::EntryPointOp>()) {
      kernels.kernels.push_back(entry.getFn().str());
    }
    std::string diagnostics;
    llvm::SmallVector<uint32_t> words;
    {
      mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
        absl::StrAppend(&diagnostics, d.str(), "\n");
        return mlir::success();
      });
      if (failed(mlir::spirv::serialize(spirv_module, words))) {
        return absl::InternalError(
            absl::StrCat("serializing the SPIR-V of gpu.module @", kernels.gpu_module, ": ", diagnostics));
      }
    }
    kernels.spirv_binary.assign(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint32_t));
    absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-spirv");
    if (!dir.ok()) return dir.status();
    const std::string spv = dir->File("kernels.spv"), bc = dir->File("kernels.bc");
    if (absl::Status s = WriteWholeFile(spv, kernels.spirv_binary); !s.ok()) return s;
    if (absl::Status s = RunTool({GPT_LLVM_SPIRV_PATH, "-r", spv, "-o", bc}, "llvm-spirv-15"); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("translating gpu.module @", kernels.gpu_module,
                                                 " to SPIR bitcode: ", s.message()));
    }
    absl::StatusOr<std::string> bitcode = ReadWholeFile(bc);
    if (!bitcode.ok()) return bitcode.status();
    kernels.spir_bitcode = *std::move(bitcode);
    out.push_back(std::move(kernels));
  }
  return out;
}

}  // namespace gpt_sft::compiler
