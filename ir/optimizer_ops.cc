//===- optimizer_ops.cc - gpt.adamw_update and gpt.muon_update ------------===//
//
// This file implements the optimizer family's shape rules (parameter, gradient
// and state of one shape; rank-0 lr and step; Muon on matrices) and the checks
// on their hyperparameters. The results are typed as the inputs they replace.
//
//===----------------------------------------------------------------------===//

#include "ir/gpt_ops.h"
#include "ir/shape_rules.h"

namespace gpt_sft::compiler::gpt {

using ::mlir::failure;
using ::mlir::LogicalResult;
using ::mlir::RankedTensorType;
using ::mlir::success;
using ::mlir::Type;
using ::mlir::Value;

namespace {

/// Every value in `values` ranked and of param's shape; each scalar rank 0.
LogicalResult CheckUpdateOperands(std::optional<mlir::Location> loc, llvm::StringRef op,
                                  llvm::ArrayRef<std::pair<llvm::StringRef, Value>> tensors,
                                  llvm::ArrayRef<std::pair<llvm::StringRef, Value>> scalars,
                                  llvm::SmallVectorImpl<RankedTensorType> &types) {
  for (auto [name, value] : tensors) {
    RankedTensorType type = RankedOrError(loc, op, name, value);
    if (!type) return failure();
    if (!types.empty() &&
        failed(MergeShapes(loc, op, ("param and " + name).str(), types.front(), type))) {
      return failure();
    }
    types.push_back(type);
  }
  for (auto [name, value] : scalars) {
    RankedTensorType type = RankedOrError(loc, op, name, value);
    if (!type) return failure();
    if (type.getRank() != 0) {
      return ShapeError(loc, op, name + " must be rank 0, got " + TypeString(type));
    }
  }
  return success();
}

bool InUnitInterval(const llvm::APFloat &value) {
  double v = value.convertToDouble();
  return v >= 0.0 && v < 1.0;
}

}  // namespace

//===----------------------------------------------------------------------===//
// AdamwUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult AdamwUpdateOp::inferReturnTypes(mlir::MLIRContext *,
                                              std::optional<mlir::Location> loc,
                                              Adaptor adaptor,
                                              llvm::SmallVectorImpl<Type> &results) {
  llvm::SmallVector<RankedTensorType> types;
  if (failed(CheckUpdateOperands(loc, "adamw_update",
                                 {{"param", adaptor.getParam()},
                                  {"grad", adaptor.getGrad()},
                                  {"exp_avg", adaptor.getExpAvg()},
                                  {"exp_avg_sq", adaptor.getExpAvgSq()}},
                                 {{"lr", adaptor.getLr()}, {"step", adaptor.getStep()}},
                                 types))) {
    return failure();
  }
  results.append({types[0], types[2], types[3]});  // param, exp_avg, exp_avg_sq
  return success();
}

LogicalResult AdamwUpdateOp::verify() {
  if (!InUnitInterval(getBeta1()) || !InUnitInterval(getBeta2())) {
    return emitOpError("betas must lie in [0, 1), got (")
           << getBeta1().convertToDouble() << ", " << getBeta2().convertToDouble() << ")";
  }
  if (getEps().convertToDouble() < 0.0 || getWeightDecay().convertToDouble() < 0.0) {
    return emitOpError("eps and weight_decay must be >= 0, got ")
           << getEps().convertToDouble() << " and " << getWeightDecay().convertToDouble();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MuonUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult MuonUpdateOp::inferReturnTypes(mlir::MLIRContext *,
                                             std::optional<mlir::Location> loc,
                                             Adaptor adaptor,
                                             llvm::SmallVectorImpl<Type> &results) {
  llvm::SmallVector<RankedTensorType> types;
  if (failed(CheckUpdateOperands(loc, "muon_update",
                                 {{"param", adaptor.getParam()},
                                  {"grad", adaptor.getGrad()},
                                  {"momentum_buffer", adaptor.getMomentumBuffer()}},
                                 {{"lr", adaptor.getLr()}}, types))) {
    return failure();
  }
  if (types[0].getRank() != 2) {
    return ShapeError(loc, "muon_update",
                      "param must be a matrix [R, S], got " + TypeString(types[0]));
  }
  results.append({types[0], types[2]});  // param, momentum_buffer
  return success();
}

LogicalResult MuonUpdateOp::verify() {
  if (!InUnitInterval(getMomentum())) {
    return emitOpError("momentum must lie in [0, 1), got ")
           << getMomentum().convertToDouble();
  }
  if (static_cast<int64_t>(getNsSteps()) < 1) {
    return emitOpError("ns_steps must be >= 1, got ") << static_cast<int64_t>(getNsSteps());
  }
  return success();
}

}  // namespace gpt_sft::compiler::gpt
