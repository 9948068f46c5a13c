//===- GptOptimizerOps.td - optimizer updates of the gpt dialect -*- tablegen -*-===//
//
// This file defines the optimizer ops of `@optimizer_step`: AdamW (embedding, lm_head)
// and Muon (block matrices). They have value semantics: the results are the new
// parameter and state; gpt-plan-buffers later donates the inputs' buffers to them, so
// the update runs in place. Hooks: optimizer_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_OPTIMIZER_OPS_TD_
#define GPT_SFT_IR_GPT_OPTIMIZER_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Gpt_AdamwUpdateOp : Gpt_Op<"adamw_update", [Pure, InferTypeOpAdaptor]> {
  let summary = "One AdamW step with decoupled weight decay and bias correction.";
  let description = [{
    Operands: `param`, `grad`, the moments `exp_avg` and `exp_avg_sq` (all one shape;
    each may have its own element type: nanochat keeps wte's moments in bf16), the
    learning rate `lr` and the step count `step` (1-based, after increment), both rank-0.
    With t = step, fp32 internals:
    `p *= 1 - lr wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;`
    `p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)`.
    Results: the new `param`, `exp_avg`, `exp_avg_sq`, typed as the inputs. Defaults are
    nanochat's: betas (0.8, 0.95), eps 1e-10, weight_decay 0.

    ```mlir
    %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t
        : tensor<65536x1280xbf16>, tensor<65536x1280xbf16>, tensor<65536x1280xbf16>,
          tensor<65536x1280xbf16>, tensor<f32>, tensor<f32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$param, Gpt_FloatTensor:$grad,
                   Gpt_FloatTensor:$exp_avg, Gpt_FloatTensor:$exp_avg_sq,
                   Gpt_FloatScalar:$lr, Gpt_FloatScalar:$step,
                   DefaultValuedAttr<F64Attr, "0.8">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.95">:$beta2,
                   DefaultValuedAttr<F64Attr, "1.0e-10">:$eps,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Gpt_FloatTensor:$new_param, Gpt_FloatTensor:$new_exp_avg,
                      Gpt_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step attr-dict `:`
    type($param) `,` type($grad) `,` type($exp_avg) `,` type($exp_avg_sq) `,` type($lr)
    `,` type($step)
  }];
  let hasVerifier = 1;
}

def Gpt_MuonUpdateOp : Gpt_Op<"muon_update", [Pure, InferTypeOpAdaptor]> {
  let summary = "One Muon step: momentum, Nesterov, Newton-Schulz orthogonalisation.";
  let description = [{
    For a matrix `param [R, S]` with `grad` and `momentum_buffer` of the same shape and a
    rank-0 `lr`: `buf = mu buf + (1-mu) g`; with `nesterov`, `g' = (1-mu) g + mu buf`
    (else `g' = buf`); `O = NS(g')`, `ns_steps` Newton-Schulz iterations in bf16 on the
    wide orientation of `g' / (|g'|_F + 1e-7)`: `A = X X^T; X = a X + (b A + c A A) X` with
    `(a, b, c) = (3.4445, -4.7750, 2.0315)`; then `p -= lr sqrt(max(1, R/S)) O`.
    Results: the new `param` and `momentum_buffer`. Defaults are nanochat's.

    ```mlir
    %p1, %b1 = gpt.muon_update %p, %g, %buf, %lr
        : tensor<5120x1280xf32>, tensor<5120x1280xf32>, tensor<5120x1280xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$param, Gpt_FloatTensor:$grad,
                   Gpt_FloatTensor:$momentum_buffer, Gpt_FloatScalar:$lr,
                   DefaultValuedAttr<F64Attr, "0.95">:$momentum,
                   DefaultValuedAttr<BoolAttr, "true">:$nesterov,
                   DefaultValuedAttr<I64Attr, "5">:$ns_steps);
  let results = (outs Gpt_FloatTensor:$new_param, Gpt_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $lr attr-dict `:` type($param) `,`
    type($grad) `,` type($momentum_buffer) `,` type($lr)
  }];
  let hasVerifier = 1;
}

#endif  // GPT_SFT_IR_GPT_OPTIMIZER_OPS_TD_
