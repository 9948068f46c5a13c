// Implements TestModule.
#include "runtime/interpreter/test_module.h"

#include <string>

#include "ir/gpt_dialect.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace gpt_sft::runtime::testing {

std::unique_ptr<mlir::MLIRContext> MakeGptContext() {
  mlir::DialectRegistry registry;
  registry.insert<compiler::gpt::GptDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

TestModule::TestModule(std::unique_ptr<mlir::MLIRContext> context, mlir::OwningOpRef<mlir::ModuleOp> module)
    : context_(std::move(context)), module_(std::move(module)) {}

absl::StatusOr<std::unique_ptr<TestModule>> TestModule::Parse(std::string_view text, ParseOptions options) {
  auto context = MakeGptContext();
  context->allowUnregisteredDialects(options.allow_unregistered);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(context.get(), [&](mlir::Diagnostic& d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::ParserConfig config(context.get(), options.verify);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(text.data(), text.size()), config);
  if (!module) return absl::InvalidArgumentError("cannot parse the test IR:\n" + diagnostics);
  return std::make_unique<TestModule>(std::move(context), std::move(module));
}

}  // namespace gpt_sft::runtime::testing
