//===- GptBase.td - the gpt dialect, its base op class and types -*- tablegen -*-===//
//
// This file defines the `gpt` dialect: tensor-level ops with value semantics for one
// training step of a nanochat-style GPT (forward, loss, backward, collectives, optimizer
// update). Every op family lives in its own Gpt*Ops.td file; this file holds what they
// share: the dialect, the op base class, the type constraints and the enums.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_BASE_TD_
#define GPT_SFT_IR_GPT_BASE_TD_

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Gpt_Dialect : Dialect {
  let name = "gpt";
  let cppNamespace = "::gpt_sft::compiler::gpt";
  let summary = "Tensor ops of one GPT training step, with value semantics.";
  let description = [{
    The `gpt` dialect states one training step of a nanochat-style GPT as a function over
    tensors: embedding, matmul, rms_norm, rotary, attention, relu_square, softcap,
    cross_entropy and their gradients, the AdamW and Muon updates, and collectives over a
    named group. Every op has a verifier and a shape rule (InferTypeOpInterface, so result
    types are never written in the custom syntax); differentiable ops implement
    `VjpOpInterface`, so autodiff is one generic pass. Dimensions may be dynamic (`?`): the
    interpreter runs the same IR with dynamic shapes, the compiled path requires static ones.

    Dimension glossary used in op descriptions: B batch, T time, C channels, H query heads,
    Hkv key/value heads, D head dim, V vocabulary, N rows, K contraction.
  }];
}

/// Base class of every gpt op: `Gpt_Op<"matmul", [...]>` defines `gpt.matmul`.
class Gpt_Op<string mnemonic, list<Trait> traits = []> :
    Op<Gpt_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------------------===//

/// Activations, weights, gradients and optimizer state: f32, f64 or bf16.
def Gpt_FloatTensor : RankedTensorOf<[F32, F64, BF16]>;

/// Token ids, targets, positions and segment ids: i32.
def Gpt_IntTensor : RankedTensorOf<[I32]>;

/// Either: what data-movement ops (reshape) accept, so targets can be flattened too.
def Gpt_Tensor : RankedTensorOf<[F32, F64, BF16, I32]>;

/// A rank-0 float tensor: a loss, a learning rate, a step counter.
def Gpt_FloatScalar : 0DTensorOf<[F32, F64, BF16]>;

//===----------------------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------------------===//

def Gpt_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a collective combines the ranks' values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Avg", 1, "avg">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">
    ]> {
  let cppNamespace = "::gpt_sft::compiler::gpt";
}

#endif  // GPT_SFT_IR_GPT_BASE_TD_
