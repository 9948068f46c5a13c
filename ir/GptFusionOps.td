//===- GptFusionOps.td - fused regions of the gpt dialect -*- tablegen -*-===//
//
// This file defines `gpt.fusion`, a region of elementwise gpt ops that the compiled path
// runs as one kernel (one pass over memory instead of one per op), and `gpt.yield`, its
// terminator. gpt-fuse (compiler/transforms) forms them; the interpreter runs the region op
// by op, so fusing never changes what the step computes. Hooks: fusion_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_FUSION_OPS_TD_
#define GPT_SFT_IR_GPT_FUSION_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Gpt_FusionOp : Gpt_Op<"fusion", [IsolatedFromAbove, SingleBlock,
                                     RecursiveMemoryEffects]> {
  let summary = "A region of elementwise ops run as one kernel; results are the yield's.";
  let description = [{
    The body has one block whose arguments stand for `inputs` (same number, same types; the
    region is isolated from above, so every value it reads comes in through them) and ends
    in `gpt.yield`, whose operands are the op's results (same number, same types). The body
    holds gpt ops only, all of one shape `[...]` in what gpt-fuse forms (gpt.add, gpt.mul,
    gpt.relu_square, gpt.relu_square_grad, gpt.softcap, gpt.softcap_grad).

    ```mlir
    %r = gpt.fusion (%h, %x) : (tensor<4x2048x5120xf32>, tensor<4x2048x5120xf32>)
        -> tensor<4x2048x5120xf32> {
    ^bb0(%a: tensor<4x2048x5120xf32>, %b: tensor<4x2048x5120xf32>):
      %0 = gpt.relu_square %a : tensor<4x2048x5120xf32>
      %1 = gpt.add %0, %b : tensor<4x2048x5120xf32>, tensor<4x2048x5120xf32>
      gpt.yield %1 : tensor<4x2048x5120xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Gpt_Tensor>:$inputs);
  let results = (outs Variadic<Gpt_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

def Gpt_YieldOp : Gpt_Op<"yield", [Pure, Terminator, HasParent<"FusionOp">]> {
  let summary = "The values a gpt.fusion region returns, one per result of the op.";
  let description = [{
    ```mlir
    gpt.yield %1 : tensor<4x2048x5120xf32>
    ```
  }];
  let arguments = (ins Variadic<Gpt_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif  // GPT_SFT_IR_GPT_FUSION_OPS_TD_
