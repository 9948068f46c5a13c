//===- GptOps.td - the forward ops of the gpt dialect --------*- tablegen -*-===//
//
// This file defines the differentiable forward ops: the model (embedding, matmul,
// rms_norm, rotary, attention, relu_square, softcap, add, mul, reshape, transpose), its
// loss (cross_entropy) and round_bf16 (autocast's rounding). Each op infers its result type (InferTypeOpAdaptor) and
// implements VjpOpInterface; the C++ hooks live in the family's .cc file, named in the
// banner above each op.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_OPS_TD_
#define GPT_SFT_IR_GPT_OPS_TD_

include "GptBase.td"
include "VjpOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// The traits every forward op shares: no side effects, an inferred result type, a VJP.
class Gpt_ForwardOp<string mnemonic, list<Trait> traits = []> :
    Gpt_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor,
                                          DeclareOpInterfaceMethods<VjpOpInterface>])>;

//===----------------------------------------------------------------------------------===//
// EmbeddingOp (embedding_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_EmbeddingOp : Gpt_ForwardOp<"embedding"> {
  let summary = "Row gather: out[..., :] = table[ids[...], :].";
  let description = [{
    Looks up one row of the table `[V, C]` per token id; ids of any shape `[...]` give
    `[..., C]`. Ids outside `[0, V)` are undefined behaviour (the data pipeline guarantees
    them). The cotangent of the table is `gpt.embedding_grad` (a scatter-add); ids get none.

    ```mlir
    %x = gpt.embedding %wte[%ids] : tensor<65536x1280xbf16>, tensor<4x2048xi32>
    // %x : tensor<4x2048x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$table, Gpt_IntTensor:$ids);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$table `[` $ids `]` attr-dict `:` type($table) `,` type($ids)";
}

//===----------------------------------------------------------------------------------===//
// MatmulOp (matmul_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_MatmulOp : Gpt_ForwardOp<"matmul"> {
  let summary = "x @ w^T, a bias-free Linear: [..., K] x [N, K] -> [..., N].";
  let description = [{
    Multiplies the activations `x [..., K]` (any number of leading dims) by the transpose
    of a weight stored as PyTorch's Linear stores it, `w [N, K]` (out_features,
    in_features). Both operands share the element type.

    VJP: `dx = gpt.matmul(dy, gpt.transpose(w, [1, 0]))` (the lowering folds the transpose
    into the GEMM's transpose flag) and `dw = gpt.matmul_weight_grad(dy, x)`, a dedicated
    op because `dy^T x` contracts over all leading dims of the activations, which
    matmul+transpose could only say by materialising reshaped and transposed activations.

    ```mlir
    %h = gpt.matmul %x, %c_fc : tensor<4x2048x1280xbf16>, tensor<5120x1280xbf16>
    // %h : tensor<4x2048x5120xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Gpt_FloatTensor:$w);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$x `,` $w attr-dict `:` type($x) `,` type($w)";
}

//===----------------------------------------------------------------------------------===//
// RmsNormOp (norm_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_RmsNormOp : Gpt_ForwardOp<"rms_norm"> {
  let summary = "Parameter-free RMSNorm over the last dim.";
  let description = [{
    `y = x * rsqrt(mean(x^2 over the last dim) + eps)`, with no weight. The internals are
    fp32 whatever the element type; the result is rounded once to the element type.
    `eps` defaults to 2^-23 (fp32's epsilon), which is what torch uses for bf16 and fp32
    inputs when called with `eps=None`. The VJP is `gpt.rms_norm_grad`.

    ```mlir
    %y = gpt.rms_norm %x : tensor<4x2048x1280xbf16>
    %z = gpt.rms_norm %x {eps = 1.0e-06 : f64} : tensor<4x2048x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x,
                   DefaultValuedAttr<F64Attr, "1.1920928955078125e-07">:$eps);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------------------===//
// RotaryOp (rotary_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_RotaryOp : Gpt_ForwardOp<"rotary"> {
  let summary = "Rotary position embedding, half-split pairing, rotation by -theta.";
  let description = [{
    For `x [B, T, H, D]` (D even) split the last dim into halves `x1 = x[..., :D/2]` and
    `x2 = x[..., D/2:]`; with `theta[b, t, j] = pos[b, t] * base^(-2j/D)`,
    `y1 = x1 cos + x2 sin` and `y2 = -x1 sin + x2 cos` (nanochat's -theta convention).
    `pos` is the optional `positions [B, T]` i32 operand (positions that restart per packed
    conversation); without it `pos[b, t] = t`. The result has the type of `x`.
    With `round_bf16` (f32 only; gpt-autocast-bf16 sets it) the op is nanochat's rotary under
    bf16 autocast: cos and sin rounded to bf16 values, and each of the four products and two
    sums rounded to bf16, so the result is bf16-valued.
    The VJP is the inverse rotation, `gpt.rotary_grad` (with the same rounding); positions get
    no cotangent.

    ```mlir
    %q1 = gpt.rotary %q : tensor<4x2048x10x128xbf16>
    %k1 = gpt.rotary %k, positions %pos : tensor<4x2048x10x128xbf16>, tensor<4x2048xi32>
    %q2 = gpt.rotary %q {round_bf16} : tensor<4x2048x10x128xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Optional<Gpt_IntTensor>:$positions,
                   DefaultValuedAttr<F64Attr, "10000.0">:$base, UnitAttr:$round_bf16);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`,` `positions` $positions^)? attr-dict `:` type($x) (`,` type($positions)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------------------===//
// AttentionOp (attention_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_AttentionOp : Gpt_ForwardOp<"attention"> {
  let summary = "Scaled dot-product attention: causal, GQA/MQA, optional segments.";
  let description = [{
    `q [B, T, H, D]`, `k, v [B, T, Hkv, D]` with `H % Hkv == 0`; query head `h` reads kv
    head `h / (H / Hkv)` (repeat_interleave order). Scores are `q.k * scale` (`scale`
    defaults to `1/sqrt(D)`), softmax over keys, output `[B, T, H, D]`. With `causal`
    (default true) query `i` sees keys `0..i`. With `segment_ids [B, T]` (i32) a query
    also sees only keys of its own segment, which makes a packed row document-causal.
    The VJP is `gpt.attention_grad`, which recomputes the scores (flash-style).

    ```mlir
    %o = gpt.attention %q, %k, %v : tensor<4x2048x10x128xbf16>, tensor<4x2048x10x128xbf16>, tensor<4x2048x10x128xbf16>
    %p = gpt.attention %q, %k, %v, segments %seg {causal = true}
        : tensor<4x2048x10x128xbf16>, tensor<4x2048x5x128xbf16>, tensor<4x2048x5x128xbf16>, tensor<4x2048xi32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$q, Gpt_FloatTensor:$k, Gpt_FloatTensor:$v,
                   Optional<Gpt_IntTensor>:$segment_ids,
                   DefaultValuedAttr<BoolAttr, "true">:$causal,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`,` `segments` $segment_ids^)? attr-dict `:` type($q) `,` type($k)
    `,` type($v) (`,` type($segment_ids)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------------------===//
// Elementwise ops (elementwise_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_ReluSquareOp : Gpt_ForwardOp<"relu_square"> {
  let summary = "relu(x)^2, the MLP activation.";
  let description = [{
    Elementwise `max(x, 0)^2`; the result has the type of `x`. VJP:
    `gpt.relu_square_grad(x, dy) = 2 relu(x) dy`.

    ```mlir
    %a = gpt.relu_square %h : tensor<4x2048x5120xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Gpt_SoftcapOp : Gpt_ForwardOp<"softcap"> {
  let summary = "cap * tanh(x / cap), the logit softcap.";
  let description = [{
    Elementwise `cap * tanh(x / cap)` with `cap > 0` (default 15), computed in the element
    type. VJP: `gpt.softcap_grad(y, dy) = (1 - (y/cap)^2) dy`, which reads the output `y`
    so that `x` need not stay alive.
    With `round_bf16` (f32 only; gpt-autocast-bf16 sets it) it is nanochat's softcap under
    bf16 autocast, three bf16 ops: `bf16(cap * bf16(tanh(bf16(x / cap))))`, a bf16-valued
    result; its VJP first rounds `dy` to bf16 (the gradient of a bf16 tensor is bf16).

    ```mlir
    %l = gpt.softcap %logits {cap = 15.0 : f64} : tensor<4x2048x65536xbf16>
    %m = gpt.softcap %raw {round_bf16} : tensor<4x2048x65536xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, DefaultValuedAttr<F64Attr, "15.0">:$cap,
                   UnitAttr:$round_bf16);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def Gpt_RoundBf16Op : Gpt_ForwardOp<"round_bf16"> {
  let summary = "Rounds f32 values to the nearest bfloat16, kept as f32 (autocast's rounding).";
  let description = [{
    Elementwise: each f32 value becomes the nearest bfloat16 value (round to nearest,
    ties to even; NaN stays NaN, overflow becomes inf), stored back as f32. This is how
    `--dtype=bfloat16` states nanochat's autocast (NANOCHAT.md 1.2) while tensors are
    stored as f32: a bf16 tensor is an f32 tensor whose values are bf16 values, and each
    place autocast rounds gets one `gpt.round_bf16` (inserted by gpt-autocast-bf16).
    VJP: the cotangent rounded the same way (`dx = gpt.round_bf16(dy)`), since PyTorch's
    gradient of a bf16 tensor is a bf16 tensor.

    ```mlir
    %h = gpt.round_bf16 %x : tensor<4x2048x1280xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$x);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Gpt_AddOp : Gpt_ForwardOp<"add", [Commutative]> {
  let summary = "Elementwise sum of two tensors of one shape.";
  let description = [{
    `lhs + rhs`; both operands have the same element type and compatible shapes (a
    dynamic dim matches any size; the result takes the static one). No broadcasting.
    VJP: both operands receive `dy`.

    ```mlir
    %r = gpt.add %x, %attn : tensor<4x2048x1280xbf16>, tensor<4x2048x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$lhs, Gpt_FloatTensor:$rhs);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Gpt_MulOp : Gpt_ForwardOp<"mul", [Commutative]> {
  let summary = "Elementwise product of two tensors of one shape.";
  let description = [{
    `lhs * rhs` with the same shape rule as `gpt.add`. VJP: `(dy * rhs, dy * lhs)`.

    ```mlir
    %p = gpt.mul %a, %b : tensor<4x2048x1280xf32>, tensor<4x2048x1280xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$lhs, Gpt_FloatTensor:$rhs);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

//===----------------------------------------------------------------------------------===//
// Shape ops (shape_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_ReshapeOp : Gpt_ForwardOp<"reshape"> {
  let summary = "Row-major reshape to `shape`; one entry may be -1 (inferred).";
  let description = [{
    Reinterprets `x` in row-major order with the dims in `shape`. At most one entry is
    -1: its size is the element count divided by the product of the others when `x` is
    static, else dynamic (`?`). When both sides are static the element counts must agree.
    VJP: a reshape of `dy` back to the shape of `x` (at most one dynamic dim in `x`).

    ```mlir
    %q = gpt.reshape %x to [4, 2048, 10, 128] : tensor<4x2048x1280xbf16>
    %f = gpt.reshape %l to [-1, 65536] : tensor<4x2048x65536xf32>
    // %f : tensor<8192x65536xf32>
    %t = gpt.reshape %targets to [-1] : tensor<4x2048xi32>
    ```
  }];
  let arguments = (ins Gpt_Tensor:$x, DenseI64ArrayAttr:$shape);
  let results = (outs Gpt_Tensor:$result);
  let assemblyFormat = "$x `to` $shape attr-dict `:` type($x)";
}

def Gpt_TransposeOp : Gpt_ForwardOp<"transpose"> {
  let summary = "Permutes the dims: result dim i is input dim perm[i].";
  let description = [{
    `perm` is a permutation of `0..rank-1`. VJP: transpose `dy` by the inverse
    permutation.

    ```mlir
    %t = gpt.transpose %w [1, 0] : tensor<5120x1280xbf16>
    // %t : tensor<1280x5120xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$x $perm attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------------------===//
// CrossEntropyOp (loss_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_CrossEntropyOp : Gpt_ForwardOp<"cross_entropy"> {
  let summary = "Mean softmax cross-entropy over the targets not equal to ignore_index.";
  let description = [{
    `logits [N, V]`, `targets [N]` i32. The loss is
    `sum_{n: t_n != ignore} (logsumexp(logits[n]) - logits[n, t_n]) / count(t_n != ignore)`,
    a rank-0 tensor of the logits' element type (0 when no target counts). `ignore_index`
    defaults to -1. The VJP is `gpt.cross_entropy_grad`; targets get no cotangent.

    ```mlir
    %loss = gpt.cross_entropy %logits, %targets : tensor<8192x65536xf32>, tensor<8192xi32>
    // %loss : tensor<f32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$logits, Gpt_IntTensor:$targets,
                   DefaultValuedAttr<I64Attr, "-1">:$ignore_index);
  let results = (outs Gpt_FloatScalar:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` type($logits) `,` type($targets)";
}

#endif  // GPT_SFT_IR_GPT_OPS_TD_
