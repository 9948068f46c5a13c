//===- GptScheduleOps.td - the launch schedule's host ops -*- tablegen -*-===//
//
// This file defines the ops of a lowered entry point's *launch schedule*: after the
// lowering passes (compiler/lowering/{cpu,gpu}) an entry point is a function over memrefs
// (its arguments, and views of one arena at the offsets gpt-plan-buffers chose) whose body
// is the list of launches the runtime runs in order. Device kernels are `gpu.launch_func`,
// copies `memref.copy`; these ops are the rest: a driver builtin, a host range kernel of
// the cpu target, a collective. compiler/lowering/launch_list reads the schedule into the
// artifact (artifact/). Hooks: schedule_ops.cc.
//
//===----------------------------------------------------------------------------------===//

#ifndef GPT_SFT_IR_GPT_SCHEDULE_OPS_TD_
#define GPT_SFT_IR_GPT_SCHEDULE_OPS_TD_

include "GptBase.td"

def Gpt_CallBuiltinOp : Gpt_Op<"call_builtin"> {
  let summary = "Runs a kernel the device driver provides, by name.";
  let description = [{
    A library kernel of the target's driver (the cpu driver's BLAS matmul and flash
    attention: runtime/device/cpu/BUILTINS.md). Operands are memrefs (buffers) and
    integer or float scalars defined by `arith.constant`, passed in order. The compiler has
    chosen the builtin and laid out its arguments; the driver only checks and runs it.

    ```mlir
    gpt.call_builtin "cpu.matmul.f32" (%x, %w, %y, %m, %n, %k)
        : memref<64x256xf32>, memref<512x256xf32>, memref<64x512xf32>, i64, i64, i64
    ```
  }];
  let arguments = (ins StrAttr:$builtin, Variadic<AnyType>:$args);
  let assemblyFormat = "$builtin `(` $args `)` attr-dict `:` type($args)";
  let hasVerifier = 1;
}

def Gpt_LaunchHostKernelOp : Gpt_Op<"launch_host_kernel"> {
  let summary = "Runs a compiled host range kernel over `elements` elements.";
  let description = [{
    A kernel of the cpu target's host module (compiler/codegen/fusion_kernels), whose ABI
    is `void(void* const* buffers, int64 begin, int64 end)`: the driver splits
    `[0, elements)` over its threads. Operands are the kernel's buffers in order (a
    fusion's inputs, then its results).

    ```mlir
    gpt.launch_host_kernel @gpt_fusion_0 elements 4096 (%a, %b, %out)
        : memref<2x32x64xf32>, memref<2x32x64xf32>, memref<2x32x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, I64Attr:$elements, Variadic<AnyMemRef>:$buffers);
  let assemblyFormat = "$kernel `elements` $elements `(` $buffers `)` attr-dict `:` type($buffers)";
}

def Gpt_CollectiveOp : Gpt_Op<"collective"> {
  let summary = "A collective over the data-parallel ranks, in place on one buffer.";
  let description = [{
    `kind` is "all_reduce": every rank's buffer becomes the reduction of all ranks'.
    On one rank it is the identity (the runtime runs nothing).

    ```mlir
    gpt.collective "all_reduce" avg %grad : memref<1280x1280xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Gpt_ReductionKind:$reduction, AnyMemRef:$buffer);
  let assemblyFormat = "$kind $reduction $buffer attr-dict `:` type($buffer)";
}

#endif  // GPT_SFT_IR_GPT_SCHEDULE_OPS_TD_
