#include "compiler/transforms/buffer_plan.h"

#include <string>

#include "compiler/builder/step_builder.h"
#include "ir/gpt_dialect.h"
#include "compiler/transforms/pipeline.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace gpt_sft::compiler {
namespace {

class BufferPlanTest : public ::testing::Test {
 protected:
  BufferPlanTest() {
    context_.loadDialect<gpt::GptDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  }

  /// The function `name` of `source`, kept alive by the fixture.
  mlir::func::FuncOp Parse(const std::string& source, const std::string& name) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(source, &context_);
    EXPECT_TRUE(module_) << source;
    return module_ ? module_->lookupSymbol<mlir::func::FuncOp>(name) : nullptr;
  }

  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
};

/// The slot whose bytes `i` uses: its own, or the one it is a view of.
size_t Root(const BufferPlan& plan, size_t i) {
  return plan.slots[i].aliased() ? static_cast<size_t>(plan.slots[i].alias_of) : i;
}

/// The invariant: slots live at the same time never share a byte (unless one is a view of
/// the other, whose live range then covers the view's), and all fit.
void ExpectSound(const BufferPlan& plan) {
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const Slot& a = plan.slots[i];
    EXPECT_EQ(a.bytes % kBufferAlignment, 0);
    EXPECT_LE(a.first, a.last);
    if (a.donated()) continue;
    EXPECT_EQ(a.offset % kBufferAlignment, 0);
    EXPECT_GE(a.offset, 0);
    EXPECT_LE(a.offset + a.bytes, plan.arena_bytes);
    for (size_t j = i + 1; j < plan.slots.size(); ++j) {
      const Slot& b = plan.slots[j];
      if (b.donated() || !a.LiveWith(b)) continue;
      if (Root(plan, i) == Root(plan, j)) {
        const Slot& root = plan.slots[Root(plan, i)];
        EXPECT_EQ(a.offset, b.offset);
        EXPECT_LE(std::max(a.last, b.last), root.last) << "a view outlives the bytes it reads";
        continue;
      }
      EXPECT_TRUE(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset)
          << "slots " << i << " [" << a.offset << ", +" << a.bytes << ") and " << j << " ["
          << b.offset << ", +" << b.bytes << ") are live together and overlap";
    }
  }
  EXPECT_LE(plan.live_peak_bytes, plan.arena_bytes);
  EXPECT_LE(plan.arena_bytes, plan.naive_bytes);
}

TEST_F(BufferPlanTest, SmallFunctionGetsTheExpectedOffsets) {
  // Live ranges (op indices): a [0,1], b [1,3], k [2,5], c [3,5], h [4,4] (unused).
  // Largest first: a -> 0; b (with a) -> 1024; c (with b only) -> the gap at 0;
  // k (with b, c) -> on top, 2048; h (with c, k) -> best fit in the gap at 1024.
  mlir::func::FuncOp func = Parse(R"mlir(
    func.func @known(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<f32>) {
      %a = arith.addf %x, %x : tensor<16x16xf32>
      %b = arith.mulf %a, %a : tensor<16x16xf32>
      %k = arith.constant dense<2.0> : tensor<f32>
      %c = arith.subf %b, %x : tensor<16x16xf32>
      %h = arith.constant dense<1.0> : tensor<3xf16>
      return %c, %k : tensor<16x16xf32>, tensor<f32>
    })mlir",
                                  "known");
  ASSERT_TRUE(func);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(func);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->slots.size(), 5u);
  const int64_t offsets[] = {0, 1024, 2048, 0, 1024};
  const int64_t bytes[] = {1024, 1024, 64, 1024, 64};
  const int64_t first[] = {0, 1, 2, 3, 4};
  const int64_t last[] = {1, 3, 5, 5, 4};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(plan->slots[i].offset, offsets[i]) << "slot " << i;
    EXPECT_EQ(plan->slots[i].bytes, bytes[i]) << "slot " << i;
    EXPECT_EQ(plan->slots[i].first, first[i]) << "slot " << i;
    EXPECT_EQ(plan->slots[i].last, last[i]) << "slot " << i;
    EXPECT_FALSE(plan->slots[i].donated());
  }
  EXPECT_EQ(plan->arena_bytes, 2112);
  EXPECT_EQ(plan->naive_bytes, 3200);
  EXPECT_EQ(plan->live_peak_bytes, 2112);
  EXPECT_EQ(plan->num_arena_slots(), 5);
  ExpectSound(*plan);
}

TEST_F(BufferPlanTest, UpdatesOverwriteArgumentsNothingReadsLater) {
  // %p is read again after the update, so new_param needs its own bytes; the
  // momentum buffer is read by the update alone and is updated in place.
  mlir::func::FuncOp func = Parse(R"mlir(
    func.func @opt(%p: tensor<8x8xf32>, %g: tensor<8x8xf32>, %buf: tensor<8x8xf32>,
                   %lr: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
      %p1, %b1 = gpt.muon_update %p, %g, %buf, %lr
          : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
      %u = arith.addf %p, %p : tensor<8x8xf32>
      return %p1, %b1, %u : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
    })mlir",
                                  "opt");
  ASSERT_TRUE(func);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(func);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->slots.size(), 3u);
  EXPECT_EQ(plan->slots[0].donated_arg, -1);
  EXPECT_GE(plan->slots[0].offset, 0);
  EXPECT_EQ(plan->slots[1].donated_arg, 2);
  EXPECT_EQ(plan->slots[1].offset, -1);
  EXPECT_EQ(plan->donated_bytes, 256);
  EXPECT_EQ(plan->arena_bytes, 512);
  ExpectSound(*plan);
}

TEST_F(BufferPlanTest, DynamicShapeNamesTheOpAndValue) {
  mlir::func::FuncOp func = Parse(R"mlir(
    func.func @dyn(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
      %a = arith.addf %x, %x : tensor<?x8xf32>
      return %a : tensor<?x8xf32>
    })mlir",
                                  "dyn");
  ASSERT_TRUE(func);
  mlir::Operation* at_fault = nullptr;
  absl::StatusOr<BufferPlan> plan = PlanBuffers(func, &at_fault);
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("'arith.addf'"), std::string::npos) << message;
  EXPECT_NE(message.find("(%0)"), std::string::npos) << message;
  EXPECT_NE(message.find("tensor<?x8xf32>"), std::string::npos) << message;
  ASSERT_NE(at_fault, nullptr);
  EXPECT_EQ(at_fault->getName().getStringRef(), "arith.addf");
}

TEST_F(BufferPlanTest, ReshapeOfAResultIsAViewOfItsBytes) {
  auto func = Parse(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %a = gpt.relu_square %x : tensor<4x8xf32>
      %r = gpt.reshape %a to [32] : tensor<4x8xf32>
      %s = gpt.softcap %r {cap = 15.0 : f64} : tensor<32xf32>
      %b = gpt.reshape %s to [4, 8] : tensor<32xf32>
      %c = gpt.add %b, %x : tensor<4x8xf32>, tensor<4x8xf32>
      return %c : tensor<4x8xf32>
    })mlir", "f");
  ASSERT_TRUE(func);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(func);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectSound(*plan);
  ASSERT_EQ(plan->slots.size(), 5u);
  EXPECT_EQ(plan->slots[1].alias_of, 0);  // %r views %a
  EXPECT_EQ(plan->slots[1].offset, plan->slots[0].offset);
  EXPECT_EQ(plan->slots[2].alias_of, 0);  // the softcap overwrites %r, which dies at it: in place
  EXPECT_EQ(plan->slots[3].alias_of, 0);  // %b views %s
  EXPECT_EQ(plan->slots[4].alias_of, 0);  // %c = %b + %x in place of %b
  EXPECT_EQ(plan->slots[0].last, 5);      // the shared bytes live to the return
  EXPECT_EQ(plan->arena_bytes, 128);      // one 4x8 f32 buffer for the whole chain
}

TEST_F(BufferPlanTest, ElementwiseResultsTakeOnlyOperandsThatDieThere) {
  auto func = Parse(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
      %a = gpt.relu_square %x : tensor<4x8xf32>
      %b = gpt.softcap %a {cap = 15.0 : f64} : tensor<4x8xf32>
      %c = gpt.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
      %d = gpt.mul %c, %c : tensor<4x8xf32>, tensor<4x8xf32>
      return %d, %b : tensor<4x8xf32>, tensor<4x8xf32>
    })mlir", "f");
  ASSERT_TRUE(func);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(func);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectSound(*plan);
  ASSERT_EQ(plan->slots.size(), 4u);      // %a, %b, %c, %d
  EXPECT_EQ(plan->slots[0].alias_of, -1);  // %a: its operand %x is the caller's, never overwritten
  EXPECT_EQ(plan->slots[1].alias_of, -1);  // %b: %a is read again by the add
  EXPECT_EQ(plan->slots[2].alias_of, 0);   // %c: %b lives on (returned), %a dies here
  EXPECT_EQ(plan->slots[3].alias_of, -1);  // %d: %c passed twice to the mul, not in place
}

TEST_F(BufferPlanTest, RealStepIsSoundAndMicroStepSharesMemory) {
  StepConfig config;
  config.model = *ModelConfig::FromDepth(1, 512, 64, 128, 1);
  config.batch_size = 2;
  config.seq_len = 64;
  auto module = BuildStepModule(context_, config);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(RunToStage(**module, Stage::kAutodiff).ok());
  for (const char* name : {kMicroStepFunction, kOptimizerStepFunction}) {
    SCOPED_TRACE(name);
    auto func = (**module).lookupSymbol<mlir::func::FuncOp>(name);
    ASSERT_TRUE(func);
    absl::StatusOr<BufferPlan> plan = PlanBuffers(func);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ExpectSound(*plan);
  }
  auto micro = (**module).lookupSymbol<mlir::func::FuncOp>(kMicroStepFunction);
  absl::StatusOr<BufferPlan> plan = PlanBuffers(micro);
  ASSERT_TRUE(plan.ok());
  EXPECT_LT(plan->arena_bytes, plan->naive_bytes);
  // The returned gradients are the accumulations into the caller's gradient buffers: each is
  // donated, in place on its grad/<param> argument, and takes no arena bytes.
  int64_t returned = 0;
  mlir::Operation* ret = micro.getBody().front().getTerminator();
  for (mlir::Value v : ret->getOperands().drop_front()) {  // the loss is rank 0, in the arena
    auto type = llvm::cast<mlir::RankedTensorType>(v.getType());
    returned += (type.getNumElements() * 4 + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    const Slot* slot = nullptr;
    for (const Slot& s : plan->slots) {
      if (s.op == v.getDefiningOp()) slot = &s;
    }
    ASSERT_NE(slot, nullptr);
    ASSERT_TRUE(slot->donated()) << "a gradient accumulation is not in place";
    EXPECT_TRUE(micro.getArgAttrOfType<mlir::StringAttr>(slot->donated_arg, "gpt.name").getValue().starts_with("grad/"));
  }
  EXPECT_GE(plan->donated_bytes, returned);

  auto opt = (**module).lookupSymbol<mlir::func::FuncOp>(kOptimizerStepFunction);
  absl::StatusOr<BufferPlan> opt_plan = PlanBuffers(opt);
  ASSERT_TRUE(opt_plan.ok());
  for (const Slot& slot : opt_plan->slots) {
    if (slot.op->getNumResults() > 1) {
      EXPECT_TRUE(slot.donated()) << "every update is in place";
    }
  }
}

}  // namespace
}  // namespace gpt_sft::compiler
