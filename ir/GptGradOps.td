//===- GptGradOps.td - hand-written gradient ops of the gpt dialect -*- tablegen -*-===//
//
// This file defines the gradient ops the VJP rules of GptOps.td emit where a dedicated
// kernel beats a composition of forward ops: attention (recompute, flash-style),
// rms_norm, cross_entropy (softmax minus one-hot, fused), embedding (scatter-add),
// rotary (inverse rotation), the two elementwise activations, and the weight side of
// matmul. They are not differentiated again (no second order), so they do not implement
// VjpOpInterface. Each op's C++ hooks live beside its forward op's, in the family file.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_GRAD_OPS_TD_
#define GPT_SFT_IR_GPT_GRAD_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Gpt_GradOp<string mnemonic, list<Trait> traits = []> :
    Gpt_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

def Gpt_AttentionGradOp : Gpt_GradOp<"attention_grad"> {
  let summary = "Cotangents of q, k and v of gpt.attention.";
  let description = [{
    Operands: the forward's `q [B, T, H, D]`, `k, v [B, T, Hkv, D]`, its output
    `out [B, T, H, D]` (for the softmax-backward row sums `rowsum(dout * out)`), the
    output cotangent `dout [B, T, H, D]` and the optional `segment_ids [B, T]`;
    attributes as the forward. Results `dq` (type of q), `dk` (type of k), `dv` (type of v);
    with GQA, `dk`/`dv` sum over the query heads that share a kv head.

    ```mlir
    %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do
        : tensor<4x2048x10x128xbf16>, tensor<4x2048x10x128xbf16>, tensor<4x2048x10x128xbf16>,
          tensor<4x2048x10x128xbf16>, tensor<4x2048x10x128xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$q, Gpt_FloatTensor:$k, Gpt_FloatTensor:$v,
                   Gpt_FloatTensor:$out, Gpt_FloatTensor:$dout,
                   Optional<Gpt_IntTensor>:$segment_ids,
                   DefaultValuedAttr<BoolAttr, "true">:$causal,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Gpt_FloatTensor:$dq, Gpt_FloatTensor:$dk, Gpt_FloatTensor:$dv);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $out `,` $dout (`,` `segments` $segment_ids^)? attr-dict `:`
    type($q) `,` type($k) `,` type($v) `,` type($out) `,` type($dout)
    (`,` type($segment_ids)^)?
  }];
  let hasVerifier = 1;
}

def Gpt_RmsNormGradOp : Gpt_GradOp<"rms_norm_grad"> {
  let summary = "Cotangent of x of the parameter-free gpt.rms_norm.";
  let description = [{
    With `r = rsqrt(mean(x^2) + eps)` over the last dim (C of it) and `y = x r`:
    `dx = r (dy - y mean(dy * y))`. `x` and `dy` have one shape; the result has x's type.

    ```mlir
    %dx = gpt.rms_norm_grad %x, %dy : tensor<4x2048x1280xbf16>, tensor<4x2048x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Gpt_FloatTensor:$dy,
                   DefaultValuedAttr<F64Attr, "1.1920928955078125e-07">:$eps);
  let results = (outs Gpt_FloatTensor:$dx);
  let assemblyFormat = "$x `,` $dy attr-dict `:` type($x) `,` type($dy)";
  let hasVerifier = 1;
}

def Gpt_CrossEntropyGradOp : Gpt_GradOp<"cross_entropy_grad"> {
  let summary = "Cotangent of the logits of gpt.cross_entropy.";
  let description = [{
    `dlogits[n] = dloss * (softmax(logits[n]) - onehot(t_n)) / count` for counted rows and
    0 for rows whose target is `ignore_index`. `dloss` is the rank-0 cotangent of the
    loss (1, or 1/grad_accum_steps when the caller scales the loss).

    ```mlir
    %dl = gpt.cross_entropy_grad %logits, %targets, %dloss
        : tensor<8192x65536xf32>, tensor<8192xi32>, tensor<f32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$logits, Gpt_IntTensor:$targets,
                   Gpt_FloatScalar:$dloss, DefaultValuedAttr<I64Attr, "-1">:$ignore_index);
  let results = (outs Gpt_FloatTensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $targets `,` $dloss attr-dict `:` type($logits) `,` type($targets) `,`
    type($dloss)
  }];
}

def Gpt_EmbeddingGradOp : Gpt_GradOp<"embedding_grad"> {
  let summary = "Cotangent of the table of gpt.embedding: a scatter-add.";
  let description = [{
    `dtable [vocab_size, C]` starts at zero and `dtable[ids[i], :] += dy[i, :]` for every
    position `i` of `ids [...]` (`dy [..., C]`). Repeated ids accumulate.

    ```mlir
    %dwte = gpt.embedding_grad %ids, %dx, vocab 65536 : tensor<4x2048xi32>, tensor<4x2048x1280xbf16>
    // %dwte : tensor<65536x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_IntTensor:$ids, Gpt_FloatTensor:$dy, I64Attr:$vocab_size);
  let results = (outs Gpt_FloatTensor:$dtable);
  let assemblyFormat = [{
    $ids `,` $dy `,` `vocab` $vocab_size attr-dict `:` type($ids) `,` type($dy)
  }];
  let hasVerifier = 1;
}

def Gpt_RotaryGradOp : Gpt_GradOp<"rotary_grad"> {
  let summary = "Cotangent of x of gpt.rotary: the inverse rotation of dy.";
  let description = [{
    The rotation is orthogonal, so `dx` is `dy` rotated by +theta:
    `dx1 = dy1 cos - dy2 sin`, `dx2 = dy1 sin + dy2 cos`, with the forward's positions
    and base. With `round_bf16` (f32 only), as PyTorch's backward of the bf16 rotary: cos and
    sin bf16 values, each product and each sum rounded to bf16.

    ```mlir
    %dq = gpt.rotary_grad %dq1, positions %pos : tensor<4x2048x10x128xbf16>, tensor<4x2048xi32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$dy, Optional<Gpt_IntTensor>:$positions,
                   DefaultValuedAttr<F64Attr, "10000.0">:$base, UnitAttr:$round_bf16);
  let results = (outs Gpt_FloatTensor:$dx);
  let assemblyFormat = [{
    $dy (`,` `positions` $positions^)? attr-dict `:` type($dy) (`,` type($positions)^)?
  }];
  let hasVerifier = 1;
}

def Gpt_ReluSquareGradOp : Gpt_GradOp<"relu_square_grad"> {
  let summary = "Cotangent of gpt.relu_square: 2 relu(x) dy.";
  let description = [{
    ```mlir
    %dh = gpt.relu_square_grad %h, %da : tensor<4x2048x5120xbf16>, tensor<4x2048x5120xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Gpt_FloatTensor:$dy);
  let results = (outs Gpt_FloatTensor:$dx);
  let assemblyFormat = "$x `,` $dy attr-dict `:` type($x) `,` type($dy)";
}

def Gpt_SoftcapGradOp : Gpt_GradOp<"softcap_grad"> {
  let summary = "Cotangent of gpt.softcap from its output: (1 - (y/cap)^2) dy.";
  let description = [{
    `y` is the forward's output (`cap tanh(x/cap)`), so `1 - (y/cap)^2` is the derivative
    of the softcap at x.

    ```mlir
    %dz = gpt.softcap_grad %y, %dy {cap = 15.0 : f64}
        : tensor<4x2048x65536xbf16>, tensor<4x2048x65536xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$y, Gpt_FloatTensor:$dy,
                   DefaultValuedAttr<F64Attr, "15.0">:$cap);
  let results = (outs Gpt_FloatTensor:$dx);
  let assemblyFormat = "$y `,` $dy attr-dict `:` type($y) `,` type($dy)";
  let hasVerifier = 1;
}

def Gpt_MatmulWeightGradOp : Gpt_GradOp<"matmul_weight_grad"> {
  let summary = "Cotangent of w of gpt.matmul: dy^T x over all leading dims.";
  let description = [{
    `dy [..., N]`, `x [..., K]` with the same leading dims; `dw [N, K]` with
    `dw[n, k] = sum over leading positions i of dy[i, n] x[i, k]` (one GEMM with the left
    operand transposed). The result has dy's element type.

    ```mlir
    %dw = gpt.matmul_weight_grad %dh, %x : tensor<4x2048x5120xbf16>, tensor<4x2048x1280xbf16>
    // %dw : tensor<5120x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$dy, Gpt_FloatTensor:$x);
  let results = (outs Gpt_FloatTensor:$dw);
  let assemblyFormat = "$dy `,` $x attr-dict `:` type($dy) `,` type($x)";
}

#endif  // GPT_SFT_IR_GPT_GRAD_OPS_TD_
