//===- GptDecodeOps.td - the KV-cache decoding ops of the gpt dialect -*- tablegen -*-===//
//
// This file defines the ops only inference with a KV cache needs (NANOCHAT.md 1.7): the
// append of new keys and values to a cache (`gpt.concat` along T) and attention whose
// queries are the last Tq of Tk positions (`gpt.cached_attention`, causal aligned
// bottom-right). They are not differentiable: no step the builder trains through contains
// them (compiler/builder/decode_builder.cc emits them in @decode only). Hooks: decode_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_DECODE_OPS_TD_
#define GPT_SFT_IR_GPT_DECODE_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------------------===//
// ConcatOp (decode_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_ConcatOp : Gpt_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenation of two tensors along one axis (the KV-cache append).";
  let description = [{
    `lhs` and `rhs` have one rank, one element type and compatible dims except along
    `axis` (0 <= axis < rank); the result's `axis` dim is the sum (dynamic if either is).
    The decoder appends the new keys `[B, Tnew, Hkv, D]` to the cache `[B, Tc, Hkv, D]`
    with `axis = 1`. Not differentiable.

    ```mlir
    %k = gpt.concat %cache, %k_new axis 1 : tensor<1x?x4x32xf32>, tensor<1x1x4x32xf32>
    // %k : tensor<1x?x4x32xf32>
    ```
  }];
  let arguments = (ins Gpt_Tensor:$lhs, Gpt_Tensor:$rhs, I64Attr:$axis);
  let results = (outs Gpt_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `axis` $axis attr-dict `:` type($lhs) `,` type($rhs)";
}

//===----------------------------------------------------------------------------------===//
// CachedAttentionOp (decode_ops.cc)
//===----------------------------------------------------------------------------------===//

def Gpt_CachedAttentionOp : Gpt_Op<"cached_attention", [Pure, InferTypeOpAdaptor]> {
  let summary = "Causal attention of the last Tq positions over all Tk keys (KV cache).";
  let description = [{
    `q [B, Tq, H, D]`, `k, v [B, Tk, Hkv, D]` with `Tq <= Tk` and `H % Hkv == 0`. Query `i`
    sits at position `Tk - Tq + i` and sees keys `0 .. Tk - Tq + i`: the causal mask aligned
    bottom-right, which is nanochat's KV-cache attention (NANOCHAT.md 1.7): plain causal
    when `Tq == Tk` (prefill), every key when `Tq == 1` (decode), and the chunked-prefill
    mask in between. GQA as in `gpt.attention`; `scale` defaults to `1/sqrt(D)`. The
    result is `[B, Tq, H, D]`. Not differentiable.

    ```mlir
    %o = gpt.cached_attention %q, %k, %v
        : tensor<1x1x4x32xf32>, tensor<1x?x4x32xf32>, tensor<1x?x4x32xf32>
    // %o : tensor<1x1x4x32xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$q, Gpt_FloatTensor:$k, Gpt_FloatTensor:$v,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v attr-dict `:` type($q) `,` type($k) `,` type($v)
  }];
  let hasVerifier = 1;
}

#endif  // GPT_SFT_IR_GPT_DECODE_OPS_TD_
