// Implements BuiltinOps: every family of ops/ registers into one registry.
#include "runtime/interpreter/op_registry.h"

#include "runtime/interpreter/ops/ops.h"

namespace gpt_sft::runtime::interp {

const OpRegistry& BuiltinOps() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    RegisterAttentionOps(*r);
    RegisterCollectiveOps(*r);
    RegisterConstantOps(*r);
    RegisterDecodeOps(*r);
    RegisterElementwiseOps(*r);
    RegisterEmbeddingOps(*r);
    RegisterFusionOps(*r);
    RegisterLossOps(*r);
    RegisterMatmulOps(*r);
    RegisterNormOps(*r);
    RegisterOptimizerOps(*r);
    RegisterRotaryOps(*r);
    RegisterShapeOps(*r);
    return r;
  }();
  return *registry;
}

}  // namespace gpt_sft::runtime::interp
