// gpt-plan-buffers: every intermediate's offset in one arena (values live together never
// overlap), in-place optimizer updates over donated arguments, the arena's size on the
// function and in a remark; a dynamic shape is an error naming the op and value.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers --verify-diagnostics
// RUN: not gptc-opt %s --split-input-file --gpt-plan-buffers 2>/dev/null | FileCheck %s
// What a user sees on stderr:
// RUN: not gptc-opt %s --split-input-file --gpt-plan-buffers \
// RUN:   --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// Live ranges (op indices): a [0,1], b [1,3], k [2,5], c [3,5], h [4,4]. Largest first,
// best fit: a at 0; b beside a; c where a was; k on top; h in the gap c and k leave.
// DIAG: remark: arena 2112 bytes (0.00 MiB) for 5 intermediates; naive 3200 bytes
// CHECK-LABEL: func.func @known
// CHECK-SAME: attributes {gpt.arena_bytes = 2112 : i64}
// CHECK-NEXT: arith.addf {{.*}} {gpt.offsets = array<i64: 0>}
// CHECK-NEXT: arith.mulf {{.*}} {gpt.offsets = array<i64: 1024>}
// CHECK-NEXT: arith.constant {gpt.offsets = array<i64: 2048>} dense<2.0{{.*}}> : tensor<f32>
// CHECK-NEXT: arith.subf {{.*}} {gpt.offsets = array<i64: 0>}
// CHECK-NEXT: arith.constant {gpt.offsets = array<i64: 1024>} dense<1.0{{.*}}> : tensor<3xf16>
// expected-remark @+1 {{arena 2112 bytes (0.00 MiB) for 5 intermediates; naive 3200 bytes}}
func.func @known(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<f32>) {
  %a = arith.addf %x, %x : tensor<16x16xf32>
  %b = arith.mulf %a, %a : tensor<16x16xf32>
  %k = arith.constant dense<2.0> : tensor<f32>
  %c = arith.subf %b, %x : tensor<16x16xf32>
  %h = arith.constant dense<1.0> : tensor<3xf16>
  return %c, %k : tensor<16x16xf32>, tensor<f32>
}

// -----

// The new parameter and moments overwrite %p, %m, %v (argument numbers 0, 2, 3): no
// arena bytes; only the scaled learning rate needs some.
// DIAG: remark: arena 64 bytes (0.00 MiB) for 1 intermediates; naive 64 bytes; 768 bytes in place
// CHECK-LABEL: func.func @adamw
// CHECK-SAME: attributes {gpt.arena_bytes = 64 : i64}
// CHECK-NEXT: gpt.mul {{.*}} {gpt.offsets = array<i64: 0>}
// CHECK-NEXT: gpt.adamw_update {{.*}} {gpt.donates = array<i64: 0, 2, 3>, gpt.offsets = array<i64: -1, -1, -1>}
// expected-remark @+1 {{arena 64 bytes (0.00 MiB) for 1 intermediates; naive 64 bytes; 768 bytes in place}}
func.func @adamw(%p: tensor<8x8xf32>, %g: tensor<8x8xf32>, %m: tensor<8x8xf32>,
                 %v: tensor<8x8xf32>, %lr: tensor<f32>, %t: tensor<f32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %lr2 = gpt.mul %lr, %lr : tensor<f32>, tensor<f32>
  %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr2, %t
      : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>, tensor<f32>
  return %p1, %m1, %v1 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// %p is read after the update: new_param cannot overwrite it and gets arena bytes.
// CHECK-LABEL: func.func @read_after_update
// CHECK: gpt.muon_update {{.*}} {gpt.donates = array<i64: -1, 2>, gpt.offsets = array<i64: {{[0-9]+}}, -1>}
// expected-remark @+1 {{arena 512 bytes (0.00 MiB) for 2 intermediates; naive 512 bytes; 256 bytes in place}}
func.func @read_after_update(%p: tensor<8x8xf32>, %g: tensor<8x8xf32>, %buf: tensor<8x8xf32>,
                             %lr: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %p1, %b1 = gpt.muon_update %p, %g, %buf, %lr
      : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
  %u = arith.addf %p, %p : tensor<8x8xf32>
  return %p1, %b1, %u : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Under autocast micro_step accumulates a gradient through a fusion (the new gradient
// rounded, then added to the argument): the fusion's result, returned as that gradient,
// overwrites the argument (number 0) in place, so it takes no arena bytes and needs no copy
// home.
// CHECK-LABEL: func.func @fused_gradient_accumulation
// CHECK: gpt.fusion(%arg1, %arg0) {gpt.donates = array<i64: 0>, gpt.offsets = array<i64: -1>}
// expected-remark @+1 {{arena 0 bytes (0.00 MiB) for 0 intermediates; naive 0 bytes; 256 bytes in place}}
func.func @fused_gradient_accumulation(%acc: tensor<8x8xf32> {gpt.name = "grad/w"}, %g: tensor<8x8xf32> {gpt.name = "g"})
    -> (tensor<8x8xf32> {gpt.name = "grad/w"}) {
  %s = gpt.fusion(%g, %acc) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>):
    %r = gpt.round_bf16 %a : tensor<8x8xf32>
    %y = gpt.add %b, %r : tensor<8x8xf32>, tensor<8x8xf32>
    gpt.yield %y : tensor<8x8xf32>
  }
  return %s : tensor<8x8xf32>
}

// -----

// The same fusion returned as another argument's gradient does not overwrite this one.
// CHECK-LABEL: func.func @fusion_returned_as_another_gradient
// CHECK: gpt.fusion(%arg1, %arg0) {gpt.offsets = array<i64: 0>}
// expected-remark @+1 {{arena 256 bytes (0.00 MiB) for 1 intermediates; naive 256 bytes}}
func.func @fusion_returned_as_another_gradient(%acc: tensor<8x8xf32> {gpt.name = "grad/w"},
                                               %g: tensor<8x8xf32> {gpt.name = "g"})
    -> (tensor<8x8xf32> {gpt.name = "grad/v"}) {
  %s = gpt.fusion(%g, %acc) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>):
    %r = gpt.round_bf16 %a : tensor<8x8xf32>
    %y = gpt.add %b, %r : tensor<8x8xf32>, tensor<8x8xf32>
    gpt.yield %y : tensor<8x8xf32>
  }
  return %s : tensor<8x8xf32>
}

// -----

// A read inside a region (a fusion body, say) keeps the value live to the op holding the
// region: %a lives to tensor.generate, so %b may not take its bytes; the ops inside the
// region are not planned (their values never reach memory as buffers of the function).
// CHECK-LABEL: func.func @nested_use
// CHECK-SAME: attributes {gpt.arena_bytes = 128 : i64}
// CHECK-NEXT: arith.addf {{.*}} {gpt.offsets = array<i64: 0>}
// CHECK-NEXT: arith.mulf {{.*}} {gpt.offsets = array<i64: 64>}
// CHECK-NEXT: tensor.generate {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.extract %{{[^ ]+}} : tensor<4xf32>
// CHECK-NEXT: tensor.yield
// CHECK-NEXT: } {gpt.offsets = array<i64: 64>}
// expected-remark @+1 {{arena 128 bytes (0.00 MiB) for 3 intermediates; naive 192 bytes}}
func.func @nested_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.addf %x, %x : tensor<4xf32>
  %b = arith.mulf %x, %x : tensor<4xf32>
  %g = tensor.generate {
  ^bb0(%i: index):
    %e = tensor.extract %a[%i] : tensor<4xf32>
    tensor.yield %e : f32
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// DIAG: error: gpt-plan-buffers: result #0 (%0) of 'arith.addf' has the dynamic type 'tensor<?x8xf32>'
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{gpt-plan-buffers: result #0 (%0) of 'arith.addf' has the dynamic type 'tensor<?x8xf32>'; buffers are planned for static shapes only}}
  %a = arith.addf %x, %x : tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// The planned stage of gptc: every shape static, elementwise chains fused, buffers planned,
// the arena size per entry point on stderr.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=planned 2>&1 >/dev/null | FileCheck %s --check-prefix=GPTC
// GPTC: gptc: loc("micro_step"): arena {{[0-9]+}} bytes ({{[0-9.]+}} MiB) for {{[0-9]+}} intermediates; naive {{[0-9]+}} bytes
