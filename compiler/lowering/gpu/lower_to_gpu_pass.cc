//===- lower_to_gpu_pass.cc - gpt-lower-to-gpu ----------------------------===//
//
// This file implements the pass:
//   1. every planned func.func becomes its launch schedule (LowerPlannedFunction), each
//      computing op handed to its family's kernel generator (gpu_kernels.h); collectives
//      become gpt.collective on the buffer, after a copy when not in place;
//      (option gemm=vendor: products of matrices become the gemm.f32 builtin;
//      option attention=cudnn: attention becomes the sdpa_*.cudnn builtins);
//   2. the elementwise generics the generators left are tiled onto workgroups
//      (elementwise_tiling.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/lower_to_gpu_pass.h"

#include "ir/gpt_ops.h"
#include "compiler/lowering/collective_lowering.h"
#include "compiler/lowering/gpu/elementwise_tiling.h"
#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/planned_function.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::success;

LogicalResult LowerOp(lowering::OpLowering& lowering, const gpu_lowering::GpuLoweringOptions& options) {
  mlir::Operation* op = lowering.op();
  if (llvm::isa<mlir::linalg::GenericOp, gpt::AddOp, gpt::MulOp, gpt::ReluSquareOp, gpt::ReluSquareGradOp,
                gpt::SoftcapOp, gpt::SoftcapGradOp, gpt::RoundBf16Op>(op)) {
    return gpu_lowering::EmitElementwise(lowering);
  }
  if (llvm::isa<gpt::MatmulOp, gpt::MatmulWeightGradOp>(op)) return gpu_lowering::EmitMatmul(lowering, options);
  if (llvm::isa<gpt::AttentionOp, gpt::AttentionGradOp>(op)) {
    return options.attention == gpu_lowering::AttentionBackend::kCudnnBuiltin
               ? gpu_lowering::EmitCudnnAttention(lowering, options)
               : gpu_lowering::EmitAttention(lowering, options);
  }
  if (llvm::isa<gpt::RmsNormOp, gpt::RmsNormGradOp, gpt::CrossEntropyOp, gpt::CrossEntropyGradOp>(op)) {
    return gpu_lowering::EmitRowKernels(lowering);
  }
  if (llvm::isa<gpt::EmbeddingOp, gpt::EmbeddingGradOp>(op)) return gpu_lowering::EmitEmbedding(lowering);
  if (llvm::isa<gpt::RotaryOp, gpt::RotaryGradOp>(op)) return gpu_lowering::EmitRotary(lowering);
  if (llvm::isa<gpt::TransposeOp>(op)) return gpu_lowering::EmitLayout(lowering);
  if (llvm::isa<gpt::AdamwUpdateOp, gpt::MuonUpdateOp>(op)) return gpu_lowering::EmitOptimizer(lowering, options);
  if (llvm::isa<gpt::AllReduceOp, gpt::ReduceScatterOp, gpt::AllGatherOp>(op)) return lowering::LowerCollective(lowering);
  return op->emitOpError("gpt-lower-to-gpu: no GPU kernel for this op; run it with --compile=false (the interpreter)");
}

class LowerToGpuPass : public mlir::PassWrapper<LowerToGpuPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToGpuPass)

  LowerToGpuPass() = default;
  explicit LowerToGpuPass(const gpu_lowering::GpuLoweringOptions& options) {
    gemm_ = options.gemm == gpu_lowering::GemmBackend::kVendorBuiltin ? "vendor" : "tiled";
    attention_ = options.attention == gpu_lowering::AttentionBackend::kCudnnBuiltin ? "cudnn" : "generated";
    mma_ = options.mma == gpu_lowering::MmaRealization::kNvvm ? "nvvm" : "emulated";
  }
  LowerToGpuPass(const LowerToGpuPass& other) : PassWrapper(other) {
    gemm_ = other.gemm_.getValue();
    attention_ = other.attention_.getValue();
    mma_ = other.mma_.getValue();
  }

  llvm::StringRef getArgument() const final { return "gpt-lower-to-gpu"; }
  llvm::StringRef getDescription() const final {
    return "Lower planned entry points into launch schedules of target-neutral GPU kernels";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    gpu_lowering::RegisterElementwiseTilingDialects(registry);
    registry.insert<mlir::LLVM::LLVMDialect>();  // the nvvm warp tile is an LLVM intrinsic call
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<mlir::func::FuncOp> planned;
    for (auto func : module.getOps<mlir::func::FuncOp>()) {
      if (!func.isDeclaration() && func->hasAttr(lowering::kArenaBytesAttr)) planned.push_back(func);
    }
    gpu_lowering::GpuLoweringOptions options;
    if (gemm_ == "vendor") {
      options.gemm = gpu_lowering::GemmBackend::kVendorBuiltin;
    } else if (gemm_ != "tiled") {
      module.emitError("gpt-lower-to-gpu: gemm must be tiled or vendor, got '") << gemm_.getValue() << "'";
      return signalPassFailure();
    }
    if (attention_ == "cudnn") {
      options.attention = gpu_lowering::AttentionBackend::kCudnnBuiltin;
    } else if (attention_ != "generated") {
      module.emitError("gpt-lower-to-gpu: attention must be generated or cudnn, got '") << attention_.getValue() << "'";
      return signalPassFailure();
    }
    if (mma_ == "nvvm") {
      options.mma = gpu_lowering::MmaRealization::kNvvm;
    } else if (mma_ != "emulated") {
      module.emitError("gpt-lower-to-gpu: mma must be emulated or nvvm, got '") << mma_.getValue() << "'";
      return signalPassFailure();
    }
    auto lower_op = [&](lowering::OpLowering& l) { return LowerOp(l, options); };
    for (mlir::func::FuncOp func : planned) {
      if (failed(lowering::LowerPlannedFunction(func, kGpuBufferAlignment, lower_op))) return signalPassFailure();
    }
    if (failed(gpu_lowering::TileElementwiseOntoWorkgroups(module))) return signalPassFailure();
  }

 private:
  Option<std::string> gemm_{*this, "gemm",
                            llvm::cl::desc("products of matrices: tiled (the generated gemm) or vendor (the "
                                           "gemm.f32 builtin, cuBLASLt on the cuda driver)"),
                            llvm::cl::init("tiled")};
  Option<std::string> attention_{*this, "attention",
                                 llvm::cl::desc("attention: generated (the flash kernels) or cudnn (the "
                                                "sdpa_fwd.cudnn / sdpa_bwd.cudnn builtins of the cuda driver)"),
                                 llvm::cl::init("generated")};
  Option<std::string> mma_{*this, "mma",
                           llvm::cl::desc("warp tile products (mma_tile.h): emulated (through workgroup memory, "
                                          "any device) or nvvm (mma.sync, cuda)"),
                           llvm::cl::init("emulated")};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLowerToGpuPass(const gpu_lowering::GpuLoweringOptions& options) {
  return std::make_unique<LowerToGpuPass>(options);
}

void RegisterLowerToGpuPass() { mlir::PassRegistration<LowerToGpuPass>(); }

}  // namespace gpt_sft::compiler
