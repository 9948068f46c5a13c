//===- GptCollectiveOps.td - collectives of the gpt dialect ---*- tablegen -*-===//
//
// This file defines the collectives over a named group of ranks (e.g. "dp", the
// data-parallel group). The runtime maps a group to a Communicator (NCCL or MPI); the
// IR only states what is combined, how, and along which dim. Hooks: collective_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_COLLECTIVE_OPS_TD_
#define GPT_SFT_IR_GPT_COLLECTIVE_OPS_TD_

include "GptBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Collectives are not Pure: two identical all_reduces are two rendezvous, so CSE must
// not merge them and DCE must not drop one that a peer rank waits for.

def Gpt_AllReduceOp : Gpt_Op<"all_reduce", [InferTypeOpAdaptor]> {
  let summary = "Every rank gets the reduction of all ranks' tensors.";
  let description = [{
    The result has the operand's type.

    ```mlir
    %g = gpt.all_reduce avg %grad over "dp" : tensor<1280x1280xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Gpt_ReductionKind:$reduction, StrAttr:$group);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = "$reduction $x `over` $group attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def Gpt_ReduceScatterOp : Gpt_Op<"reduce_scatter", [InferTypeOpAdaptor]> {
  let summary = "Reduce across ranks, then rank r keeps slice r along `dim`.";
  let description = [{
    `group_size` ranks; dim `dim` of the operand must divide by it when
    static, and the result's dim is the operand's divided by `group_size` (ZeRO-2:
    rank r owns rows `[r R, (r+1) R)`).

    ```mlir
    %s = gpt.reduce_scatter avg %grad over "dp", size 8, dim 0 : tensor<65536x1280xf32>
    // %s : tensor<8192x1280xf32>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, Gpt_ReductionKind:$reduction, StrAttr:$group,
                   I64Attr:$group_size, I64Attr:$dim);
  let results = (outs Gpt_FloatTensor:$result);
  // Attributes the shape rule reads are spelled in the format, not in attr-dict: the
  // parser hands attr-dict entries to inferReturnTypes outside the op's properties.
  let assemblyFormat = [{
    $reduction $x `over` $group `,` `size` $group_size `,` `dim` $dim attr-dict `:` type($x)
  }];
  let hasVerifier = 1;
}

def Gpt_AllGatherOp : Gpt_Op<"all_gather", [InferTypeOpAdaptor]> {
  let summary = "Concatenate every rank's tensor along `dim`, in rank order.";
  let description = [{
    The result's dim `dim` is the operand's times `group_size`.

    ```mlir
    %p = gpt.all_gather %shard over "dp", size 8, dim 0 : tensor<8192x1280xbf16>
    // %p : tensor<65536x1280xbf16>
    ```
  }];
  let arguments = (ins Gpt_FloatTensor:$x, StrAttr:$group, I64Attr:$group_size,
                   I64Attr:$dim);
  let results = (outs Gpt_FloatTensor:$result);
  let assemblyFormat = [{
    $x `over` $group `,` `size` $group_size `,` `dim` $dim attr-dict `:` type($x)
  }];
  let hasVerifier = 1;
}

#endif  // GPT_SFT_IR_GPT_COLLECTIVE_OPS_TD_
