// CompileFusionKernels on modules lowered by gpt-lower-fusions: one kernel per generic in
// walk order across functions, gpt.kernel on each generic, a host ELF object, vectorized IR,
// and errors naming the op for generics it cannot compile.
#include "compiler/codegen/fusion_kernels.h"

#include <string>

#include "ir/gpt_dialect.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"  // first: lower_fusions_pass.h returns unique_ptr<mlir::Pass>
#include "compiler/transforms/lower_fusions_pass.h"
#include "mlir/Pass/PassManager.h"

namespace gpt_sft::compiler {
namespace {

constexpr char kFusions[] = R"mlir(
func.func @chain(%h: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = gpt.fusion (%h, %x) {gpt.offsets = array<i64: 128>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %0 = gpt.relu_square %a : tensor<4x8xf32>
    %1 = gpt.add %0, %b : tensor<4x8xf32>, tensor<4x8xf32>
    %2 = gpt.softcap %1 {cap = 15.0 : f64} : tensor<4x8xf32>
    gpt.yield %2 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
func.func @grads(%x: tensor<1000xf64>, %dy: tensor<1000xf64>, %y: tensor<1000xf64>) -> (tensor<1000xf64>, tensor<1000xf64>) {
  %r:2 = gpt.fusion (%x, %dy, %y) : (tensor<1000xf64>, tensor<1000xf64>, tensor<1000xf64>) -> (tensor<1000xf64>, tensor<1000xf64>) {
  ^bb0(%a: tensor<1000xf64>, %b: tensor<1000xf64>, %c: tensor<1000xf64>):
    %0 = gpt.relu_square_grad %a, %b : tensor<1000xf64>, tensor<1000xf64>
    %1 = gpt.softcap_grad %c, %0 : tensor<1000xf64>, tensor<1000xf64>
    %2 = gpt.softcap %c {cap = 30.0 : f64} : tensor<1000xf64>
    gpt.yield %1, %2 : tensor<1000xf64>, tensor<1000xf64>
  }
  return %r#0, %r#1 : tensor<1000xf64>, tensor<1000xf64>
}
func.func @second(%x: tensor<7xf32>) -> tensor<7xf32> {
  %r = gpt.fusion (%x) : (tensor<7xf32>) -> tensor<7xf32> {
  ^bb0(%a: tensor<7xf32>):
    %0 = gpt.mul %a, %a : tensor<7xf32>, tensor<7xf32>
    gpt.yield %0 : tensor<7xf32>
  }
  return %r : tensor<7xf32>
}
)mlir";

std::unique_ptr<mlir::MLIRContext> MakeContext() {
  mlir::DialectRegistry registry;
  registry.insert<gpt::GptDialect, mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

mlir::OwningOpRef<mlir::ModuleOp> ParseLowered(mlir::MLIRContext& context, const char* text, bool lower = true) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module || !lower) return module;
  mlir::PassManager pm(&context);
  pm.addPass(CreateLowerFusionsPass());
  if (mlir::failed(pm.run(*module))) return {};
  return module;
}

TEST(FusionKernels, OneKernelPerGenericInWalkOrderWithItsAttribute) {
  auto context = MakeContext();
  auto module = ParseLowered(*context, kFusions);
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_EQ(object->kernels.size(), 3u);
  const FusionKernel& chain = object->kernels[0];
  EXPECT_EQ(chain.symbol, "gpt_fusion_0");
  EXPECT_EQ(chain.num_inputs, 2);
  EXPECT_EQ(chain.num_results, 1);
  EXPECT_EQ(chain.num_elements, 32);
  EXPECT_EQ(chain.element_bytes, 4);
  const FusionKernel& grads = object->kernels[1];
  EXPECT_EQ(grads.symbol, "gpt_fusion_1");
  EXPECT_EQ(grads.num_inputs, 3);
  EXPECT_EQ(grads.num_results, 2);
  EXPECT_EQ(grads.num_elements, 1000);
  EXPECT_EQ(grads.element_bytes, 8);
  EXPECT_EQ(object->kernels[2].symbol, "gpt_fusion_2");
  EXPECT_EQ(object->kernels[2].num_elements, 7);

  std::vector<std::string> attrs;
  module->walk([&](mlir::linalg::GenericOp generic) {
    auto symbol = generic->getAttrOfType<mlir::StringAttr>(kKernelAttrName);
    attrs.push_back(symbol ? symbol.str() : "<none>");
    if (symbol && symbol.getValue() == "gpt_fusion_0") {
      EXPECT_TRUE(generic->hasAttr("gpt.offsets")) << "the planned offsets stay beside the kernel";
    }
  });
  EXPECT_EQ(attrs, (std::vector<std::string>{"gpt_fusion_0", "gpt_fusion_1", "gpt_fusion_2"}));
}

// The bf16 step's many lone roundings (and any repeated chain) compile once: generics with
// equivalent bodies share a kernel whatever their shapes; a different constant (cap) or
// element type is another kernel.
constexpr char kRepeated[] = R"mlir(
func.func @repeated(%x: tensor<4x8xf32>, %y: tensor<100xf32>, %z: tensor<100xf32>, %w: tensor<6xf64>)
    -> (tensor<4x8xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<6xf64>) {
  %a = gpt.fusion (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%e: tensor<4x8xf32>):
    %0 = gpt.round_bf16 %e : tensor<4x8xf32>
    gpt.yield %0 : tensor<4x8xf32>
  }
  %b = gpt.fusion (%y) : (tensor<100xf32>) -> tensor<100xf32> {
  ^bb0(%e: tensor<100xf32>):
    %0 = gpt.round_bf16 %e : tensor<100xf32>
    gpt.yield %0 : tensor<100xf32>
  }
  %c = gpt.fusion (%y) : (tensor<100xf32>) -> tensor<100xf32> {
  ^bb0(%e: tensor<100xf32>):
    %0 = gpt.softcap %e {cap = 15.0 : f64} : tensor<100xf32>
    gpt.yield %0 : tensor<100xf32>
  }
  %d = gpt.fusion (%z) : (tensor<100xf32>) -> tensor<100xf32> {
  ^bb0(%e: tensor<100xf32>):
    %0 = gpt.softcap %e {cap = 30.0 : f64} : tensor<100xf32>
    gpt.yield %0 : tensor<100xf32>
  }
  %f = gpt.fusion (%w) : (tensor<6xf64>) -> tensor<6xf64> {
  ^bb0(%e: tensor<6xf64>):
    %0 = gpt.mul %e, %e : tensor<6xf64>, tensor<6xf64>
    gpt.yield %0 : tensor<6xf64>
  }
  return %a, %b, %c, %d, %f : tensor<4x8xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<6xf64>
}
func.func @again(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = gpt.fusion (%x) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %0 = gpt.mul %a, %a : tensor<3xf32>, tensor<3xf32>
    gpt.yield %0 : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
)mlir";

TEST(FusionKernels, EquivalentBodiesShareOneKernelWhateverTheirShapes) {
  auto context = MakeContext();
  auto module = ParseLowered(*context, kRepeated);
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_TRUE(object.ok()) << object.status();
  std::vector<std::string> attrs;
  module->walk([&](mlir::linalg::GenericOp generic) {
    auto symbol = generic->getAttrOfType<mlir::StringAttr>(kKernelAttrName);
    attrs.push_back(symbol ? symbol.str() : "<none>");
  });
  // round, round (shared), softcap 15, softcap 30, f64 mul, f32 mul (not the f64 one's).
  EXPECT_EQ(attrs, (std::vector<std::string>{"gpt_fusion_0", "gpt_fusion_0", "gpt_fusion_1", "gpt_fusion_2",
                                             "gpt_fusion_3", "gpt_fusion_4"}));
  ASSERT_EQ(object->kernels.size(), 5u);
  EXPECT_EQ(object->kernels[0].num_elements, 32) << "the first generic's shape";
  EXPECT_EQ(object->kernels[3].element_bytes, 8);
}

TEST(FusionKernels, EmitsHostElfAndVectorizedIr) {
  auto context = MakeContext();
  auto module = ParseLowered(*context, kFusions);
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_GT(object->object.size(), 64u);
  EXPECT_EQ(object->object.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(object->target.find("x86_64"), std::string::npos) << object->target;
  const std::string& ir = object->llvm_ir;
  for (const char* symbol : {"gpt_fusion_0", "gpt_fusion_1", "gpt_fusion_2"}) {
    EXPECT_NE(ir.find(std::string("define void @") + symbol + "(ptr"), std::string::npos) << symbol << "\n" << ir;
  }
  EXPECT_NE(ir.find("nounwind"), std::string::npos);
  // The f32 loops (tanh approximated) vectorize: 16 lanes with AVX-512, 8 with AVX2, 4 with SSE.
  EXPECT_TRUE(ir.find("<16 x float>") != std::string::npos || ir.find("<8 x float>") != std::string::npos ||
              ir.find("<4 x float>") != std::string::npos)
      << ir;
  // f64 tanh is libm's.
  EXPECT_NE(ir.find("@tanh(double"), std::string::npos) << ir;
  // The loops are marked parallel, so the vector loop has no overlap check in front of it:
  // a fusion that writes its input's own bytes (in place) runs vectorized too.
  EXPECT_NE(ir.find("llvm.loop.parallel_accesses"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("vector.memcheck"), std::string::npos) << ir;
}

TEST(FusionKernels, ModuleWithoutGenericsGivesAnEmptyObject) {
  auto context = MakeContext();
  auto module = ParseLowered(*context, "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }");
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_TRUE(object.ok()) << object.status();
  EXPECT_TRUE(object->kernels.empty());
  EXPECT_EQ(object->object.substr(0, 4), "\x7f" "ELF");
}

TEST(FusionKernels, ErrorNamesTheGenericItCannotCompile) {
  auto context = MakeContext();
  constexpr char kTranspose[] = R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
func.func @transpose(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32> loc("transpose.mlir":7:8)
  return %r : tensor<4x4xf32>
}
)mlir";
  auto module = ParseLowered(*context, kTranspose, /*lower=*/false);
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_FALSE(object.ok());
  const std::string message(object.status().message());
  EXPECT_NE(message.find("linalg.generic"), std::string::npos) << message;
  EXPECT_NE(message.find("transpose.mlir\":7:8"), std::string::npos) << message;
  EXPECT_NE(message.find("identity"), std::string::npos) << message;
  module->walk([](mlir::linalg::GenericOp generic) { EXPECT_FALSE(generic->hasAttr(kKernelAttrName)); });
}

TEST(FusionKernels, ErrorNamesAnOpTheBodyCannotHold) {
  auto context = MakeContext();
  constexpr char kTensorInBody[] = R"mlir(
#id = affine_map<(i) -> (i)>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
)mlir";
  auto module = ParseLowered(*context, kTensorInBody, /*lower=*/false);
  ASSERT_TRUE(module);
  absl::StatusOr<KernelObject> object = CompileFusionKernels(*module);
  ASSERT_FALSE(object.ok());
  EXPECT_NE(std::string(object.status().message()).find("linalg.index"), std::string::npos) << object.status();
}

}  // namespace
}  // namespace gpt_sft::compiler
