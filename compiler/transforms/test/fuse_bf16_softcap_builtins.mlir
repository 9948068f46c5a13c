// gpt-fuse with bf16-softcap-builtins (the cpu target): the bf16 softcap, its gradient under
// autocast and a rounding only one of them reads stay plain ops for the target's lowering;
// every other rounding fuses as before. Without the option they are fusions.
// RUN: gptc-opt %s --gpt-fuse="bf16-softcap-builtins=true" | FileCheck %s
// RUN: gptc-opt %s --gpt-fuse | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @softcap
// CHECK: %[[R:.*]] = gpt.round_bf16 %arg0
// CHECK-NEXT: %[[Y:.*]] = gpt.softcap %[[R]] {round_bf16}
// CHECK-NEXT: %[[D:.*]] = gpt.round_bf16 %arg1
// CHECK-NEXT: %[[G:.*]] = gpt.softcap_grad %[[Y]], %[[D]]
// The rounding of the gradient is read by an add too: it fuses with the add.
// CHECK-NEXT: gpt.fusion(%[[G]]) :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpt.round_bf16
// CHECK-NEXT: gpt.add
// FUSED-LABEL: func.func @softcap
// FUSED: gpt.fusion(%arg0)
// FUSED-NEXT: ^bb0
// FUSED-NEXT: gpt.round_bf16
// FUSED-NEXT: gpt.softcap
// FUSED-NOT: gpt.softcap_grad %
// FUSED: gpt.fusion(%arg1, %{{.*}})
module attributes {gpt.autocast = "bf16"} {
  func.func @softcap(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %r = gpt.round_bf16 %x : tensor<4x8xf32>
    %y = gpt.softcap %r {round_bf16} : tensor<4x8xf32>
    %d = gpt.round_bf16 %dy : tensor<4x8xf32>
    %g = gpt.softcap_grad %y, %d : tensor<4x8xf32>, tensor<4x8xf32>
    %gr = gpt.round_bf16 %g : tensor<4x8xf32>
    %s = gpt.add %gr, %gr : tensor<4x8xf32>, tensor<4x8xf32>
    return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
