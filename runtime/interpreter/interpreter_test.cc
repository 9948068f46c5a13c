// The Interpreter's contract: argument checks, errors, dynamic shapes, last-use release
// (seen in the allocator's stats), donation and the options.
#include "runtime/interpreter/interpreter.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/interpreter/test_module.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime {
namespace {

using testing::TestModule;

std::unique_ptr<TestModule> ParseOrDie(const std::string& ir, TestModule::ParseOptions options = {}) {
  auto module = TestModule::Parse(ir, options);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

Tensor Filled(Shape shape, float value) {
  return Tensor::FromVector<float>(shape, std::vector<float>(NumElements(shape), value));
}

constexpr char kNamedArgs[] = R"(
  func.func @step(%w: tensor<5x8xf32> {gpt.name = "transformer.wte.weight"},
                  %ids: tensor<4x?xi32> {gpt.name = "inputs"}) -> tensor<4x?x8xf32> {
    %x = gpt.embedding %w[%ids] : tensor<5x8xf32>, tensor<4x?xi32>
    return %x : tensor<4x?x8xf32>
  })";

TEST(Interpreter, ArgumentShapeErrorNamesFunctionIndexNameAndShapes) {
  auto module = ParseOrDie(kNamedArgs);
  auto results = module->NewInterpreter()->Run("step", {Filled({5, 9}, 0), Tensor::Zeros(DType::kI32, {4, 3})});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(results.status().message(),
            "@step argument 0 (\"transformer.wte.weight\"): expected tensor<5x8xf32>, got [5,9] f32");
}

TEST(Interpreter, ArgumentElementTypeAndRankAreChecked) {
  auto module = ParseOrDie(kNamedArgs);
  auto interpreter = module->NewInterpreter();
  auto wrong_type = interpreter->Run("step", {Filled({5, 8}, 0), Filled({4, 3}, 0)});
  EXPECT_EQ(wrong_type.status().message(), "@step argument 1 (\"inputs\"): expected tensor<4x?xi32>, got [4,3] f32");
  auto wrong_rank = interpreter->Run("step", {Filled({5, 8}, 0), Tensor::Zeros(DType::kI32, {4})});
  EXPECT_EQ(wrong_rank.status().message(), "@step argument 1 (\"inputs\"): expected tensor<4x?xi32>, got [4] i32");
  auto wrong_count = interpreter->Run("step", {Filled({5, 8}, 0)});
  EXPECT_EQ(wrong_count.status().message(), "@step takes 2 arguments, got 1");
}

TEST(Interpreter, UnknownFunctionListsTheModulesFunctions) {
  auto module = ParseOrDie(kNamedArgs);
  auto results = module->NewInterpreter()->Run("micro_step", {});
  EXPECT_EQ(results.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(results.status().message(), "no func.func @micro_step in the module; it has: @step");
}

TEST(Interpreter, DynamicDimsTakeEachRunsShape) {
  auto module = ParseOrDie(kNamedArgs);
  auto interpreter = module->NewInterpreter();
  for (int64_t t : {1, 6, 3}) {
    auto results = interpreter->Run("step", {Filled({5, 8}, 2), Tensor::Zeros(DType::kI32, {4, t})});
    ASSERT_TRUE(results.ok()) << results.status();
    EXPECT_EQ((*results)[0].shape(), (Shape{4, t, 8}));
    EXPECT_EQ((*results)[0].ToVector<float>(), std::vector<float>(4 * t * 8, 2.0f));
  }
}

TEST(Interpreter, StaticResultDimThatDisagreesNamesTheOpAndBothShapes) {
  // The verifier would reject this type; the interpreter must not trust it either.
  auto module = ParseOrDie(R"(
    func.func @f(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
      %y = "gpt.relu_square"(%x) : (tensor<?x4xf32>) -> tensor<3x4xf32> loc("step.mlir":7:3)
      return %y : tensor<3x4xf32>
    })",
                           {.verify = false});
  auto results = module->NewInterpreter()->Run("f", {Filled({5, 4}, 1)});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().message(),
            "in @f: gpt.relu_square at loc(\"step.mlir\":7:3): result 0 has type tensor<3x4xf32> but the operands "
            "give [5,4] f32");
}

TEST(Interpreter, UnknownOpFailsBeforeRunning) {
  auto module = ParseOrDie(R"(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %g = "autodiff.gradients"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %g : tensor<4xf32>
    })",
                           {.verify = true, .allow_unregistered = true});
  auto results = module->NewInterpreter()->Run("f", {Filled({4}, 1)});
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(results.status().message().find("autodiff.gradients"), std::string::npos);
  EXPECT_NE(results.status().message().find("run gpt-autodiff first"), std::string::npos);
}

// A chain on 4 MiB tensors: with release after the last use, at most two intermediates
// are alive at once, and later ones reuse the cached blocks of released ones.
constexpr char kChain[] = R"(
  func.func @f(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
    %a = gpt.relu_square %x : tensor<1048576xf32>
    %b = gpt.relu_square %a : tensor<1048576xf32>
    %dead = gpt.add %b, %b : tensor<1048576xf32>, tensor<1048576xf32>
    %c = gpt.relu_square %b : tensor<1048576xf32>
    return %c : tensor<1048576xf32>
  })";

TEST(Interpreter, IntermediatesAreReleasedAfterTheirLastUse) {
  auto module = ParseOrDie(kChain);
  auto interpreter = module->NewInterpreter();
  const int64_t block = static_cast<int64_t>(CachingAllocator::BucketSize(4 << 20));
  auto results = interpreter->Run("f", {Filled({1 << 20}, 1.5f)});
  ASSERT_TRUE(results.ok()) << results.status();
  AllocatorStats stats = interpreter->allocator_stats();
  // %a, then %b (and %a released after it); %dead reuses %a's block and is released at
  // once; %c reuses it again, then %b is released. Never more than two blocks live.
  EXPECT_EQ(stats.peak_bytes_live, 2 * block);
  EXPECT_EQ(stats.bytes_live, block);  // only %c, held by the results
  EXPECT_EQ(stats.allocations_fresh, 2);
  EXPECT_EQ(stats.allocations_from_cache, 2);
  results->clear();
  EXPECT_EQ(interpreter->allocator_stats().bytes_live, 0);
  // A second run reuses every block: nothing fresh.
  ASSERT_TRUE(interpreter->Run("f", {Filled({1 << 20}, 1.5f)}).ok());
  EXPECT_EQ(interpreter->allocator_stats().allocations_fresh, 2);
}

constexpr char kAdamw[] = R"(
  func.func @opt(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>,
                 %lr: tensor<f32>, %t: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t
        : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>
    return %p1, %m1, %v1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  })";

std::vector<Tensor> AdamwArgs(Tensor p) {
  return {std::move(p), Filled({4}, 0.5f), Filled({4}, 0), Filled({4}, 0), Tensor::Scalar<float>(0.1f),
          Tensor::Scalar<float>(1.0f)};
}

TEST(Interpreter, MovedInArgumentIsUpdatedInPlace) {
  auto module = ParseOrDie(kAdamw);
  Tensor p = Filled({4}, 1);
  void* data = p.raw_data();
  auto results = module->NewInterpreter()->Run("opt", AdamwArgs(std::move(p)));
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].raw_data(), data);
  EXPECT_NEAR((*results)[0].ToVector<float>()[0], 0.9f, 1e-6);
}

TEST(Interpreter, KeptArgumentIsCopiedNotOverwritten) {
  auto module = ParseOrDie(kAdamw);
  Tensor p = Filled({4}, 1);
  auto results = module->NewInterpreter()->Run("opt", AdamwArgs(p));
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_NE((*results)[0].raw_data(), p.raw_data());
  EXPECT_EQ(p.ToVector<float>(), std::vector<float>(4, 1.0f));
}

constexpr char kAccumulate[] = R"(
  func.func @acc(%grad: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
    %sum = gpt.add %grad, %g : tensor<4xf32>, tensor<4xf32>
    return %sum : tensor<4xf32>
  })";

// gpt.add accumulates into an operand the run alone holds and nothing reads later (a
// gradient buffer moved in), as += does; an operand the caller keeps is left alone.
TEST(Interpreter, AddAccumulatesInPlaceIntoAnOperandOnlyTheRunHolds) {
  auto module = ParseOrDie(kAccumulate);
  Tensor grad = Filled({4}, 1), g = Filled({4}, 2);
  void* data = grad.raw_data();
  std::vector<Tensor> args;
  args.push_back(std::move(grad));
  args.push_back(g);
  auto results = module->NewInterpreter()->Run("acc", std::move(args));
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].raw_data(), data);
  EXPECT_EQ((*results)[0].ToVector<float>(), std::vector<float>(4, 3.0f));

  Tensor kept = Filled({4}, 1);
  results = module->NewInterpreter()->Run("acc", {kept, g});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_NE((*results)[0].raw_data(), kept.raw_data());
  EXPECT_NE((*results)[0].raw_data(), g.raw_data());
  EXPECT_EQ(kept.ToVector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ((*results)[0].ToVector<float>(), std::vector<float>(4, 3.0f));
}

TEST(Interpreter, DonatedViewIsUpdatedInPlace) {
  auto module = ParseOrDie(kAdamw);
  float weights[4] = {1, 1, 1, 1};  // e.g. a ParamStore weight
  auto interpreter = module->NewInterpreter();
  auto not_donated = interpreter->Run("opt", AdamwArgs(Tensor::View(DType::kF32, {4}, weights)));
  ASSERT_TRUE(not_donated.ok()) << not_donated.status();
  EXPECT_EQ(weights[0], 1.0f);
  RunOptions donate;
  donate.donated_args = {0};
  auto donated = interpreter->Run("opt", AdamwArgs(Tensor::View(DType::kF32, {4}, weights)), donate);
  ASSERT_TRUE(donated.ok()) << donated.status();
  EXPECT_NEAR(weights[0], 0.9f, 1e-6);
  EXPECT_EQ((*donated)[0].raw_data(), static_cast<void*>(weights));
}

TEST(Interpreter, DonatedArgumentThatIsAlsoReturnedIsNotOverwritten) {
  // %p is returned, so the update is not its last use: the update goes to a copy.
  auto module = ParseOrDie(R"(
    func.func @opt(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>,
                   %lr: tensor<f32>, %t: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t
          : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>
      return %p1, %p : tensor<4xf32>, tensor<4xf32>
    })");
  float weights[4] = {1, 1, 1, 1};
  RunOptions donate;
  donate.donated_args = {0};
  auto results = module->NewInterpreter()->Run("opt", AdamwArgs(Tensor::View(DType::kF32, {4}, weights)), donate);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(weights[0], 1.0f);
  EXPECT_EQ((*results)[1].ToVector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_NEAR((*results)[0].ToVector<float>()[0], 0.9f, 1e-6);
}

TEST(Interpreter, DonatedIndexOutOfRangeIsAnError) {
  auto module = ParseOrDie(kAdamw);
  RunOptions donate;
  donate.donated_args = {6};
  auto results = module->NewInterpreter()->Run("opt", AdamwArgs(Filled({4}, 1)), donate);
  EXPECT_EQ(results.status().message(), "@opt: donated argument 6 does not exist");
}

TEST(Interpreter, ReturningAnArgumentGivesItBack) {
  auto module = ParseOrDie(R"(
    func.func @f(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
      return %x, %x : tensor<3xi32>, tensor<3xi32>
    })");
  Tensor x = Tensor::FromVector<int32_t>({3}, {1, 2, 3});
  auto results = module->NewInterpreter()->Run("f", {x});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].raw_data(), x.raw_data());
  EXPECT_EQ((*results)[1].raw_data(), x.raw_data());
}

TEST(Interpreter, OptionsSetThreadsAndShareAnAllocator) {
  auto module = ParseOrDie(kChain);
  const int before = kernels::NumThreads();
  InterpreterOptions options;
  options.num_threads = 2;
  options.allocator = std::make_shared<CachingAllocator>();
  auto interpreter = module->NewInterpreter(options);
  EXPECT_EQ(kernels::NumThreads(), 2);
  ASSERT_TRUE(interpreter->Run("f", {Filled({1 << 20}, 1)}).ok());
  EXPECT_EQ(options.allocator->stats().allocations_fresh, 2);
  kernels::SetNumThreads(before);
}

TEST(Interpreter, ObserverSeesEveryOpAndItsResults) {
  auto module = ParseOrDie(kChain);
  std::vector<std::string> seen;
  InterpreterOptions options;
  options.observer = [&](const OpEvent& event) {
    seen.push_back(std::string(event.op_name) + "#" + std::to_string(event.step));
    EXPECT_EQ(event.function, "f");
    ASSERT_EQ(event.results.size(), 1u);
    EXPECT_EQ(event.results[0].shape(), (Shape{1 << 20}));
    EXPECT_NE(event.location.find("loc("), std::string::npos);
  };
  ASSERT_TRUE(module->NewInterpreter(options)->Run("f", {Filled({1 << 20}, 1)}).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"gpt.relu_square#0", "gpt.relu_square#1", "gpt.add#2",
                                            "gpt.relu_square#3"}));
}

TEST(Interpreter, ArgumentAndResultNames) {
  auto module = ParseOrDie(R"(
    func.func @f(%w: tensor<2xf32> {gpt.name = "lm_head.weight"}, %x: tensor<2xf32>)
        -> (tensor<2xf32> {gpt.name = "loss"}) {
      return %w : tensor<2xf32>
    })");
  auto interpreter = module->NewInterpreter();
  auto args = interpreter->ArgumentNames("f");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(*args, (std::vector<std::string>{"lm_head.weight", ""}));
  auto results = interpreter->ResultNames("f");
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(*results, (std::vector<std::string>{"loss"}));
  EXPECT_EQ(interpreter->ArgumentNames("g").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpt_sft::runtime
