// gpt-verify-static checks the compiled path's contract: every tensor is static and, with
// batch/seq, the batch arguments (inputs, targets, segment_ids, positions) are [B, T].
// The step gptc builds for a static config passes, padded and packed.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=autodiff | gptc-opt --gpt-verify-static="batch=2 seq=64" | FileCheck %s --check-prefix=GPTC
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --packed --emit=autodiff | gptc-opt --gpt-verify-static="batch=2 seq=64" | FileCheck %s --check-prefix=GPTC
// The wrong [B, T], or a dynamic T, fails and names the argument.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=autodiff | not gptc-opt --gpt-verify-static="batch=2 seq=32" 2>&1 | FileCheck %s --check-prefix=WRONG
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=-1 --emit=autodiff | not gptc-opt --gpt-verify-static 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: gptc-opt %s --split-input-file --verify-diagnostics --gpt-verify-static="batch=2 seq=64"

// GPTC: func.func @micro_step(
// GPTC: func.func @optimizer_step(
// WRONG: error: 'func.func' @logits argument 8 ("inputs") has type 'tensor<2x64xi32>', but the static contract (batch=2 seq=32) requires [2, 32]
// DYNAMIC: error: 'func.func' @logits argument 8 ("inputs") has type 'tensor<2x?xi32>', but the static contract requires a static shape

func.func @static_ok(%w: tensor<8x16xf32>, %x: tensor<2x64x16xf32>,
                     %ids: tensor<2x64xi32> {gpt.name = "inputs"}) -> tensor<2x64x8xf32> {
  %y = gpt.matmul %x, %w : tensor<2x64x16xf32>, tensor<8x16xf32>
  return %y : tensor<2x64x8xf32>
}

// -----

func.func @dynamic_argument(%w: tensor<8x16xf32>,
    // expected-error @+1 {{'func.func' @dynamic_argument argument 1 has type 'tensor<2x?x16xf32>', but the static contract requires a static shape}}
    %x: tensor<2x?x16xf32>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op @dynamic_result result 0 has type 'tensor<?x8xf32>', but the static contract requires a static shape}}
func.func @dynamic_result(%x: tensor<?x8xf32>
    // expected-error @-1 {{'func.func' @dynamic_result argument 0 has type 'tensor<?x8xf32>', but the static contract requires a static shape}}
    ) -> tensor<?x8xf32> {
  // expected-error @+1 {{'gpt.relu_square' op result #0 has type 'tensor<?x8xf32>', but the static contract requires a static shape}}
  %y = gpt.relu_square %x : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @wrong_batch(
    // expected-error @+1 {{'func.func' @wrong_batch argument 0 ("targets") has type 'tensor<4x64xi32>', but the static contract (batch=2 seq=64) requires [2, 64]}}
    %t: tensor<4x64xi32> {gpt.name = "targets"},
    // expected-error @+1 {{'func.func' @wrong_batch argument 1 ("segment_ids") has type 'tensor<2x128xi32>', but the static contract (batch=2 seq=64) requires [2, 64]}}
    %s: tensor<2x128xi32> {gpt.name = "segment_ids"},
    // Only the batch arguments are held to [B, T].
    %o: tensor<4x64xi32> {gpt.name = "other"}) {
  return
}

// -----

func.func @dynamic_in_fusion(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %f = gpt.fusion(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    // expected-error @+1 {{'tensor.cast' op result #0 has type 'tensor<?x8xf32>', but the static contract requires a static shape}}
    %d = tensor.cast %a : tensor<2x8xf32> to tensor<?x8xf32>
    %s = tensor.cast %d : tensor<?x8xf32> to tensor<2x8xf32>
    gpt.yield %s : tensor<2x8xf32>
  }
  return %f : tensor<2x8xf32>
}
