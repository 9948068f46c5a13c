// TestModule: IR text parsed into a module with the gpt, func and arith dialects loaded,
// for the interpreter's tests. Owns its MLIRContext.
#ifndef GPT_SFT_RUNTIME_INTERPRETER_TEST_MODULE_H_
#define GPT_SFT_RUNTIME_INTERPRETER_TEST_MODULE_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/interpreter/interpreter.h"

namespace gpt_sft::runtime::testing {

/// A context with the dialects a gpt step uses (gpt, func, arith) loaded.
std::unique_ptr<mlir::MLIRContext> MakeGptContext();

class TestModule {
 public:
  struct ParseOptions {
    /// false: keep IR the verifier would reject (tests of the interpreter's own checks).
    bool verify = true;
    /// Accept ops of unknown dialects (tests of unknown-op errors).
    bool allow_unregistered = false;
  };
  /// Parses (and verifies) `text`; the error carries MLIR's diagnostics.
  static absl::StatusOr<std::unique_ptr<TestModule>> Parse(std::string_view text, ParseOptions options);
  static absl::StatusOr<std::unique_ptr<TestModule>> Parse(std::string_view text) { return Parse(text, {}); }
  /// Wraps a module built in `context` (e.g. by a VJP rule).
  TestModule(std::unique_ptr<mlir::MLIRContext> context, mlir::OwningOpRef<mlir::ModuleOp> module);

  mlir::ModuleOp module() { return *module_; }
  mlir::MLIRContext* context() { return context_.get(); }
  std::unique_ptr<Interpreter> NewInterpreter(InterpreterOptions options = {}) {
    return std::make_unique<Interpreter>(*module_, std::move(options));
  }

 private:
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

}  // namespace gpt_sft::runtime::testing

#endif  // GPT_SFT_RUNTIME_INTERPRETER_TEST_MODULE_H_
