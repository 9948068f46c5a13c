#include "runtime/interpreter/prepared_function.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/interpreter/test_module.h"

namespace gpt_sft::runtime::interp {
namespace {

using testing::TestModule;

// Slots: %x 0, %unused 1, %a 2, %b 3, %c 4, %d 5.
constexpr char kIr[] = R"(
  func.func @f(%x: tensor<4xf32>, %unused: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %a = gpt.relu_square %x : tensor<4xf32>
    %b = gpt.mul %a, %a : tensor<4xf32>, tensor<4xf32>
    %c = gpt.relu_square %x : tensor<4xf32>
    %d = gpt.add %b, %b : tensor<4xf32>, tensor<4xf32>
    return %d, %x : tensor<4xf32>, tensor<4xf32>
  })";

TEST(PreparedFunction, SlotsStepsAndLastUses) {
  auto module = TestModule::Parse(kIr);
  ASSERT_TRUE(module.ok()) << module.status();
  auto func = (*module)->module().lookupSymbol<mlir::func::FuncOp>("f");
  auto fn = Prepare(func, BuiltinOps());
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_EQ(fn->num_slots, 6);
  ASSERT_EQ(fn->steps.size(), 4u);
  EXPECT_EQ(fn->release_at_start, (std::vector<int>{1}));               // %unused
  EXPECT_EQ(fn->steps[0].release_after, (std::vector<int>{}));          // %x is returned
  EXPECT_EQ(fn->steps[1].release_after, (std::vector<int>{2}));         // %a, once though used twice
  EXPECT_EQ(fn->steps[2].release_after, (std::vector<int>{4}));         // %c: never used
  EXPECT_EQ(fn->steps[3].release_after, (std::vector<int>{3}));         // %b
  EXPECT_EQ(fn->result_slots, (std::vector<int>{5, 0}));
  EXPECT_EQ(fn->last_use_step[0], 4);  // func.return
  EXPECT_EQ(fn->last_use_step[5], 4);
  EXPECT_EQ(fn->last_use_step[1], -1);
}

TEST(PreparedFunction, UnknownOpNamesItAndAsksForAutodiff) {
  auto module = TestModule::Parse(R"(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %g = "mystery.gradients"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %g : tensor<4xf32>
    })",
                                  {.verify = true, .allow_unregistered = true});
  ASSERT_TRUE(module.ok()) << module.status();
  auto fn = Prepare((*module)->module().lookupSymbol<mlir::func::FuncOp>("f"), BuiltinOps());
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(fn.status().message().find("unknown op mystery.gradients at"), std::string::npos) << fn.status();
  EXPECT_NE(fn.status().message().find("run gpt-autodiff first"), std::string::npos) << fn.status();
}

TEST(PreparedFunction, EveryDialectOpHasAnImplementation) {
  // The dialect's op list, as the registered operations of a context with gpt loaded.
  auto context = testing::MakeGptContext();
  int gpt_ops = 0;
  for (mlir::RegisteredOperationName name : context->getRegisteredOperations()) {
    if (name.getDialectNamespace() != "gpt") continue;
    // The autodiff placeholder is replaced by gpt-autodiff, never interpreted.
    if (name.getStringRef() == "gpt.gradients") continue;
    // gpt.yield is gpt.fusion's terminator: its operands are the region's results.
    if (name.getStringRef() == "gpt.yield") continue;
    // The launch schedule's host ops live in lowered entry points over memrefs, never in IR
    // the interpreter runs.
    if (name.getStringRef() == "gpt.call_builtin" || name.getStringRef() == "gpt.launch_host_kernel" ||
        name.getStringRef() == "gpt.collective") {
      continue;
    }
    ++gpt_ops;
    EXPECT_NE(BuiltinOps().Find(name.getStringRef().str()), nullptr) << name.getStringRef().str();
  }
  EXPECT_GE(gpt_ops, 25);
}

}  // namespace
}  // namespace gpt_sft::runtime::interp
