//===- GptAutodiffOps.td - the gradient placeholder of the gpt dialect -*- tablegen -*-===//
//
// This file defines `gpt.gradients`, the one op the builder writes where the backward pass
// belongs: "the cotangents of this loss with respect to these values". The gpt-autodiff pass
// (compiler/transforms) replaces it with the ops of every VJP rule on the way from the loss
// back to the values, so before that pass the step is short and readable, and after it
// every gradient is an ordinary gpt op. Hooks: autodiff_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_AUTODIFF_OPS_TD_
#define GPT_SFT_IR_GPT_AUTODIFF_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Gpt_GradientsOp : Gpt_Op<"gradients", [Pure, InferTypeOpAdaptor]> {
  let summary = "Cotangents of a rank-0 loss with respect to values; replaced by gpt-autodiff.";
  let description = [{
    `grads[i]` is the gradient of `seed * loss` with respect to `wrt[i]` and has its type.
    `seed` is the rank-0 cotangent of the loss: 1 for a plain gradient, `1/grad_accum_steps`
    when each micro-step's loss is divided before backward (nanochat's SFT). The loss and the
    seed share an element type. A value of `wrt` the loss does not depend on gets a zero
    gradient (its type must then be static). This op has no kernel: the interpreter and the
    compiler reject it; run `--gpt-autodiff` first.

    ```mlir
    %seed = arith.constant dense<0.5> : tensor<f32>
    %g:2 = gpt.gradients %loss, %seed wrt [%wte, %lm_head]
        : tensor<f32>, tensor<f32>, [tensor<512x128xf32>, tensor<512x128xf32>]
    ```
  }];
  let arguments = (ins Gpt_FloatScalar:$loss, Gpt_FloatScalar:$seed,
                   Variadic<Gpt_FloatTensor>:$wrt);
  let results = (outs Variadic<Gpt_FloatTensor>:$grads);
  let assemblyFormat = [{
    $loss `,` $seed `wrt` ` ` `[` $wrt `]` attr-dict `:` type($loss) `,` type($seed) `,`
    `[` type($wrt) `]`
  }];
  let hasVerifier = 1;
}

#endif  // GPT_SFT_IR_GPT_AUTODIFF_OPS_TD_
