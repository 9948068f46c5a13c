//===- ukernel_launch.cc - launches of the cpu micro-kernel families ------===//

#include "compiler/lowering/cpu/ukernel_launch.h"

#include "ir/gpt_ops.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/BuiltinTypes.h"

namespace gpt_sft::compiler::lowering {
namespace {

using ::mlir::LogicalResult;
using ::mlir::Value;

bool IsF64(Value typed) { return llvm::cast<mlir::ShapedType>(typed.getType()).getElementType().isF64(); }

/// The family's launch: `ints` then `floats` as its scalars, then `buffers`, with its params
/// in words; the driver reads only the scalars.
LogicalResult CallUkernel(OpLowering& l, const char* family, Value typed, llvm::ArrayRef<int64_t> ints,
                          llvm::ArrayRef<double> floats, llvm::ArrayRef<Value> buffers, const std::string& description) {
  const std::string name = CpuBuiltinName(family, typed);
  if (name.empty()) return l.op()->emitOpError("the cpu target runs f32 and f64 tensors");
  llvm::SmallVector<Value> args;
  for (int64_t i : ints) args.push_back(l.I64(i));
  for (double f : floats) args.push_back(l.F64(f));
  args.append(buffers.begin(), buffers.end());
  auto call = l.builder().create<gpt::CallBuiltinOp>(l.loc(), l.builder().getStringAttr(name), args);
  call->setAttr("gpt.ukernel", l.builder().getStringAttr(description));
  return mlir::success();
}

/// The buffers of `slots` that `has` keeps, in slot order.
template <size_t kCount, typename Has>
llvm::SmallVector<Value> SlotsInOrder(const std::array<Value, kCount>& slots, Has has) {
  llvm::SmallVector<Value> ordered;
  for (size_t s = 0; s < kCount; ++s) {
    if (has(static_cast<int>(s))) ordered.push_back(slots[s]);
  }
  return ordered;
}

}  // namespace

std::string CpuBuiltinName(const std::string& name, Value typed) {
  mlir::Type t = llvm::cast<mlir::ShapedType>(typed.getType()).getElementType();
  if (t.isF32()) return "cpu." + name + ".f32";
  if (t.isF64()) return "cpu." + name + ".f64";
  return "";
}

LogicalResult CallGemm(OpLowering& l, Value typed, const ukernel::GemmParams& p, const GemmBuffers& b) {
  if (const char* why = ukernel::GemmUnsupported(p, IsF64(typed))) {
    return l.op()->emitOpError("no cpu GEMM kernel: ") << why;
  }
  return CallUkernel(l, ukernel::kGemmName, typed,
                     {static_cast<int64_t>(p.form), static_cast<int64_t>(p.epilogue), p.flags, p.M, p.N, p.K}, {p.eps},
                     SlotsInOrder(b, [&](int s) { return ukernel::GemmHasSlot(p.epilogue, ukernel::GemmSlot(s)); }),
                     ukernel::GemmDescription(p));
}

LogicalResult CallNorm(OpLowering& l, Value typed, const ukernel::NormParams& p, const NormBuffers& b) {
  if (const char* why = ukernel::NormUnsupported(p, IsF64(typed))) {
    return l.op()->emitOpError("no cpu norm kernel: ") << why;
  }
  return CallUkernel(l, ukernel::kNormName, typed, {static_cast<int64_t>(p.op), p.flags, p.rows, p.dim}, {p.eps},
                     SlotsInOrder(b, [&](int s) { return ukernel::NormHasSlot(p.op, ukernel::NormSlot(s)); }),
                     ukernel::NormDescription(p));
}

LogicalResult CallRotary(OpLowering& l, Value typed, const ukernel::RotaryParams& p, const RotaryBuffers& b) {
  if (const char* why = ukernel::RotaryUnsupported(p, IsF64(typed))) {
    return l.op()->emitOpError("no cpu rotary kernel: ") << why;
  }
  return CallUkernel(l, ukernel::kRotaryName, typed, {static_cast<int64_t>(p.op), p.flags, p.B, p.T, p.H, p.D, p.P},
                     {p.eps},
                     SlotsInOrder(b, [&](int s) { return ukernel::RotaryHasSlot(p.op, ukernel::RotarySlot(s)); }),
                     ukernel::RotaryDescription(p));
}

LogicalResult CallAttention(OpLowering& l, Value typed, const ukernel::AttentionParams& p, const AttentionBuffers& b) {
  if (const char* why = ukernel::AttentionUnsupported(p, IsF64(typed))) {
    return l.op()->emitOpError("no cpu attention kernel: ") << why;
  }
  return CallUkernel(l, ukernel::kAttentionName, typed,
                     {static_cast<int64_t>(p.op), p.flags, p.B, p.T, p.H, p.Hkv, p.D}, {},
                     SlotsInOrder(b, [&](int s) { return ukernel::AttentionHasSlot(p, ukernel::AttentionSlot(s)); }),
                     ukernel::AttentionDescription(p));
}

}  // namespace gpt_sft::compiler::lowering
