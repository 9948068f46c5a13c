// BuildDecodeModule emits @prefill and @decode through model_forward's EmitLogitsWithCache,
// the one model definition the training step also uses: only attention differs (a cache to
// append to and gpt.cached_attention in @decode).
#include "compiler/builder/decode_builder.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/builder/model_forward.h"
#include "compiler/builder/step_builder.h"
#include "ir/gpt_ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Type;
using ::mlir::Value;

inline constexpr char kNameAttr[] = "gpt.name";

std::vector<std::string> ParamNames(const ModelConfig& model) {
  std::vector<std::string> names;
  for (const ParamSpec& p : ParamLayout(model)) names.push_back(p.name);
  return names;
}

std::vector<std::string> CacheNames(const ModelConfig& model) {
  std::vector<std::string> names;
  for (int layer = 0; layer < model.n_layer; ++layer) {
    names.push_back(KCacheName(layer));
    names.push_back(VCacheName(layer));
  }
  return names;
}

/// The training step's forward at a dynamic T, for the batch size of `config`.
StepConfig ForwardConfig(const DecodeConfig& config) {
  StepConfig step;
  step.model = config.model;
  step.batch_size = config.batch_size;
  step.seq_len = kDynamicDim;
  step.dtype = config.dtype;
  return step;
}

class DecodeEmitter {
 public:
  DecodeEmitter(mlir::MLIRContext& context, const DecodeConfig& config)
      : b_(&context), config_(config), step_(ForwardConfig(config)), layout_(ParamLayout(config.model)) {
    element_ = StoresF64(config.dtype) ? Type(b_.getF64Type()) : Type(b_.getF32Type());
  }

  mlir::OwningOpRef<mlir::ModuleOp> Emit() {
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(b_.getUnknownLoc());
    (*module)->setAttr("gpt.model_config", b_.getStringAttr(config_.model.ToJson()));
    b_.setInsertionPointToEnd(module->getBody());
    EmitFunction(kPrefillFunction, /*with_cache=*/false, PrefillSignature(config_));
    EmitFunction(kDecodeFunction, /*with_cache=*/true, DecodeSignature(config_));
    return module;
  }

 private:
  Type Tokens() { return mlir::RankedTensorType::get({config_.batch_size, mlir::ShapedType::kDynamic}, b_.getI32Type()); }
  Type Logits() {
    return mlir::RankedTensorType::get({config_.batch_size, mlir::ShapedType::kDynamic, config_.model.vocab_size},
                                       element_);
  }
  Type Cache() {
    return mlir::RankedTensorType::get(
        {config_.batch_size, mlir::ShapedType::kDynamic, config_.model.n_kv_head, config_.model.head_dim()}, element_);
  }

  /// params..., inputs[, positions, caches...] -> (logits, caches...).
  void EmitFunction(const std::string& name, bool with_cache, const EntrySignature& signature) {
    std::vector<Type> args;
    for (const ParamSpec& p : layout_) args.push_back(mlir::RankedTensorType::get(p.shape, element_));
    args.push_back(Tokens());
    const int num_caches = 2 * config_.model.n_layer;
    if (with_cache) {
      args.push_back(Tokens());  // positions
      args.insert(args.end(), num_caches, Cache());
    }
    std::vector<Type> results = {Logits()};
    results.insert(results.end(), num_caches, Cache());
    auto func = b_.create<mlir::func::FuncOp>(mlir::NameLoc::get(b_.getStringAttr(name)), name,
                                              b_.getFunctionType(args, results));
    for (size_t i = 0; i < signature.arguments.size(); ++i) {
      func.setArgAttr(i, kNameAttr, b_.getStringAttr(signature.arguments[i]));
    }
    for (size_t i = 0; i < signature.results.size(); ++i) {
      func.setResultAttr(i, kNameAttr, b_.getStringAttr(signature.results[i]));
    }
    mlir::OpBuilder::InsertPoint saved = b_.saveInsertionPoint();
    b_.setInsertionPointToStart(func.addEntryBlock());

    ForwardInputs in;
    const size_t n = layout_.size();
    for (size_t i = 0; i < n; ++i) in.params.push_back(func.getArgument(i));
    in.inputs = func.getArgument(n);
    if (with_cache) {
      in.positions = func.getArgument(n + 1);
      for (int layer = 0; layer < config_.model.n_layer; ++layer) {
        in.k_cache.push_back(func.getArgument(n + 2 + 2 * layer));
        in.v_cache.push_back(func.getArgument(n + 3 + 2 * layer));
      }
    }
    ForwardCache cache;
    std::vector<Value> returned = {EmitLogitsWithCache(b_, func.getLoc(), step_, in, &cache)};
    for (int layer = 0; layer < config_.model.n_layer; ++layer) {
      returned.push_back(cache.keys[layer]);
      returned.push_back(cache.values[layer]);
    }
    b_.create<mlir::func::ReturnOp>(func.getLoc(), returned);
    b_.restoreInsertionPoint(saved);
  }

  mlir::OpBuilder b_;
  const DecodeConfig& config_;
  StepConfig step_;
  std::vector<ParamSpec> layout_;
  Type element_;
};

}  // namespace

std::string KCacheName(int layer) { return absl::StrCat("k_cache/", layer); }
std::string VCacheName(int layer) { return absl::StrCat("v_cache/", layer); }

EntrySignature PrefillSignature(const DecodeConfig& config) {
  EntrySignature s;
  s.arguments = ParamNames(config.model);
  s.arguments.push_back("inputs");
  s.results = {"logits"};
  for (std::string& name : CacheNames(config.model)) s.results.push_back(std::move(name));
  return s;
}

EntrySignature DecodeSignature(const DecodeConfig& config) {
  EntrySignature s = PrefillSignature(config);
  s.arguments.push_back("positions");
  for (std::string& name : CacheNames(config.model)) s.arguments.push_back(std::move(name));
  return s;
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> BuildDecodeModule(mlir::MLIRContext& context,
                                                                   const DecodeConfig& config) {
  if (absl::Status s = ForwardConfig(config).Validate(); !s.ok()) return s;
  LoadStepDialects(context);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
    absl::StrAppend(&diagnostics, d.str(), "\n");
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = DecodeEmitter(context, config).Emit();
  if (mlir::failed(mlir::verify(*module))) {
    return absl::InternalError(absl::StrCat("the built decoder does not verify (a builder bug): ", diagnostics));
  }
  if (absl::Status s = ApplyDtype(*module, config.dtype); !s.ok()) return s;
  return module;
}

}  // namespace gpt_sft::compiler
