// The compiled fusion kernels (linked by lld into a shared object, as the cpu target ships
// them, and dlopened) against the interpreter running the original gpt.fusion: every scalar op gpt-lower-fusions knows,
// f32 and f64 (round_bf16: f32 only), sizes that leave vector remainders (1, 7, 1000, 4099, 2-D), the range run
// whole and in 3 uneven pieces. f32 tanh is a polynomial approximation, hence its tolerance;
// the bf16 softcap rounds after its tanh, so that approximation may move a value to the next
// bf16 value (2^-8 relative), its own tolerance.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/fusion_kernels.h"
#include "compiler/codegen/host_module.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"  // first: lower_fusions_pass.h returns unique_ptr<mlir::Pass>
#include "compiler/transforms/lower_fusions_pass.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/interpreter/test_module.h"

namespace gpt_sft::runtime {
namespace {

/// The kernels' object linked into a shared object and loaded, as the cpu driver loads a
/// host module.
class LoadedKernels {
 public:
  static absl::StatusOr<std::unique_ptr<LoadedKernels>> Load(const std::string& object) {
    absl::StatusOr<std::string> so = compiler::LinkHostSharedObject(object);
    if (!so.ok()) return so.status();
    const std::string path = ::testing::TempDir() + "/fusion_kernels_" + std::to_string(getpid()) + ".so";
    std::ofstream(path, std::ios::binary) << *so;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return absl::InternalError(absl::StrCat("dlopen ", path, ": ", dlerror()));
    return std::unique_ptr<LoadedKernels>(new LoadedKernels(handle));
  }
  ~LoadedKernels() { dlclose(handle_); }
  absl::StatusOr<compiler::FusionKernelFn> Find(const std::string& symbol) const {
    void* address = dlsym(handle_, symbol.c_str());
    if (address == nullptr) return absl::NotFoundError(absl::StrCat("no kernel ", symbol));
    return reinterpret_cast<compiler::FusionKernelFn>(address);
  }

 private:
  explicit LoadedKernels(void* handle) : handle_(handle) {}
  void* handle_;
};

/// One fusion body: its inputs, ops (with %T for the tensor type) and yielded values.
struct Body {
  std::string name;
  int inputs;
  std::vector<std::string> ops;
  std::vector<std::string> yields;
  bool f32_only = false;  // gpt.round_bf16 takes f32 only
  double f32_tolerance = 1e-6;
};

const std::vector<Body>& Bodies() {
  static const std::vector<Body> bodies = {
      {"add", 2, {"%0 = gpt.add %a0, %a1 : %T, %T"}, {"%0"}},
      {"mul", 2, {"%0 = gpt.mul %a0, %a1 : %T, %T"}, {"%0"}},
      {"relu_square", 1, {"%0 = gpt.relu_square %a0 : %T"}, {"%0"}},
      {"relu_square_grad", 2, {"%0 = gpt.relu_square_grad %a0, %a1 : %T, %T"}, {"%0"}},
      {"softcap", 1, {"%0 = gpt.softcap %a0 {cap = 1.5 : f64} : %T"}, {"%0"}},
      {"softcap_grad", 2, {"%0 = gpt.softcap_grad %a0, %a1 {cap = 3.0 : f64} : %T, %T"}, {"%0"}},
      {"forward_chain",
       2,
       {"%0 = gpt.relu_square %a0 : %T", "%1 = gpt.add %0, %a1 : %T, %T", "%2 = gpt.softcap %1 {cap = 15.0 : f64} : %T"},
       {"%2"}},
      {"backward_chain_two_results",
       3,
       {"%0 = gpt.relu_square_grad %a0, %a1 : %T, %T", "%1 = gpt.softcap_grad %a2, %0 {cap = 2.0 : f64} : %T, %T",
        "%2 = gpt.mul %1, %a0 : %T, %T"},
       {"%1", "%2"}},
      {"round_bf16", 1, {"%0 = gpt.round_bf16 %a0 : %T"}, {"%0"}, /*f32_only=*/true},
      // autocast's residual: the sum rounded, the rounding fused after another op.
      {"add_round_bf16", 2, {"%0 = gpt.add %a0, %a1 : %T, %T", "%1 = gpt.round_bf16 %0 : %T"}, {"%1"}, true},
      {"softcap_bf16", 1, {"%0 = gpt.softcap %a0 {round_bf16} : %T"}, {"%0"}, true, 1.0 / 128},
  };
  return bodies;
}

const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{1}, {7}, {1000}, {4099}, {13, 17}, {3, 129}};
  return shapes;
}

std::string FuncName(const Body& body, const std::vector<int64_t>& shape, const std::string& element) {
  return absl::StrCat(body.name, "_", absl::StrJoin(shape, "x"), "_", element);
}

/// One func per (body, shape, element type), each holding one gpt.fusion.
std::string ModuleText() {
  std::string text;
  for (const std::string element : {"f32", "f64"}) {
    for (const std::vector<int64_t>& shape : Shapes()) {
      const std::string t = absl::StrCat("tensor<", absl::StrJoin(shape, "x"), "x", element, ">");
      for (const Body& body : Bodies()) {
        if (body.f32_only && element != "f32") continue;
        std::vector<std::string> args, arg_types, inputs, results(body.yields.size(), t);
        for (int i = 0; i < body.inputs; ++i) {
          args.push_back(absl::StrCat("%x", i, ": ", t));
          arg_types.push_back(t);
          inputs.push_back(absl::StrCat("%a", i, ": ", t));
        }
        std::vector<std::string> operands;
        for (int i = 0; i < body.inputs; ++i) operands.push_back(absl::StrCat("%x", i));
        const std::string result_types = absl::StrJoin(results, ", ");
        absl::StrAppend(&text, "func.func @", FuncName(body, shape, element), "(", absl::StrJoin(args, ", "), ") -> (",
                        result_types, ") {\n  %r:", body.yields.size(), " = gpt.fusion (", absl::StrJoin(operands, ", "),
                        ") : (", absl::StrJoin(arg_types, ", "), ") -> (", result_types, ") {\n  ^bb0(",
                        absl::StrJoin(inputs, ", "), "):\n");
        for (std::string op : body.ops) {
          for (size_t at; (at = op.find("%T")) != std::string::npos;) op.replace(at, 2, t);
          absl::StrAppend(&text, "    ", op, "\n");
        }
        absl::StrAppend(&text, "    gpt.yield ", absl::StrJoin(body.yields, ", "), " : ", result_types, "\n  }\n  return ");
        std::vector<std::string> returned;
        for (size_t r = 0; r < body.yields.size(); ++r) returned.push_back(absl::StrCat("%r#", r));
        absl::StrAppend(&text, absl::StrJoin(returned, ", "), " : ", result_types, "\n}\n");
      }
    }
  }
  return text;
}

/// The f32 tolerance of the body that func `name` was made from.
double F32Tolerance(const std::string& name) {
  for (const Body& body : Bodies()) {
    for (const std::vector<int64_t>& shape : Shapes()) {
      if (FuncName(body, shape, "f32") == name) return body.f32_tolerance;
    }
  }
  return 0;
}

template <typename T>
Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t = Tensor::Zeros(dtype, shape);
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = static_cast<T>(uniform(rng));
  return t;
}

/// Largest |kernel - interpreter| / max(|interpreter|, 1) over all results of one func,
/// the kernel run over [0, n) in the given pieces. (Relative above 1, absolute below: the
/// chains' cancellations near zero make a pure relative error meaningless there.)
template <typename T>
double MaxError(compiler::FusionKernelFn fn, const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                const std::vector<int64_t>& cuts) {
  const int64_t n = expected[0].numel();
  std::vector<std::vector<T>> outputs(expected.size(), std::vector<T>(n, T(-12345)));
  std::vector<void*> buffers;
  for (const Tensor& in : inputs) buffers.push_back(const_cast<void*>(static_cast<const void*>(in.data<T>())));
  for (auto& out : outputs) buffers.push_back(out.data());
  for (size_t p = 0; p + 1 < cuts.size(); ++p) fn(buffers.data(), cuts[p], cuts[p + 1]);
  double worst = 0;
  for (size_t r = 0; r < expected.size(); ++r) {
    for (int64_t i = 0; i < n; ++i) {
      const double e = expected[r].data<T>()[i];
      const double a = outputs[r][i];
      worst = std::max(worst, std::isfinite(a) ? std::abs(a - e) / std::max(std::abs(e), 1.0) : INFINITY);
    }
  }
  return worst;
}

TEST(FusionKernelsVsInterpreter, EveryOpShapeAndTypeWholeAndInPieces) {
  absl::StatusOr<std::unique_ptr<testing::TestModule>> original = testing::TestModule::Parse(ModuleText());
  ASSERT_TRUE(original.ok()) << original.status();
  mlir::MLIRContext* context = (*original)->context();
  context->getOrLoadDialect<mlir::linalg::LinalgDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> lowered = (*original)->module().clone();
  mlir::PassManager pm(context);
  pm.addPass(compiler::CreateLowerFusionsPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(*lowered)));
  absl::StatusOr<compiler::KernelObject> object = compiler::CompileFusionKernels(*lowered);
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<std::unique_ptr<LoadedKernels>> library = LoadedKernels::Load(object->object);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Interpreter> interpreter = (*original)->NewInterpreter();

  std::mt19937 rng(7);
  double worst_f32 = 0, worst_f64 = 0;
  int checked = 0;
  for (auto func : lowered->getOps<mlir::func::FuncOp>()) {
    const std::string name = func.getSymName().str();
    mlir::linalg::GenericOp generic;
    func.walk([&](mlir::linalg::GenericOp op) { generic = op; });
    ASSERT_TRUE(generic) << name;
    auto symbol = generic->getAttrOfType<mlir::StringAttr>(compiler::kKernelAttrName);
    ASSERT_TRUE(symbol) << name;
    absl::StatusOr<compiler::FusionKernelFn> found = (*library)->Find(symbol.str());
    ASSERT_TRUE(found.ok()) << found.status();
    const compiler::FusionKernelFn fn = *found;

    const bool f64 = name.size() > 3 && name.substr(name.size() - 3) == "f64";
    auto type = llvm::cast<mlir::RankedTensorType>(func.getFunctionType().getInput(0));
    const Shape shape(type.getShape().begin(), type.getShape().end());
    std::vector<Tensor> inputs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      inputs.push_back(f64 ? RandomTensor<double>(DType::kF64, shape, rng) : RandomTensor<float>(DType::kF32, shape, rng));
    }
    absl::StatusOr<std::vector<Tensor>> expected = interpreter->Run(name, inputs);
    ASSERT_TRUE(expected.ok()) << name << ": " << expected.status();
    const int64_t n = type.getNumElements();
    for (const std::vector<int64_t>& cuts : {std::vector<int64_t>{0, n}, std::vector<int64_t>{0, n / 5, n / 2 + 1, n}}) {
      std::vector<int64_t> pieces = cuts;
      for (int64_t& c : pieces) c = std::min(c, n);
      const double error = f64 ? MaxError<double>(fn, inputs, *expected, pieces) : MaxError<float>(fn, inputs, *expected, pieces);
      EXPECT_LE(error, f64 ? 1e-12 : F32Tolerance(name)) << name << " in " << pieces.size() - 1 << " pieces";
      (f64 ? worst_f64 : worst_f32) = std::max(f64 ? worst_f64 : worst_f32, error);
    }
    ++checked;
  }
  const int bodies_in_f64 =
      static_cast<int>(llvm::count_if(Bodies(), [](const Body& body) { return !body.f32_only; }));
  EXPECT_EQ(checked, static_cast<int>(Shapes().size() * (Bodies().size() + bodies_in_f64)));
  std::cout << "kernels checked: " << checked << ", worst error f32 " << worst_f32 << ", f64 " << worst_f64 << "\n";
}

}  // namespace
}  // namespace gpt_sft::runtime
