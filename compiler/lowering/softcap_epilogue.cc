//===- softcap_epilogue.cc - fusing the softcap's gradient into the loss's -===//
//
// This file implements FuseSoftcapEpilogue:
//   1. find the softcap_grad: the only reader of the gradient through single-use reshapes,
//      its y the same logits (up to views), nothing but reshapes between the two ops;
//   2. refuse when the logits overlap the output (unless the target allows the same bytes);
//   3. absorb it, copying aside the small inputs the output overlaps.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/softcap_epilogue.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace gpt_sft::compiler::lowering {
namespace {

using ::mlir::Value;

Value Root(Value v) {
  while (auto r = v.getDefiningOp<gpt::ReshapeOp>()) v = r.getX();
  return v;
}

/// The softcap_grad that reads ce's gradient (through reshapes and, when `through_round`, one
/// gpt.round_bf16, returned in `round`) as its dy, of the very logits ce differentiated, with
/// only those ops between the two.
gpt::SoftcapGradOp SoftcapGradConsumer(gpt::CrossEntropyGradOp ce, bool through_round, gpt::RoundBf16Op& round) {
  Value g = ce.getResult();
  while (g.hasOneUse()) {
    mlir::Operation* user = *g.getUsers().begin();
    if (auto r = llvm::dyn_cast<gpt::ReshapeOp>(user)) {
      g = r.getResult();
      continue;
    }
    if (auto r = llvm::dyn_cast<gpt::RoundBf16Op>(user); r && through_round && !round) {
      round = r;
      g = r.getResult();
      continue;
    }
    auto softcap = llvm::dyn_cast<gpt::SoftcapGradOp>(user);
    if (!softcap || softcap.getDy() != g || Root(softcap.getY()) != Root(ce.getLogits())) return {};
    for (mlir::Operation* between = ce->getNextNode(); between != softcap.getOperation();
         between = between->getNextNode()) {
      if (!llvm::isa<gpt::ReshapeOp>(between) && between != round.getOperation()) return {};
    }
    return softcap;
  }
  return {};
}

enum class Sharing { kNone, kSame, kPart };

/// How the bytes of two planned values relate: in the arena by their planned ranges, else
/// (arguments, constants) by the buffer they view.
Sharing BytesShared(OpLowering& lowering, Value a, Value b) {
  const auto pa = lowering.PlannedArenaBytes(a), pb = lowering.PlannedArenaBytes(b);
  if (pa && pb) {
    if (*pa == *pb) return Sharing::kSame;
    return pa->first < pb->second && pb->first < pa->second ? Sharing::kPart : Sharing::kNone;
  }
  if (pa || pb) return Sharing::kNone;
  auto underlying = [](Value buffer) {
    while (auto cast = buffer.getDefiningOp<mlir::memref::ReinterpretCastOp>()) buffer = cast.getSource();
    return buffer;
  };
  Value ba = lowering.BufferOf(a), bb = lowering.BufferOf(b);
  if (underlying(ba) != underlying(bb)) return Sharing::kNone;
  auto elements = [](Value v) { return llvm::cast<mlir::MemRefType>(v.getType()).getNumElements(); };
  return elements(ba) == elements(bb) && ba.getType() == bb.getType() ? Sharing::kSame : Sharing::kPart;
}

}  // namespace

std::optional<SoftcapEpilogue> FuseSoftcapEpilogue(OpLowering& lowering, gpt::CrossEntropyGradOp ce,
                                                   bool allow_same_bytes, bool through_round_bf16) {
  gpt::RoundBf16Op round;
  gpt::SoftcapGradOp softcap = SoftcapGradConsumer(ce, through_round_bf16, round);
  if (!softcap) return std::nullopt;
  const Sharing logits = BytesShared(lowering, softcap.getResult(), ce.getLogits());
  if (logits == Sharing::kPart || (logits == Sharing::kSame && !allow_same_bytes)) return std::nullopt;
  SoftcapEpilogue e;
  e.cap = softcap.getCap().convertToDouble();
  e.out = lowering.BufferOf(softcap.getResult());
  e.targets = lowering.BufferOf(ce.getTargets());
  e.dloss = lowering.BufferOf(ce.getDloss());
  e.round_dy = static_cast<bool>(round);
  if (round) lowering.Absorb(round);
  lowering.Absorb(softcap);
  for (auto [tensor, buffer] : {std::pair<Value, Value*>{ce.getTargets(), &e.targets}, {ce.getDloss(), &e.dloss}}) {
    if (BytesShared(lowering, softcap.getResult(), tensor) == Sharing::kNone) continue;
    Value copy = lowering.Scratch(llvm::cast<mlir::MemRefType>(buffer->getType()));
    lowering.builder().create<mlir::memref::CopyOp>(lowering.loc(), *buffer, copy);
    *buffer = copy;
  }
  return e;
}

}  // namespace gpt_sft::compiler::lowering
