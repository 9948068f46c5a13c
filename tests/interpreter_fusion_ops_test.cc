// gpt.fusion runs its region with the ops' own implementations: the autodiff'd micro_step
// of a tiny config gives the same loss and gradients after gpt-fuse as before.
#include <cstdint>
#include <vector>

#include "compiler/builder/step_builder.h"
#include "ir/gpt_ops.h"
#include "mlir/Pass/Pass.h"  // first: fuse_pass.h returns unique_ptr<mlir::Pass>
#include "compiler/transforms/fuse_pass.h"
#include "compiler/transforms/pipeline.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/interpreter/interpreter.h"

namespace gpt_sft::runtime {
namespace {

compiler::StepConfig TinyConfig() {
  compiler::StepConfig config;
  config.model = *compiler::ModelConfig::FromDepth(1, 64, 64, /*n_embd=*/64, /*n_head=*/1, std::nullopt);
  config.batch_size = 2;
  config.seq_len = 16;
  return config;
}

/// Deterministic arguments for `func`'s types: small floats, token ids below the vocab.
std::vector<Tensor> Arguments(mlir::func::FuncOp func, int vocab) {
  std::vector<Tensor> args;
  uint32_t state = 12345;
  for (mlir::Type type : func.getFunctionType().getInputs()) {
    auto tensor = llvm::cast<mlir::RankedTensorType>(type);
    Shape shape(tensor.getShape().begin(), tensor.getShape().end());
    Tensor t = Tensor::Zeros(tensor.getElementType().isInteger(32) ? DType::kI32 : DType::kF32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      state = state * 1664525u + 1013904223u;
      if (t.dtype() == DType::kI32) {
        t.data<int32_t>()[i] = static_cast<int32_t>(state % vocab);
      } else {
        t.data<float>()[i] = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 0.2f;
      }
    }
    args.push_back(t);
  }
  return args;
}

TEST(FusionOps, FusedMicroStepMatchesUnfused) {
  const compiler::StepConfig config = TinyConfig();
  mlir::MLIRContext context;
  auto module = compiler::BuildStepModule(context, config);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(compiler::RunToStage(**module, compiler::Stage::kAutodiff).ok());
  mlir::OwningOpRef<mlir::ModuleOp> fused = (**module).clone();
  mlir::PassManager pm(&context);
  pm.addPass(compiler::CreateFusePass());
  ASSERT_TRUE(mlir::succeeded(pm.run(*fused)));
  int fusions = 0;
  fused->walk([&](compiler::gpt::FusionOp) { ++fusions; });
  ASSERT_GT(fusions, 0) << "the test needs a fused micro_step";

  auto func = (**module).lookupSymbol<mlir::func::FuncOp>("micro_step");
  ASSERT_TRUE(func);
  Interpreter plain(**module);
  Interpreter fused_interpreter(*fused);
  auto expected = plain.Run("micro_step", Arguments(func, config.model.vocab_size));
  auto actual = fused_interpreter.Run("micro_step", Arguments(func, config.model.vocab_size));
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(expected->size(), actual->size());
  for (size_t r = 0; r < expected->size(); ++r) {
    const Tensor& e = (*expected)[r];
    const Tensor& a = (*actual)[r];
    ASSERT_EQ(e.shape(), a.shape()) << "result " << r;
    for (int64_t i = 0; i < e.numel(); ++i) {
      ASSERT_NEAR(e.data<float>()[i], a.data<float>()[i], 1e-6) << "result " << r << " element " << i;
    }
  }
}

}  // namespace
}  // namespace gpt_sft::runtime
