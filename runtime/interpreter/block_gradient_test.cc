// A whole transformer block with its loss (nanochat's recipe at toy size: embedding, norms,
// q/k/v, rotary with positions, QK norm, GQA attention with segments, c_proj, residual,
// relu^2 MLP, lm_head, softcap, cross entropy), differentiated by chaining the ops' VJP
// rules in reverse (a minimal reverse-mode pass, cotangents summed with gpt.add), run
// through the interpreter in float64 and checked against central differences of the loss
// for every weight. This exercises the interpreter on a realistic graph: many values live
// across the backward, the attention lse side table, reshape aliasing, and last-use release.
#include <string>
#include <vector>

#include "ir/gpt_ops.h"
#include "gtest/gtest.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/test_module.h"
#include "runtime/kernels/cpu/finite_difference.h"

namespace gpt_sft::runtime {
namespace {

namespace gpt = ::gpt_sft::compiler::gpt;
namespace fd = ::gpt_sft::runtime::kernels::testing;

// B=2, T=6, C=8, H=2, Hkv=1, D=4, V=11, MLP 32.
constexpr char kBlock[] = R"(
  func.func @loss(%wte: tensor<11x8xf64>, %cq: tensor<8x8xf64>, %ck: tensor<4x8xf64>, %cv: tensor<4x8xf64>,
                  %cp: tensor<8x8xf64>, %fc: tensor<32x8xf64>, %mp: tensor<8x32xf64>, %lm: tensor<11x8xf64>,
                  %ids: tensor<2x6xi32>, %tg: tensor<12xi32>, %pos: tensor<2x6xi32>, %seg: tensor<2x6xi32>)
      -> tensor<f64> {
    %e = gpt.embedding %wte[%ids] : tensor<11x8xf64>, tensor<2x6xi32>
    %x = gpt.rms_norm %e : tensor<2x6x8xf64>
    %h = gpt.rms_norm %x : tensor<2x6x8xf64>
    %q0 = gpt.matmul %h, %cq : tensor<2x6x8xf64>, tensor<8x8xf64>
    %k0 = gpt.matmul %h, %ck : tensor<2x6x8xf64>, tensor<4x8xf64>
    %v0 = gpt.matmul %h, %cv : tensor<2x6x8xf64>, tensor<4x8xf64>
    %q1 = gpt.reshape %q0 to [2, 6, 2, 4] : tensor<2x6x8xf64>
    %k1 = gpt.reshape %k0 to [2, 6, 1, 4] : tensor<2x6x4xf64>
    %v1 = gpt.reshape %v0 to [2, 6, 1, 4] : tensor<2x6x4xf64>
    %q2 = gpt.rotary %q1, positions %pos : tensor<2x6x2x4xf64>, tensor<2x6xi32>
    %k2 = gpt.rotary %k1, positions %pos : tensor<2x6x1x4xf64>, tensor<2x6xi32>
    %q3 = gpt.rms_norm %q2 : tensor<2x6x2x4xf64>
    %k3 = gpt.rms_norm %k2 : tensor<2x6x1x4xf64>
    %o = gpt.attention %q3, %k3, %v1, segments %seg
        : tensor<2x6x2x4xf64>, tensor<2x6x1x4xf64>, tensor<2x6x1x4xf64>, tensor<2x6xi32>
    %o1 = gpt.reshape %o to [2, 6, 8] : tensor<2x6x2x4xf64>
    %a = gpt.matmul %o1, %cp : tensor<2x6x8xf64>, tensor<8x8xf64>
    %x1 = gpt.add %x, %a : tensor<2x6x8xf64>, tensor<2x6x8xf64>
    %h2 = gpt.rms_norm %x1 : tensor<2x6x8xf64>
    %f = gpt.matmul %h2, %fc : tensor<2x6x8xf64>, tensor<32x8xf64>
    %r = gpt.relu_square %f : tensor<2x6x32xf64>
    %m = gpt.matmul %r, %mp : tensor<2x6x32xf64>, tensor<8x32xf64>
    %x2 = gpt.add %x1, %m : tensor<2x6x8xf64>, tensor<2x6x8xf64>
    %xf = gpt.rms_norm %x2 : tensor<2x6x8xf64>
    %lg = gpt.matmul %xf, %lm : tensor<2x6x8xf64>, tensor<11x8xf64>
    %sc = gpt.softcap %lg {cap = 3.0 : f64} : tensor<2x6x11xf64>
    %fl = gpt.reshape %sc to [12, 11] : tensor<2x6x11xf64>
    %l = gpt.cross_entropy %fl, %tg : tensor<12x11xf64>, tensor<12xi32>
    return %l : tensor<f64>
  })";

constexpr int kNumWeights = 8;

/// Adds @grad(same arguments) -> (loss, d loss / d weight for the first kNumWeights
/// arguments): @loss's body, then each op's VJP rule in reverse order.
void AddGradFunction(mlir::ModuleOp module) {
  auto loss = module.lookupSymbol<mlir::func::FuncOp>("loss");
  mlir::OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  auto grad = llvm::cast<mlir::func::FuncOp>(builder.clone(*loss.getOperation()));
  grad.setSymName("grad");
  mlir::Block& block = grad.getBody().front();
  mlir::Operation* ret = block.getTerminator();
  std::vector<mlir::Operation*> forward;
  for (mlir::Operation& op : block.without_terminator()) forward.push_back(&op);

  builder.setInsertionPoint(ret);
  mlir::Value loss_value = ret->getOperand(0);
  llvm::DenseMap<mlir::Value, mlir::Value> cotangent;
  cotangent[loss_value] = builder.create<mlir::arith::ConstantOp>(
      ret->getLoc(), mlir::DenseElementsAttr::get(llvm::cast<mlir::ShapedType>(loss_value.getType()), 1.0));
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    auto op = llvm::dyn_cast<gpt::VjpOpInterface>(*it);
    ASSERT_TRUE(op) << (*it)->getName().getStringRef().str();
    mlir::Value dy = cotangent.lookup(op->getResult(0));
    if (!dy) continue;
    llvm::SmallVector<mlir::Value> dxs = op.buildVjp(builder, {dy});
    ASSERT_EQ(dxs.size(), op->getNumOperands());
    for (auto [operand, dx] : llvm::zip(op->getOperands(), dxs)) {
      if (!dx) continue;
      mlir::Value& sum = cotangent[operand];
      sum = sum ? builder.create<gpt::AddOp>(op.getLoc(), sum, dx).getResult() : dx;
    }
  }
  llvm::SmallVector<mlir::Value> results = {loss_value};
  for (int i = 0; i < kNumWeights; ++i) {
    mlir::Value d = cotangent.lookup(block.getArgument(i));
    ASSERT_TRUE(d) << "no cotangent for weight " << i;
    results.push_back(d);
  }
  builder.create<mlir::func::ReturnOp>(ret->getLoc(), results);
  ret->erase();
  grad.setFunctionType(builder.getFunctionType(block.getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(module)));
}

TEST(BlockGradient, ChainedVjpRulesMatchCentralDifferencesOfTheLoss) {
  auto module = testing::TestModule::Parse(kBlock);
  ASSERT_TRUE(module.ok()) << module.status();
  AddGradFunction((*module)->module());
  if (HasFatalFailure()) return;
  auto func = (*module)->module().lookupSymbol<mlir::func::FuncOp>("loss");

  std::vector<Tensor> args;
  for (int i = 0; i < kNumWeights; ++i) {
    auto type = llvm::cast<mlir::RankedTensorType>(func.getArgumentTypes()[i]);
    Shape shape(type.getShape().begin(), type.getShape().end());
    args.push_back(Tensor::FromVector<double>(shape, fd::Random(NumElements(shape), 40 + i)));
  }
  args.push_back(Tensor::FromVector<int32_t>({2, 6}, {1, 4, 4, 9, 0, 10, 3, 3, 7, 2, 5, 8}));   // ids
  args.push_back(Tensor::FromVector<int32_t>({12}, {4, 4, 9, -1, 10, 1, 3, 7, -1, 5, 8, 6}));   // targets
  args.push_back(Tensor::FromVector<int32_t>({2, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5}));    // positions
  args.push_back(Tensor::FromVector<int32_t>({2, 6}, {0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0}));    // segments

  auto interpreter = (*module)->NewInterpreter();
  auto grads = interpreter->Run("grad", args);
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 1u + kNumWeights);
  auto loss = interpreter->Run("loss", args);
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_EQ((*grads)[0].ToVector<double>(), (*loss)[0].ToVector<double>());

  for (int w = 0; w < kNumWeights; ++w) {
    SCOPED_TRACE("weight " + std::to_string(w));
    auto loss_at = [&](const fd::Vec& x) {
      std::vector<Tensor> perturbed = args;
      perturbed[w] = Tensor::FromVector<double>(args[w].shape(), x);
      auto y = interpreter->Run("loss", perturbed);
      EXPECT_TRUE(y.ok()) << y.status();
      return y.ok() ? (*y)[0].ToVector<double>()[0] : 0.0;
    };
    EXPECT_LT(fd::MaxFdError(args[w].ToVector<double>(), loss_at, (*grads)[1 + w].ToVector<double>()),
              fd::kFdTolerance);
  }
  // Only the results are still alive once the runs are over.
  grads->clear();
  loss->clear();
  EXPECT_EQ(interpreter->allocator_stats().bytes_live, 0);
}

}  // namespace
}  // namespace gpt_sft::runtime
