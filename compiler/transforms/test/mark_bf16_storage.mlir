// gpt-mark-bf16-storage: results that are bf16 values (a fusion ending in a round, the bf16
// rotary, reshapes and transposes of them) are marked for 2-byte storage; a returned value,
// itself or through a reshape, and a result that is not rounded stay f32.
// RUN: gptc-opt %s --gpt-mark-bf16-storage | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=640 --batch=2 --seq=64 --dtype=bfloat16 --emit=planned --function=micro_step --target=opencl | FileCheck %s --check-prefix=GPU
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=640 --batch=2 --seq=64 --dtype=bfloat16 --emit=planned --function=micro_step --target=cpu | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @marks
// CHECK: %[[R:.*]] = gpt.fusion(%arg0) {gpt.bf16_storage = array<i1: true>}
// CHECK: %[[V:.*]] = gpt.reshape %[[R]] to [32] {gpt.bf16_storage = array<i1: true>}
// CHECK: %[[T:.*]] = gpt.transpose %[[R]] [1, 0] {gpt.bf16_storage = array<i1: true>}
// CHECK: gpt.fusion(%[[V]]) :
// CHECK: gpt.fusion(%[[T]]) :
// CHECK: %[[F:.*]] = gpt.fusion(%arg0) :
// CHECK: %[[O:.*]] = gpt.fusion(%arg0) :
// CHECK: gpt.reshape %[[O]] to [32] :
module attributes {gpt.autocast = "bf16"} {
  func.func @marks(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<32xf32>) {
    %r = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      %b = gpt.round_bf16 %a : tensor<4x8xf32>
      gpt.yield %b : tensor<4x8xf32>
    }
    %v = gpt.reshape %r to [32] : tensor<4x8xf32>
    %t = gpt.transpose %r [1, 0] : tensor<4x8xf32>
    %v2 = gpt.fusion(%v) : (tensor<32xf32>) -> tensor<32xf32> {
    ^bb0(%a: tensor<32xf32>):
      %b = gpt.add %a, %a : tensor<32xf32>, tensor<32xf32>
      gpt.yield %b : tensor<32xf32>
    }
    %t2 = gpt.fusion(%t) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
    ^bb0(%a: tensor<8x4xf32>):
      %b = gpt.add %a, %a : tensor<8x4xf32>, tensor<8x4xf32>
      gpt.yield %b : tensor<8x4xf32>
    }
    %f = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      %b = gpt.round_bf16 %a : tensor<4x8xf32>
      %c = gpt.add %b, %a : tensor<4x8xf32>, tensor<4x8xf32>
      gpt.yield %c : tensor<4x8xf32>
    }
    %o = gpt.fusion(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      %b = gpt.round_bf16 %a : tensor<4x8xf32>
      gpt.yield %b : tensor<4x8xf32>
    }
    %ov = gpt.reshape %o to [32] : tensor<4x8xf32>
    return %v2, %t2, %f, %ov : tensor<32xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<32xf32>
  }
}

// On the GPU targets the step's rounded activations are marked and planned at 2 bytes; the cpu
// target keeps f32 storage.
// GPU: gpt.bf16_storage = array<i1: true>
// CPU-NOT: gpt.bf16_storage
