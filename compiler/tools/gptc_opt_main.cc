//===- gptc_opt_main.cc - gptc-opt, the mlir-opt of the gpt dialect -------===//
//
// This file implements gptc-opt: it registers the dialects a gpt step uses
// (gpt, func, arith, tensor; builtin is always there), MLIR's generic
// transforms (canonicalize, cse, ...), the gpt passes and test passes, then hands over
// to MlirOptMain, which brings --pass-pipeline, --mlir-print-ir-after-all,
// --split-input-file and --verify-diagnostics.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_dialect.h"
#include "ir/vjp_test_pass.h"
#include "compiler/lowering/cpu/lower_to_cpu_pass.h"
#include "compiler/lowering/gpu/lower_to_gpu_pass.h"
#include "compiler/lowering/gpu/outline_kernels_pass.h"
#include "compiler/lowering/spirv/gpu_to_spirv_pass.h"
#include "compiler/transforms/autocast_bf16_pass.h"
#include "compiler/transforms/autodiff_pass.h"
#include "compiler/transforms/plan_buffers_pass.h"
#include "compiler/transforms/bf16_storage.h"
#include "compiler/transforms/elide_gemm_input_rounding_pass.h"
#include "compiler/transforms/fuse_pass.h"
#include "compiler/transforms/lower_fusions_pass.h"
#include "compiler/transforms/verify_static_pass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  gpt_sft::compiler::gpt::RegisterVjpTestPass();
  gpt_sft::compiler::RegisterAutodiffPass();
  gpt_sft::compiler::RegisterAutocastBf16Pass();
  gpt_sft::compiler::RegisterPlanBuffersPass();
  gpt_sft::compiler::RegisterFusePass();
  gpt_sft::compiler::RegisterElideGemmInputRoundingPass();
  gpt_sft::compiler::RegisterMarkBf16StoragePass();
  gpt_sft::compiler::RegisterLowerFusionsPass();
  gpt_sft::compiler::RegisterVerifyStaticPass();
  gpt_sft::compiler::RegisterLowerToCpuPass();
  gpt_sft::compiler::RegisterLowerToGpuPass();
  gpt_sft::compiler::RegisterOutlineKernelsPass();
  gpt_sft::compiler::RegisterGpuToSpirvPass();

  mlir::DialectRegistry registry;
  registry.insert<gpt_sft::compiler::gpt::GptDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::memref::MemRefDialect, mlir::gpu::GPUDialect, mlir::scf::SCFDialect,
                  mlir::math::MathDialect, mlir::spirv::SPIRVDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gpt-sft optimizer driver\n", registry));
}
