// Implements MakeRotaryTableConstants.
#include "compiler/lowering/rotary_table_constants.h"

#include <mutex>
#include <vector>

#include "model/rotary_table.h"
#include "mlir/IR/BuiltinTypes.h"

namespace gpt_sft::compiler::lowering {

namespace {

/// The entries of the last table asked for: a step's rotary ops (two per layer, forward and
/// backward) all ask for the same one, and computing it (cos and sin in double for every
/// entry) would otherwise cost a cold compile once per op.
struct LastTables {
  std::mutex mutex;
  int64_t positions = -1, head_dim = -1;
  double base = 0;
  std::vector<float> cos, sin;
};

}  // namespace

RotaryTableConstants MakeRotaryTableConstants(mlir::MLIRContext* context, int64_t positions, int64_t head_dim,
                                              double base) {
  static LastTables* last = new LastTables;
  const std::lock_guard<std::mutex> lock(last->mutex);
  const int64_t half = head_dim / 2;
  if (last->positions != positions || last->head_dim != head_dim || last->base != base) {
    last->cos.assign(positions * half, 0.0f);
    last->sin.assign(positions * half, 0.0f);
    compiler::FillRotaryTables(positions, head_dim, base, last->cos.data(), last->sin.data());
    last->positions = positions, last->head_dim = head_dim, last->base = base;
  }
  auto type = mlir::RankedTensorType::get({positions, half}, mlir::Float32Type::get(context));
  return {mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(last->cos)),
          mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(last->sin))};
}

}  // namespace gpt_sft::compiler::lowering
