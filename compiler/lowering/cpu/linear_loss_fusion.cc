//===- linear_loss_fusion.cc - the lm_head's loss as one cpu launch -------===//
//
// This file implements MatchLinearLoss: it follows the uses from the lm_head matmul through
// reshapes, names each op of the chain, and accepts it only when the window from the matmul
// to the dx matmul holds nothing else, so emitting the whole chain at the matmul's place
// moves no other op's reads or writes.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/cpu/linear_loss_fusion.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/Operation.h"

namespace gpt_sft::compiler::lowering {
namespace {

using ::mlir::Operation;
using ::mlir::Value;

Value Root(Value v) {
  while (auto r = v.getDefiningOp<gpt::ReshapeOp>()) v = r.getX();
  return v;
}

/// The non-reshape users of `v`, looking through reshapes (collected into `reshapes`).
llvm::SmallVector<Operation*> UsersThroughReshapes(Value v, llvm::SmallVector<Operation*>& reshapes) {
  llvm::SmallVector<Operation*> users;
  for (Operation* user : v.getUsers()) {
    if (auto r = llvm::dyn_cast<gpt::ReshapeOp>(user)) {
      reshapes.push_back(r);
      llvm::SmallVector<Operation*> more = UsersThroughReshapes(r.getResult(), reshapes);
      users.append(more.begin(), more.end());
    } else {
      users.push_back(user);
    }
  }
  return users;
}

bool IsFloat32Or64(Value v) {
  mlir::Type t = llvm::cast<mlir::ShapedType>(v.getType()).getElementType();
  return t.isF32() || t.isF64();
}

bool IsFloat32(Value v) { return llvm::cast<mlir::ShapedType>(v.getType()).getElementType().isF32(); }

}  // namespace

llvm::SmallVector<Operation*> LinearLossChain::Absorbed() const {
  llvm::SmallVector<Operation*> ops = {softcap, loss, loss_grad, softcap_grad, weight_t, grad_input};
  if (bf16()) ops.append({logits_round, grad_round});
  ops.append(reshapes.begin(), reshapes.end());
  return ops;
}

std::optional<LinearLossChain> MatchLinearLoss(gpt::MatmulOp m) {
  LinearLossChain c;
  c.logits = m;
  if (!IsFloat32Or64(m.getResult()) || !m.getResult().hasOneUse()) return std::nullopt;
  Operation* next = *m.getResult().getUsers().begin();
  // Under bf16 autocast the logits are rounded first, and the softcap is nanochat's bf16 one.
  if (auto round = llvm::dyn_cast<gpt::RoundBf16Op>(next)) {
    if (!round.getResult().hasOneUse() || !IsFloat32(m.getResult())) return std::nullopt;
    c.logits_round = round;
    next = *round.getResult().getUsers().begin();
  }
  c.softcap = llvm::dyn_cast<gpt::SoftcapOp>(next);
  if (!c.softcap || c.softcap.getRoundBf16() != c.bf16()) return std::nullopt;
  // The softcapped logits: read by the loss, its gradient and the softcap's gradient only.
  for (Operation* user : UsersThroughReshapes(c.softcap.getResult(), c.reshapes)) {
    if (auto ce = llvm::dyn_cast<gpt::CrossEntropyOp>(user); ce && !c.loss) {
      c.loss = ce;
    } else if (auto g = llvm::dyn_cast<gpt::CrossEntropyGradOp>(user); g && !c.loss_grad) {
      c.loss_grad = g;
    } else if (auto s = llvm::dyn_cast<gpt::SoftcapGradOp>(user); s && !c.softcap_grad) {
      c.softcap_grad = s;
    } else {
      return std::nullopt;
    }
  }
  if (!c.loss || !c.loss_grad || !c.softcap_grad) return std::nullopt;
  if (static_cast<int64_t>(c.loss.getIgnoreIndex()) != -1 || static_cast<int64_t>(c.loss_grad.getIgnoreIndex()) != -1) {
    return std::nullopt;
  }
  if (Root(c.loss.getTargets()) != Root(c.loss_grad.getTargets())) return std::nullopt;
  if (Root(c.softcap_grad.getY()) != c.softcap.getResult() ||
      c.softcap_grad.getCap() != c.softcap.getCap()) {
    return std::nullopt;
  }
  // The loss's gradient reaches only the softcap's gradient, as its dy (under bf16 autocast
  // through its rounding, read by nothing else).
  llvm::SmallVector<Operation*> grad_users = UsersThroughReshapes(c.loss_grad.getResult(), c.reshapes);
  Value cotangent = c.loss_grad.getResult();
  if (c.bf16()) {
    c.grad_round = grad_users.size() == 1 ? llvm::dyn_cast<gpt::RoundBf16Op>(grad_users[0]) : gpt::RoundBf16Op();
    if (!c.grad_round || Root(c.grad_round.getX()) != cotangent) return std::nullopt;
    cotangent = c.grad_round.getResult();
    grad_users = UsersThroughReshapes(cotangent, c.reshapes);
  }
  if (grad_users.size() != 1 || grad_users[0] != c.softcap_grad.getOperation() ||
      Root(c.softcap_grad.getDy()) != cotangent) {
    return std::nullopt;
  }
  // dy: read by dx = dy (w^T)^T, and otherwise only after it (they read the written buffer).
  Value dy = c.softcap_grad.getResult();
  for (Operation* user : dy.getUsers()) {
    auto mm = llvm::dyn_cast<gpt::MatmulOp>(user);
    auto t = mm ? mm.getW().getDefiningOp<gpt::TransposeOp>() : gpt::TransposeOp();
    if (!c.grad_input && mm && mm.getX() == dy && t && t.getX() == m.getW() && t.getResult().hasOneUse() &&
        t.getPerm().size() == 2 && t.getPerm()[0] == 1 && t.getPerm()[1] == 0) {
      c.grad_input = mm;
      c.weight_t = t;
    }
  }
  if (!c.grad_input) return std::nullopt;
  for (Operation* user : dy.getUsers()) {
    if (user != c.grad_input.getOperation() && !c.grad_input->isBeforeInBlock(user)) return std::nullopt;
  }
  c.targets = Root(c.loss.getTargets());
  c.dloss = Root(c.loss_grad.getDloss());
  // Both must exist at the lm_head matmul's place.
  for (Value v : {c.targets, c.dloss}) {
    if (Operation* def = v.getDefiningOp(); def && !def->isBeforeInBlock(m)) return std::nullopt;
  }
  // Nothing else in the window but reshapes. One read only by the chain (the targets' view)
  // is absorbed with it: run as a copy at its place, after the launch, it could write bytes the
  // plan shares with dy. Any other reads an argument and writes bytes live past dx, which the
  // launch does not touch. Walked backwards so a reshape of such a reshape is seen first.
  llvm::DenseSet<Operation*> chain;
  for (Operation* op : c.Absorbed()) chain.insert(op);
  llvm::SmallVector<Operation*> window;
  for (Operation* op = m->getNextNode(); op != c.grad_input.getOperation(); op = op->getNextNode()) {
    if (op == nullptr) return std::nullopt;
    window.push_back(op);
  }
  for (auto it = window.rbegin(); it != window.rend(); ++it) {
    Operation* op = *it;
    if (chain.contains(op)) continue;
    if (!llvm::isa<gpt::ReshapeOp>(op)) return std::nullopt;
    if (llvm::all_of(op->getResult(0).getUsers(), [&](Operation* u) { return chain.contains(u); })) {
      c.reshapes.push_back(op);
      chain.insert(op);
    }
  }
  for (Operation* r : c.reshapes) {
    for (Operation* user : r->getResult(0).getUsers()) {
      if (!chain.contains(user)) return std::nullopt;
    }
  }
  for (Operation* op : c.Absorbed()) {  // all inside the window
    if (op != c.grad_input.getOperation() && (!m->isBeforeInBlock(op) || !op->isBeforeInBlock(c.grad_input))) {
      return std::nullopt;
    }
  }
  return c;
}

}  // namespace gpt_sft::compiler::lowering
