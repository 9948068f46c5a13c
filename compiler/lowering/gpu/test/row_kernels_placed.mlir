// The softcap-gradient epilogue's overlap rules, on functions placed by hand as
// gpt-plan-buffers could place them (it is not run here): inputs the fused output overwrites
// are copied to scratch first; logits sharing part of the output's bytes rule the fusion out,
// the very same bytes do not. And the f32-only diagnostic.
// RUN: gptc-opt %s --split-input-file --gpt-lower-to-gpu --verify-diagnostics
// RUN: not gptc-opt %s --split-input-file --gpt-lower-to-gpu 2>/dev/null | FileCheck %s

// The fused output [2048, 4096) takes the bytes of the targets (a copy of the argument) and
// of dloss, which die at the cross-entropy: both are copied aside before any launch.
// CHECK-LABEL: func.func @inputs_overwritten
// CHECK: %[[T:.*]] = memref.view %arg{{[0-9]+}}[%c2048{{[_0-9]*}}][] : memref<?xi8> to memref<8xi32>
// CHECK: memref.view %arg{{[0-9]+}}[%c2304{{[_0-9]*}}][] : memref<?xi8> to memref<f32>
// CHECK: gpu.launch
// CHECK: gpt.kernel_name = "mul"
// CHECK: %[[OUT:.*]] = memref.view %arg{{[0-9]+}}[%c2048{{[_0-9]*}}][] : memref<?xi8> to memref<8x64xf32>
// CHECK: memref.copy %[[T]], %[[T2:[a-z_0-9]+]] {gpt.op = "gpt.cross_entropy_grad"} : memref<8xi32> to memref<8xi32>
// CHECK: memref.copy %{{.*}}, %[[D2:[a-z_0-9]+]] {gpt.op = "gpt.cross_entropy_grad"} : memref<f32> to memref<f32>
// CHECK: %[[D2F:.*]] = memref.reinterpret_cast %[[D2]]
// CHECK: memref.load %[[T2]][
// CHECK: memref.load %[[D2F]][
// CHECK: gpt.kernel_name = "cross_entropy_scale"
// CHECK: memref.load %[[T2]][
// CHECK: gpt.kernel_name = "cross_entropy_softcap_grad"
// CHECK-NOT: gpt.kernel_name
// CHECK: return %[[OUT]]
func.func @inputs_overwritten(%y: tensor<8x64xf32> {gpt.name = "y"}, %targets: tensor<8xi32> {gpt.name = "targets"},
                              %s: tensor<f32> {gpt.name = "s"})
    -> (tensor<8x64xf32> {gpt.name = "dx"}) attributes {gpt.arena_bytes = 4096 : i64} {
  %t = gpt.reshape %targets to [-1] {gpt.offsets = array<i64: 2048>} : tensor<8xi32>
  %d = gpt.mul %s, %s {gpt.offsets = array<i64: 2304>} : tensor<f32>, tensor<f32>
  %g = gpt.cross_entropy_grad %y, %t, %d {gpt.offsets = array<i64: 0>} : tensor<8x64xf32>, tensor<8xi32>, tensor<f32>
  %dx = gpt.softcap_grad %y, %g {cap = 15.0 : f64, gpt.offsets = array<i64: 2048>} : tensor<8x64xf32>, tensor<8x64xf32>
  return %dx : tensor<8x64xf32>
}

// -----

// The output [1024, 3072) would overwrite logits [0, 2048) other work-items still read.
// CHECK-LABEL: func.func @logits_partly_overwritten
// CHECK-NOT: memref.copy
// CHECK: gpt.kernel_name = "cross_entropy_grad"
// CHECK: gpt.kernel_name = "softcap_grad"
func.func @logits_partly_overwritten(%x: tensor<8x64xf32> {gpt.name = "x"}, %t: tensor<8xi32> {gpt.name = "t"})
    -> (tensor<8x64xf32> {gpt.name = "dx"}) attributes {gpt.arena_bytes = 6144 : i64} {
  %seed = arith.constant dense<1.0> : tensor<f32>
  %y = gpt.softcap %x {cap = 15.0 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xf32>
  %g = gpt.cross_entropy_grad %y, %t, %seed {gpt.offsets = array<i64: 4096>} : tensor<8x64xf32>, tensor<8xi32>, tensor<f32>
  %dx = gpt.softcap_grad %y, %g {cap = 15.0 : f64, gpt.offsets = array<i64: 1024>} : tensor<8x64xf32>, tensor<8x64xf32>
  return %dx : tensor<8x64xf32>
}

// -----

// The output is the logits' own bytes: fused, in place.
// CHECK-LABEL: func.func @logits_in_place
// CHECK: %[[Y:.*]] = memref.view %arg{{[0-9]+}}[%c0{{[_0-9]*}}][] : memref<?xi8> to memref<8x64xf32>
// CHECK: gpt.kernel_name = "softcap"
// CHECK: gpt.kernel_name = "cross_entropy_softcap_grad"
// CHECK-NOT: gpt.kernel_name
// CHECK: return %[[Y]]
func.func @logits_in_place(%x: tensor<8x64xf32> {gpt.name = "x"}, %t: tensor<8xi32> {gpt.name = "t"})
    -> (tensor<8x64xf32> {gpt.name = "dx"}) attributes {gpt.arena_bytes = 4096 : i64} {
  %seed = arith.constant dense<1.0> : tensor<f32>
  %y = gpt.softcap %x {cap = 15.0 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xf32>
  %g = gpt.cross_entropy_grad %y, %t, %seed {gpt.offsets = array<i64: 2048>} : tensor<8x64xf32>, tensor<8xi32>, tensor<f32>
  %dx = gpt.softcap_grad %y, %g {cap = 15.0 : f64, gpt.offsets = array<i64: 0>} : tensor<8x64xf32>, tensor<8x64xf32>
  return %dx : tensor<8x64xf32>
}

// -----

func.func @f64_logits(%logits: tensor<4x64xf64> {gpt.name = "logits"}, %targets: tensor<4xi32> {gpt.name = "targets"})
    -> (tensor<f64> {gpt.name = "loss"}) attributes {gpt.arena_bytes = 256 : i64} {
  // expected-error @+1 {{gpt-lower-to-gpu: the cross-entropy kernels run f32, not 'f64'}}
  %loss = gpt.cross_entropy %logits, %targets {gpt.offsets = array<i64: 0>} : tensor<4x64xf64>, tensor<4xi32>
  return %loss : tensor<f64>
}
