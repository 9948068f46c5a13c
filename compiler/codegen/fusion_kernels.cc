//===- fusion_kernels.cc - linalg.generic fusions to a native object ------===//
//
// 1. For each generic (walk order), check it is what gpt-lower-fusions makes; unless an earlier
//    generic has an equivalent body (same ops, constants, arity, element type: its kernel
//    serves both, whatever their shapes, e.g. the bf16 step's many lone roundings), build, in
//    a separate kernels module, `func.func @gpt_fusion_<n>(%buffers: !llvm.ptr, %begin: i64,
//    %end: i64)`: load the buffer pointers once, then an scf.for over [begin, end) that loads
//    each input element, runs a clone of the generic's scalar body and stores each yield.
// 2. Lower that module to the LLVM dialect: f32 tanh becomes MLIR's polynomial approximation
//    first (a libm call would keep the loop scalar), f64 tanh a call to libm's tanh.
// 3. Translate to LLVM IR for the host (triple, CPU, features on every function, nounwind),
//    mark each loop parallel (elementwise: no iteration reads what another writes, so the
//    vectorizer needs no overlap check, which in-place fusions always failed), run LLVM's O3
//    pipeline (the loop vectorizer picks the host's widest useful vectors) and emit a
//    relocatable object into memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/fusion_kernels.h"

#include "compiler/codegen/host_target.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace gpt_sft::compiler {
namespace {

std::string LocationOf(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return os.str();
}

absl::Status OpError(mlir::Operation* op, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat(op->getName().getStringRef().str(), " at ", LocationOf(op), ": gpt codegen: ", why));
}

/// The one tensor type of a generic gpt-lower-fusions made, or an error saying what differs.
absl::StatusOr<mlir::RankedTensorType> FusionType(mlir::linalg::GenericOp generic) {
  mlir::RankedTensorType common;
  llvm::SmallVector<mlir::Type> types(generic->getOperandTypes());
  types.append(generic->getResultTypes().begin(), generic->getResultTypes().end());
  for (mlir::Type type : types) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !(tensor.getElementType().isF32() || tensor.getElementType().isF64())) {
      return OpError(generic, "every operand and result must be a static f32 or f64 tensor");
    }
    if (common && tensor != common) return OpError(generic, "operands and results must share one tensor type");
    common = tensor;
  }
  if (!common || generic.getNumResults() == 0) return OpError(generic, "a fusion kernel needs a result");
  for (mlir::AffineMap map : generic.getIndexingMapsArray()) {
    if (!map.isIdentity()) return OpError(generic, "every indexing map must be the identity");
  }
  for (mlir::utils::IteratorType iterator : generic.getIteratorTypesArray()) {
    if (iterator != mlir::utils::IteratorType::parallel) return OpError(generic, "every iterator must be parallel");
  }
  mlir::Block& body = generic.getRegion().front();
  for (mlir::BlockArgument out : body.getArguments().drop_front(generic.getNumDpsInputs())) {
    if (!out.use_empty()) return OpError(generic, "the body reads an output element (outs must be tensor.empty)");
  }
  for (mlir::Operation& op : body.without_terminator()) {
    llvm::StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((dialect != "arith" && dialect != "math") || op.getNumRegions() != 0) {
      return OpError(&op, "only scalar arith and math ops can be compiled in a fusion body");
    }
  }
  return common;
}

/// The kernel (index into `firsts`, the first generic of each kernel) that computes what
/// `generic` does: the same element type, inputs and results, and an equivalent body (the same
/// scalar ops and constants). The kernel is a range kernel, so the shapes may differ.
std::optional<size_t> SameKernel(mlir::linalg::GenericOp generic, llvm::ArrayRef<mlir::linalg::GenericOp> firsts) {
  const mlir::Type element = llvm::cast<mlir::ShapedType>(generic.getResult(0).getType()).getElementType();
  for (size_t i = 0; i < firsts.size(); ++i) {
    mlir::linalg::GenericOp first = firsts[i];
    if (first.getNumDpsInputs() != generic.getNumDpsInputs() || first.getNumResults() != generic.getNumResults() ||
        llvm::cast<mlir::ShapedType>(first.getResult(0).getType()).getElementType() != element) {
      continue;
    }
    if (mlir::OperationEquivalence::isRegionEquivalentTo(&first.getRegion(), &generic.getRegion(),
                                                         mlir::OperationEquivalence::IgnoreLocations)) {
      return i;
    }
  }
  return std::nullopt;
}

/// Adds `func.func @symbol(%buffers, %begin, %end)` computing `generic` to `kernels`.
void BuildKernel(mlir::linalg::GenericOp generic, mlir::Type element, const std::string& symbol,
                 mlir::ModuleOp kernels) {
  mlir::MLIRContext* context = kernels.getContext();
  mlir::Location loc = generic.getLoc();
  auto ptr = mlir::LLVM::LLVMPointerType::get(context);
  auto i64 = mlir::IntegerType::get(context, 64);
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(kernels.getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, symbol, b.getFunctionType({ptr, i64, i64}, {}));
  mlir::Block* entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  const int num_inputs = generic.getNumDpsInputs();
  const int num_buffers = num_inputs + generic.getNumResults();
  llvm::SmallVector<mlir::Value> buffers;
  for (int i = 0; i < num_buffers; ++i) {
    mlir::Value slot = b.create<mlir::LLVM::GEPOp>(loc, ptr, ptr, entry->getArgument(0),
                                                   llvm::ArrayRef<mlir::LLVM::GEPArg>{i}, /*inbounds=*/true);
    buffers.push_back(b.create<mlir::LLVM::LoadOp>(loc, ptr, slot));
  }
  mlir::Value one = b.create<mlir::arith::ConstantOp>(loc, b.getI64IntegerAttr(1));
  mlir::Block& body = generic.getRegion().front();
  b.create<mlir::scf::ForOp>(
      loc, entry->getArgument(1), entry->getArgument(2), one, mlir::ValueRange{},
      [&](mlir::OpBuilder& nested, mlir::Location nested_loc, mlir::Value index, mlir::ValueRange) {
        auto element_ptr = [&](int buffer) {
          return nested.create<mlir::LLVM::GEPOp>(nested_loc, ptr, element, buffers[buffer], mlir::ValueRange{index},
                                                  /*inbounds=*/true);
        };
        mlir::IRMapping scalar_of;
        for (int i = 0; i < num_inputs; ++i) {
          scalar_of.map(body.getArgument(i), nested.create<mlir::LLVM::LoadOp>(nested_loc, element, element_ptr(i)));
        }
        for (mlir::Operation& op : body.without_terminator()) nested.clone(op, scalar_of);
        auto yield = llvm::cast<mlir::linalg::YieldOp>(body.getTerminator());
        for (auto [r, value] : llvm::enumerate(yield.getValues())) {
          nested.create<mlir::LLVM::StoreOp>(nested_loc, scalar_of.lookupOrDefault(value),
                                             element_ptr(num_inputs + static_cast<int>(r)));
        }
        nested.create<mlir::scf::YieldOp>(nested_loc);
      });
  b.create<mlir::func::ReturnOp>(loc);
}

/// The kernels module in the LLVM dialect; the error carries MLIR's diagnostics.
absl::Status LowerToLlvmDialect(mlir::ModuleOp kernels) {
  mlir::MLIRContext* context = kernels.getContext();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic& d) {
    std::string location;
    llvm::raw_string_ostream os(location);
    d.getLocation().print(os);
    absl::StrAppend(&diagnostics, os.str(), ": ", d.str(), "\n");
    return mlir::success();
  });
  // f32 tanh as a polynomial (vectorizable); f64 tanh has no approximation and stays for libm.
  mlir::RewritePatternSet approximations(context);
  mlir::populatePolynomialApproximateTanhPattern(approximations);
  if (mlir::failed(mlir::applyPatternsAndFoldGreedily(kernels, std::move(approximations)))) {
    return absl::InternalError(absl::StrCat("gpt codegen: tanh approximation failed:\n", diagnostics));
  }
  mlir::PassManager pm(context);
  pm.addPass(mlir::createConvertSCFToCFPass());
  // math-to-llvm first: math.fma and math.absf of the approximation become LLVM intrinsics,
  // not libm calls; only what LLVM has no intrinsic for (f64 tanh) goes to libm.
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (mlir::failed(pm.run(kernels))) {
    return absl::InternalError(absl::StrCat("gpt codegen: lowering the kernels to the LLVM dialect failed:\n", diagnostics));
  }
  return absl::OkStatus();
}

struct HostMachine {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string triple, cpu, features;
};

absl::StatusOr<HostMachine> MakeHostTarget() {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  HostMachine host;
  const HostTarget detected = DetectHostTarget();  // the same description the cache keys use
  host.triple = detected.triple;
  host.cpu = detected.cpu;
  host.features = detected.features;
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (target == nullptr) return absl::InternalError("gpt codegen: no LLVM target for " + host.triple + ": " + error);
  host.machine.reset(target->createTargetMachine(host.triple, host.cpu, host.features, llvm::TargetOptions(),
                                                 llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!host.machine) return absl::InternalError("gpt codegen: cannot create a target machine for " + host.triple);
  return host;
}

/// Marks each loop of `function` parallel (llvm.loop.parallel_accesses over one access group
/// holding every load and store in it). The loop applies an elementwise body at index i to
/// element i of each buffer, and an output either is an input's very bytes or shares none
/// with it (the plan's and the lowering's rule for fusions), so no iteration reads what
/// another writes. Without this the vectorizer guards the vector loop with a check that
/// the buffers are 32 bytes apart, and an in-place fusion (output = input, the plan's
/// common choice) always took the scalar loop.
void MarkLoopsParallel(llvm::Function& function) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  llvm::LLVMContext& context = function.getContext();
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    llvm::MDNode* group = llvm::MDNode::getDistinct(context, {});
    for (llvm::BasicBlock* block : loop->blocks()) {
      for (llvm::Instruction& instruction : *block) {
        if (instruction.mayReadOrWriteMemory()) instruction.setMetadata(llvm::LLVMContext::MD_access_group, group);
      }
    }
    llvm::MDNode* parallel =
        llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.parallel_accesses"), group});
    llvm::TempMDTuple placeholder = llvm::MDNode::getTemporary(context, {});
    llvm::MDNode* id = llvm::MDNode::getDistinct(context, {placeholder.get(), parallel});
    id->replaceOperandWith(0, id);
    loop->setLoopID(id);
  }
}

void OptimizeO3(llvm::Module& module, llvm::TargetMachine* machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
}

}  // namespace

absl::StatusOr<KernelObject> CompileFusionKernels(mlir::ModuleOp module) {
  mlir::MLIRContext* context = module.getContext();
  context->loadDialect<mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                       mlir::LLVM::LLVMDialect, mlir::math::MathDialect, mlir::scf::SCFDialect>();
  mlir::DialectRegistry translations;
  mlir::registerBuiltinDialectTranslation(translations);
  mlir::registerLLVMDialectTranslation(translations);
  context->appendDialectRegistry(translations);

  KernelObject result;
  mlir::OwningOpRef<mlir::ModuleOp> kernels = mlir::ModuleOp::create(module.getLoc(), llvm::StringRef("gpt_kernels"));
  llvm::SmallVector<mlir::linalg::GenericOp> generics;
  module.walk<mlir::WalkOrder::PreOrder>([&](mlir::linalg::GenericOp generic) { generics.push_back(generic); });
  // The kernel of each generic (an index into result.kernels), and the first generic of each
  // kernel: a generic computing what an earlier one computes, on any shape, runs its kernel.
  llvm::SmallVector<size_t> kernel_of;
  llvm::SmallVector<mlir::linalg::GenericOp> first_of;
  for (mlir::linalg::GenericOp generic : generics) {
    absl::StatusOr<mlir::RankedTensorType> type = FusionType(generic);
    if (!type.ok()) return type.status();
    if (const std::optional<size_t> same = SameKernel(generic, first_of)) {
      kernel_of.push_back(*same);
      continue;
    }
    kernel_of.push_back(result.kernels.size());
    first_of.push_back(generic);
    FusionKernel kernel;
    kernel.symbol = absl::StrCat("gpt_fusion_", result.kernels.size());
    kernel.num_inputs = generic.getNumDpsInputs();
    kernel.num_results = generic.getNumResults();
    kernel.num_elements = type->getNumElements();
    kernel.element_bytes = type->getElementType().isF64() ? 8 : 4;
    BuildKernel(generic, type->getElementType(), kernel.symbol, *kernels);
    result.kernels.push_back(std::move(kernel));
  }
  if (absl::Status s = LowerToLlvmDialect(*kernels); !s.ok()) return s;

  absl::StatusOr<HostMachine> host = MakeHostTarget();
  if (!host.ok()) return host.status();
  result.target = absl::StrCat(host->triple, " ", host->cpu, " ", host->features);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(*kernels, llvm_context, "gpt_kernels");
  if (!llvm_module) return absl::InternalError("gpt codegen: translating the kernels to LLVM IR failed");
  llvm_module->setTargetTriple(host->triple);
  llvm_module->setDataLayout(host->machine->createDataLayout());
  for (llvm::Function& function : *llvm_module) {
    if (function.isDeclaration()) continue;
    function.addFnAttr(llvm::Attribute::NoUnwind);
    function.addFnAttr("target-cpu", host->cpu);
    function.addFnAttr("target-features", host->features);
    MarkLoopsParallel(function);
  }
  OptimizeO3(*llvm_module, host->machine.get());
  {
    llvm::raw_string_ostream os(result.llvm_ir);
    llvm_module->print(os, nullptr);
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream object_stream(object);
  llvm::legacy::PassManager codegen;
  if (host->machine->addPassesToEmitFile(codegen, object_stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("gpt codegen: the target machine cannot emit an object file for " + host->triple);
  }
  codegen.run(*llvm_module);
  result.object.assign(object.begin(), object.end());

  // Only now, when nothing can fail, tell the consumer which kernel computes each generic.
  for (auto [generic, kernel] : llvm::zip(generics, kernel_of)) {
    generic->setAttr(kKernelAttrName, mlir::StringAttr::get(context, result.kernels[kernel].symbol));
  }
  return result;
}

}  // namespace gpt_sft::compiler
