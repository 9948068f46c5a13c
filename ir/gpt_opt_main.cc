//===- gpt_opt_main.cc - gpt-opt, the mlir-opt of the gpt dialect alone ---===//
//
// This file implements gpt-opt: it registers the gpt dialect with the dialects its tests
// write around it (func, arith, tensor; builtin is always there), MLIR's generic transforms
// and the VJP test pass, then hands over to MlirOptMain (--split-input-file,
// --verify-diagnostics, --mlir-print-op-generic). The compiler's passes are in gptc-opt
// (compiler/tools); this tool keeps ir/'s tests free of them.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_dialect.h"
#include "ir/vjp_test_pass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  gpt_sft::compiler::gpt::RegisterVjpTestPass();

  mlir::DialectRegistry registry;
  registry.insert<gpt_sft::compiler::gpt::GptDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gpt dialect driver (ir/)\n", registry));
}
