#include "compiler/builder/step_builder.h"

#include <map>
#include <string>

#include "ir/gpt_ops.h"
#include "compiler/transforms/autodiff_pass.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {
namespace {

StepConfig Small(bool packed, int64_t seq_len = 64) {
  StepConfig c;
  c.model = *ModelConfig::FromDepth(2, 512, 64, 128, 1);
  c.batch_size = 2;
  c.seq_len = seq_len;
  c.packed = packed;
  return c;
}

std::map<std::string, int> OpCounts(mlir::func::FuncOp func) {
  std::map<std::string, int> counts;
  func.walk([&](mlir::Operation* op) { ++counts[op->getName().getStringRef().str()]; });
  return counts;
}

std::vector<std::string> ArgNames(mlir::func::FuncOp func) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    names.push_back(func.getArgAttrOfType<mlir::StringAttr>(i, "gpt.name").str());
  }
  return names;
}

TEST(StepBuilder, EmitsThreeEntryPointsNamedAsTheirSignatures) {
  mlir::MLIRContext context;
  for (bool packed : {false, true}) {
    const StepConfig config = Small(packed);
    auto module = BuildStepModule(context, config);
    ASSERT_TRUE(module.ok()) << module.status();
    auto loss = (**module).lookupSymbol<mlir::func::FuncOp>(kLossFunction);
    auto micro = (**module).lookupSymbol<mlir::func::FuncOp>(kMicroStepFunction);
    auto opt = (**module).lookupSymbol<mlir::func::FuncOp>(kOptimizerStepFunction);
    auto logits = (**module).lookupSymbol<mlir::func::FuncOp>(kLogitsFunction);
    ASSERT_TRUE(loss && micro && opt && logits);
    EXPECT_EQ(ArgNames(logits), LogitsSignature(config).arguments);
    EXPECT_EQ(ArgNames(loss), LossSignature(config).arguments);
    EXPECT_EQ(ArgNames(micro), MicroStepSignature(config).arguments);
    EXPECT_EQ(ArgNames(opt), OptimizerStepSignature(config).arguments);
    EXPECT_EQ(micro.getNumResults(), MicroStepSignature(config).results.size());
  }
}

TEST(StepBuilder, ForwardHasNanochatsOpsPerLayer) {
  mlir::MLIRContext context;
  auto module = BuildStepModule(context, Small(true));
  ASSERT_TRUE(module.ok());
  std::map<std::string, int> ops = OpCounts((**module).lookupSymbol<mlir::func::FuncOp>(kLossFunction));
  const int L = 2;
  EXPECT_EQ(ops["gpt.embedding"], 1);
  EXPECT_EQ(ops["gpt.matmul"], 6 * L + 1);
  EXPECT_EQ(ops["gpt.attention"], L);
  EXPECT_EQ(ops["gpt.rotary"], 2 * L);
  // embedding norm, 2 pre-norms and the QK norm per block, final norm
  EXPECT_EQ(ops["gpt.rms_norm"], 1 + 4 * L + 1);
  EXPECT_EQ(ops["gpt.relu_square"], L);
  EXPECT_EQ(ops["gpt.softcap"], 1);
  EXPECT_EQ(ops["gpt.cross_entropy"], 1);
}

TEST(StepBuilder, AutodiffLeavesOnlyGptOpsAndOneGradientPerParameter) {
  mlir::MLIRContext context;
  StepConfig config = Small(true);
  config.grad_accum_steps = 4;
  auto module = BuildStepModule(context, config);
  ASSERT_TRUE(module.ok());
  mlir::PassManager pm(&context);
  pm.addPass(CreateAutodiffPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(**module)));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(**module)));
  auto micro = (**module).lookupSymbol<mlir::func::FuncOp>(kMicroStepFunction);
  std::map<std::string, int> ops = OpCounts(micro);
  const int L = 2;
  EXPECT_EQ(ops.count("gpt.gradients"), 0u);
  EXPECT_EQ(ops["gpt.embedding_grad"], 1);
  EXPECT_EQ(ops["gpt.matmul_weight_grad"], 6 * L + 1);
  EXPECT_EQ(ops["gpt.attention_grad"], L);
  EXPECT_EQ(ops["gpt.rotary_grad"], 2 * L);
  EXPECT_EQ(ops["gpt.rms_norm_grad"], 1 + 4 * L + 1);
  EXPECT_EQ(ops["gpt.cross_entropy_grad"], 1);
  // The seed is 1/grad_accum_steps.
  bool found_seed = false;
  micro.walk([&](mlir::Operation* op) {
    if (auto grad = llvm::dyn_cast<gpt::CrossEntropyGradOp>(op)) {
      auto attr = grad.getDloss().getDefiningOp()->getAttrOfType<mlir::DenseElementsAttr>("value");
      found_seed = attr && attr.getSplatValue<llvm::APFloat>().convertToDouble() == 0.25;
    }
  });
  EXPECT_TRUE(found_seed);
}

TEST(StepBuilder, DynamicSequenceLengthDifferentiates) {
  mlir::MLIRContext context;
  auto module = BuildStepModule(context, Small(false, kDynamicDim));
  ASSERT_TRUE(module.ok()) << module.status();
  mlir::PassManager pm(&context);
  pm.addPass(CreateAutodiffPass());
  EXPECT_TRUE(mlir::succeeded(pm.run(**module)));
}

TEST(StepBuilder, InvalidConfigIsAnErrorNamingTheField) {
  mlir::MLIRContext context;
  StepConfig config = Small(false);
  config.batch_size = -1;
  auto module = BuildStepModule(context, config);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("batch_size"), std::string::npos);
}

}  // namespace
}  // namespace gpt_sft::compiler
