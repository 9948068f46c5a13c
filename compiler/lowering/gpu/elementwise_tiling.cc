//===- elementwise_tiling.cc - elementwise generics onto workgroups -------===//
//
// This file implements TileElementwiseOntoWorkgroups:
//   1. collect the distinct workgroup sizes of the tagged generics;
//   2. write one transform script: per size, match the generics of that size, tile them by
//      the size onto #gpu.block<x>, then by 1 onto #gpu.thread<x>, and map both foralls
//      to a gpu.launch (transform.gpu.map_forall_to_blocks / map_nested_forall_to_threads);
//   3. run it with the transform interpreter on the module;
//   4. name each new launch after the generic inside it (gpt.kernel_name), then lower the
//      tiled generics to scalar loads and stores.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/gpu/elementwise_tiling.h"

#include <set>
#include <string>

#include "compiler/lowering/gpu/gpu_kernels.h"
#include "compiler/lowering/planned_function.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/TransformOps/GPUTransformOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace gpt_sft::compiler::gpu_lowering {
namespace {

std::string TransformScript(const std::set<int64_t>& blocks) {
  std::string s =
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n";
  for (int64_t b : blocks) {
    const std::string n = std::to_string(b);
    s += "    %g" + n + " = transform.structured.match ops{[\"linalg.generic\"]} attributes {" +
         kElementwiseBlockAttr + " = " + n + " : i64} in %root : (!transform.any_op) -> !transform.any_op\n";
    s += "    %t" + n + ", %f" + n + " = transform.structured.tile_using_forall %g" + n + " tile_sizes [" + n +
         "] (mapping = [#gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n";
    s += "    %u" + n + ", %h" + n + " = transform.structured.tile_using_forall %t" + n +
         " tile_sizes [1] (mapping = [#gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n";
    s += "    %l" + n + " = transform.gpu.map_forall_to_blocks %f" + n +
         " generate_gpu_launch : (!transform.any_op) -> !transform.any_op\n";
    s += "    %m" + n + " = transform.gpu.map_nested_forall_to_threads %l" + n + " block_dims = [" + n +
         ", 1, 1] sync_after_distribute = false : (!transform.any_op) -> !transform.any_op\n";
  }
  s += "    transform.yield\n  }\n}\n";
  return s;
}

/// Names each launch after the tagged generic it computes.
void NameLaunches(mlir::ModuleOp module) {
  module.walk([](mlir::gpu::LaunchOp launch) {
    if (launch->hasAttr(lowering::OpLowering::kKernelNameAttr)) return;
    launch.walk([&](mlir::linalg::GenericOp generic) {
      if (auto name = generic->getAttr(lowering::OpLowering::kKernelNameAttr)) {
        launch->setAttr(lowering::OpLowering::kKernelNameAttr, name);
      }
      // The schedule's launch list names the op each launch computes; the generic had it.
      if (auto op = generic->getAttr(lowering::kOpNameAttr)) launch->setAttr(lowering::kOpNameAttr, op);
    });
  });
}

}  // namespace

void RegisterElementwiseTilingDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect, mlir::gpu::GPUDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect, mlir::transform::TransformDialect>();
  mlir::linalg::registerTransformDialectExtension(registry);
  mlir::linalg::registerTilingInterfaceExternalModels(registry);
  mlir::gpu::registerTransformDialectExtension(registry);
  mlir::scf::registerTransformDialectExtension(registry);
}

mlir::LogicalResult TileElementwiseOntoWorkgroups(mlir::ModuleOp module) {
  std::set<int64_t> blocks;
  module.walk([&](mlir::linalg::GenericOp generic) {
    if (auto b = generic->getAttrOfType<mlir::IntegerAttr>(kElementwiseBlockAttr)) blocks.insert(b.getInt());
  });
  if (blocks.empty()) return mlir::success();
  mlir::MLIRContext* context = module.getContext();
  mlir::OwningOpRef<mlir::ModuleOp> script = mlir::parseSourceString<mlir::ModuleOp>(TransformScript(blocks), context);
  if (!script) return module.emitError("gpt-lower-to-gpu: the elementwise tiling script does not parse");
  mlir::Operation* entry = nullptr;
  script->walk([&](mlir::transform::NamedSequenceOp seq) { entry = seq; });
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(module, entry, *script,
                                                                 mlir::transform::TransformOptions()))) {
    return mlir::failure();
  }
  NameLaunches(module);
  mlir::PassManager pm(context);
  pm.addPass(mlir::createConvertLinalgToLoopsPass());
  pm.addPass(mlir::memref::createFoldMemRefAliasOpsPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  return pm.run(module);
}

}  // namespace gpt_sft::compiler::gpu_lowering
