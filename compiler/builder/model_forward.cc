// The forward follows NANOCHAT.md 1.4-1.6 and tests/golden/reference_gpt.py op for op:
//   x = norm(wte[inputs])
//   per block: x += c_proj(attn(qk_norm(rotary(q, k)), v)) of norm(x);
//              x += mlp.c_proj(relu(c_fc(norm(x)))^2)
//   loss = cross_entropy(softcap(lm_head(norm(x)), 15), targets), ignore -1.
// Heads are views of the [B, T, C] projections as [B, T, H, D] (reshape), so attention,
// rotary and the QK norm see one head per D-row. With a KV cache (decoding), each layer's
// k, v are appended to the cache along T and q attends over the whole cache, bottom-right
// causal (NANOCHAT.md 1.7).
#include "compiler/builder/model_forward.h"

#include "ir/gpt_ops.h"

namespace gpt_sft::compiler {
namespace {

using ::mlir::Value;

class ForwardEmitter {
 public:
  ForwardEmitter(mlir::OpBuilder& b, mlir::Location loc, const StepConfig& config, const ForwardInputs& in,
                 ForwardCache* cache = nullptr)
      : b_(b), base_loc_(loc), loc_(loc), config_(config), in_(in), cache_(cache) {}

  Value Loss() {
    Value capped = Logits();
    const int64_t V = config_.model.vocab_size;
    Value flat_logits = b_.create<gpt::ReshapeOp>(loc_, capped, llvm::ArrayRef<int64_t>{-1, V});
    Value flat_targets = b_.create<gpt::ReshapeOp>(loc_, in_.targets, llvm::ArrayRef<int64_t>{-1});
    return b_.create<gpt::CrossEntropyOp>(loc_, flat_logits, flat_targets, mlir::IntegerAttr());
  }

  Value Logits() {
    const ModelConfig& m = config_.model;
    Named("transformer.wte");
    Value x = Norm(b_.create<gpt::EmbeddingOp>(loc_, Param(0), in_.inputs));
    for (int layer = 0; layer < m.n_layer; ++layer) {
      const std::string prefix = "transformer.h." + std::to_string(layer);
      Named(prefix + ".attn");
      x = b_.create<gpt::AddOp>(loc_, x, Attention(layer, Norm(x)));
      Named(prefix + ".mlp");
      x = b_.create<gpt::AddOp>(loc_, x, Mlp(layer, Norm(x)));
    }
    Named("lm_head");
    Value logits = Linear(Norm(x), Param(1 + 6 * m.n_layer));
    Value capped = b_.create<gpt::SoftcapOp>(loc_, logits, mlir::FloatAttr(), mlir::UnitAttr());
    Named("loss");
    return capped;
  }

 private:
  // ParamLayout order inside a block: c_q, c_k, c_v, c_proj, c_fc, mlp.c_proj.
  Value BlockParam(int layer, int index) const { return Param(1 + 6 * layer + index); }
  Value Param(int index) const { return in_.params[index]; }

  /// Every op of a module is located at the module's name (loc("transformer.h.3.attn")), so
  /// printed IR, error messages and the interpreter's op profile say where an op belongs.
  void Named(const std::string& name) { loc_ = mlir::NameLoc::get(b_.getStringAttr(name), base_loc_); }

  Value Norm(Value x) { return b_.create<gpt::RmsNormOp>(loc_, x, mlir::FloatAttr()); }
  Value Linear(Value x, Value w) { return b_.create<gpt::MatmulOp>(loc_, x, w); }

  /// [B, T, heads * D] -> [B, T, heads, D]; T may be dynamic (-1).
  Value SplitHeads(Value x, int heads) {
    const int64_t T = config_.seq_len == kDynamicDim ? -1 : config_.seq_len;
    return b_.create<gpt::ReshapeOp>(
        loc_, x, llvm::ArrayRef<int64_t>{config_.batch_size, T, heads, config_.model.head_dim()});
  }

  Value Rotary(Value x) { return b_.create<gpt::RotaryOp>(loc_, x, in_.positions, mlir::FloatAttr(), mlir::UnitAttr()); }

  Value Attention(int layer, Value h) {
    const ModelConfig& m = config_.model;
    Value q = Norm(Rotary(SplitHeads(Linear(h, BlockParam(layer, 0)), m.n_head)));
    Value k = Norm(Rotary(SplitHeads(Linear(h, BlockParam(layer, 1)), m.n_kv_head)));
    Value v = SplitHeads(Linear(h, BlockParam(layer, 2)), m.n_kv_head);
    Value y;
    if (in_.k_cache.empty()) {
      y = b_.create<gpt::AttentionOp>(loc_, q, k, v, in_.segment_ids, /*causal=*/true, mlir::FloatAttr());
    } else {
      k = b_.create<gpt::ConcatOp>(loc_, in_.k_cache[layer], k, /*axis=*/1);
      v = b_.create<gpt::ConcatOp>(loc_, in_.v_cache[layer], v, /*axis=*/1);
      y = b_.create<gpt::CachedAttentionOp>(loc_, q, k, v, mlir::FloatAttr());
    }
    if (cache_ != nullptr) {
      cache_->keys.push_back(k);
      cache_->values.push_back(v);
    }
    const int64_t T = config_.seq_len == kDynamicDim ? -1 : config_.seq_len;
    Value merged = b_.create<gpt::ReshapeOp>(loc_, y, llvm::ArrayRef<int64_t>{config_.batch_size, T, m.n_embd});
    return Linear(merged, BlockParam(layer, 3));
  }

  Value Mlp(int layer, Value h) {
    Value up = b_.create<gpt::ReluSquareOp>(loc_, Linear(h, BlockParam(layer, 4)));
    return Linear(up, BlockParam(layer, 5));
  }

  mlir::OpBuilder& b_;
  mlir::Location base_loc_;
  mlir::Location loc_;
  const StepConfig& config_;
  const ForwardInputs& in_;
  ForwardCache* cache_;  // null: the keys and values are not returned
};

}  // namespace

Value EmitLogits(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config, const ForwardInputs& in) {
  return ForwardEmitter(builder, loc, config, in).Logits();
}

Value EmitLogitsWithCache(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config,
                          const ForwardInputs& in, ForwardCache* cache) {
  return ForwardEmitter(builder, loc, config, in, cache).Logits();
}

Value EmitLoss(mlir::OpBuilder& builder, mlir::Location loc, const StepConfig& config, const ForwardInputs& in) {
  return ForwardEmitter(builder, loc, config, in).Loss();
}

}  // namespace gpt_sft::compiler
