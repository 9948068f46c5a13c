//===- VjpOpInterface.td - vector-Jacobian product rules -----*- tablegen -*-===//
//
// This file defines VjpOpInterface: an op that implements it knows how to build, with
// gpt ops, the cotangent of each of its operands from the cotangents of its results.
// The autodiff pass (compiler/transforms) walks the forward ops in reverse and asks each
// one for its rule, as Toy's shape-inference pass asks each op for its shape.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_VJP_OP_INTERFACE_TD_
#define GPT_SFT_IR_VJP_OP_INTERFACE_TD_

include "mlir/IR/OpBase.td"

def VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let cppNamespace = "::gpt_sft::compiler::gpt";
  let description = [{
    The vector-Jacobian product of an op. `buildVjp(builder, resultGrads)` takes one
    cotangent per result of the op (same type as the result; never null) and creates, at
    the builder's insertion point and at the op's location, the ops computing the cotangent
    of each operand. It returns one value per operand present (`getNumOperands()`), in
    operand order; the value is null for an operand that is not differentiable (token ids,
    targets, positions, segment ids). An absent optional operand has no entry. The rule may read the op's operands and results
    (e.g. softcap uses its output), so the insertion point must be after the op.
    On failure (a shape the rule cannot express, e.g. a reshape back to two dynamic dims)
    the rule emits an error on the op and returns an empty vector.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Builds the operand cotangents from the result cotangents.",
      /*retTy=*/"::llvm::SmallVector<::mlir::Value>",
      /*methodName=*/"buildVjp",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ArrayRef<::mlir::Value>":$resultGrads)
    >
  ];
}

#endif  // GPT_SFT_IR_VJP_OP_INTERFACE_TD_
