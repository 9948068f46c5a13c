// gpt-fuse wraps each chain of elementwise ops of one shape (each op feeding the next, every
// intermediate used only inside the chain) into one gpt.fusion; other ops stay outside.
// RUN: gptc-opt %s --gpt-fuse | FileCheck %s
// On the step gptc builds, the fused module verifies and holds fusions (the backward's
// cotangent sums); the fused stage of the pipeline gives the same.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=autodiff | gptc-opt --gpt-fuse | FileCheck %s --check-prefix=GPTC
// RUN: gptc --depth=2 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --packed --emit=fused | gptc-opt --verify-each | FileCheck %s --check-prefix=GPTC

// GPTC-LABEL: func.func @micro_step(
// GPTC: gpt.fusion
// GPTC: gpt.yield
// GPTC-LABEL: func.func @optimizer_step(

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[DY:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[F:.*]] = gpt.fusion(%[[X]], %[[Y]], %[[DY]]) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[S:.*]] = gpt.add %[[A]], %[[B]]
// CHECK-NEXT: %[[R:.*]] = gpt.relu_square %[[S]]
// CHECK-NEXT: %[[M:.*]] = gpt.mul %[[R]], %[[S]]
// CHECK-NEXT: %[[T:.*]] = gpt.softcap %[[M]] {cap = 3.000000e+01 : f64}
// CHECK-NEXT: %[[G:.*]] = gpt.softcap_grad %[[T]], %[[C]] {cap = 3.000000e+01 : f64}
// CHECK-NEXT: %[[Q:.*]] = gpt.relu_square_grad %[[G]], %[[C]]
// CHECK-NEXT: gpt.yield %[[Q]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = gpt.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %r = gpt.relu_square %s : tensor<4x8xf32>
  %m = gpt.mul %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
  %t = gpt.softcap %m {cap = 30.0 : f64} : tensor<4x8xf32>
  %g = gpt.softcap_grad %t, %dy {cap = 30.0 : f64} : tensor<4x8xf32>, tensor<4x8xf32>
  %q = gpt.relu_square_grad %g, %dy : tensor<4x8xf32>, tensor<4x8xf32>
  return %q : tensor<4x8xf32>
}

// A value with a use outside the chain ends its group there: add+mul form one fusion
// (yielding %m, which the return also reads), relu_square alone is not wrapped.
// CHECK-LABEL: func.func @outside_use
// CHECK-NEXT: %[[F:.*]] = gpt.fusion(%arg0, %arg1) :
// CHECK: gpt.add
// CHECK-NEXT: %[[M:.*]] = gpt.mul
// CHECK-NEXT: gpt.yield %[[M]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = gpt.relu_square %[[F]]
// CHECK-NEXT: return %[[R]], %[[F]]
func.func @outside_use(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = gpt.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %m = gpt.mul %s, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %r = gpt.relu_square %m : tensor<4x8xf32>
  return %r, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// Matmul is not elementwise: it splits the chain into two groups of one, neither wrapped.
// CHECK-LABEL: func.func @matmul_not_fused
// CHECK-NOT: gpt.fusion
// CHECK: gpt.relu_square
// CHECK-NEXT: gpt.matmul
// CHECK-NEXT: gpt.relu_square
// CHECK-NEXT: return
func.func @matmul_not_fused(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = gpt.relu_square %x : tensor<4x8xf32>
  %h = gpt.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %b = gpt.relu_square %h : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// Chains follow the dataflow, not the text: ops in between stay in place, the fusion stands
// where the chain's last op stood. Another shape is another chain.
// CHECK-LABEL: func.func @interleaved
// CHECK-NEXT: %[[H:.*]] = gpt.matmul
// CHECK-NEXT: %[[R:.*]] = gpt.relu_square %arg2 : tensor<2x3xf32>
// CHECK-NEXT: %[[F:.*]] = gpt.fusion(%arg0, %arg1, %[[H]])
// CHECK: gpt.add
// CHECK-NEXT: gpt.add
// CHECK-NEXT: gpt.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]], %[[R]]
func.func @interleaved(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<2x3xf32>,
                       %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<2x3xf32>) {
  %s = gpt.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %h = gpt.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %r = gpt.relu_square %z : tensor<2x3xf32>
  %t = gpt.add %s, %h : tensor<4x8xf32>, tensor<4x8xf32>
  return %t, %r : tensor<4x8xf32>, tensor<2x3xf32>
}

// gpt.round_bf16 fuses like any elementwise op (here into the residual add before it), and
// alone it still becomes a fusion of one op: the targets run it only as fusion code.
// CHECK-LABEL: func.func @round_bf16
// CHECK-NEXT: %[[W:.*]] = gpt.fusion(%arg1) : (tensor<8x8xf32>) -> tensor<8x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<8x8xf32>):
// CHECK-NEXT: %[[R:.*]] = gpt.round_bf16 %[[A]]
// CHECK-NEXT: gpt.yield %[[R]]
// CHECK: gpt.matmul %arg0, %[[W]]
// CHECK: gpt.fusion(%arg0, %{{.*}}) :
// CHECK: gpt.add
// CHECK-NEXT: gpt.round_bf16
// CHECK-NEXT: gpt.yield
func.func @round_bf16(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %wb = gpt.round_bf16 %w : tensor<8x8xf32>
  %h = gpt.matmul %x, %wb : tensor<4x8xf32>, tensor<8x8xf32>
  %s = gpt.add %x, %h : tensor<4x8xf32>, tensor<4x8xf32>
  %r = gpt.round_bf16 %s : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
