// gpt-lower-to-gpu: a planned entry point becomes its launch schedule over memrefs: arguments,
// the arena as a last argument, every value a view of it at its planned offset; elementwise
// ops become gpu.launch kernels tiled one work-item per element (transform dialect); a result
// named like an argument ends in that argument's buffer.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-fusions --gpt-lower-to-gpu | FileCheck %s
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-fusions --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s --check-prefix=OUTLINED

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[A:.*]]: memref<4x64xf32> {gpt.name = "a"}, %[[ACC:.*]]: memref<4x64xf32> {gpt.name = "acc"}, %[[ARENA:.*]]: memref<?xi8> {gpt.arena})
// CHECK-SAME: -> (memref<4x64xf32> {gpt.name = "acc"})
// CHECK-SAME: attributes {gpt.arena_bytes = 1024 : i64}
func.func @step(%a: tensor<4x64xf32> {gpt.name = "a"}, %acc: tensor<4x64xf32> {gpt.name = "acc"})
    -> (tensor<4x64xf32> {gpt.name = "acc"}) {
  // The softcap: a view of the arena at its planned offset, one workgroup of 256 work-items.
  // CHECK: %[[V:.*]] = memref.view %[[ARENA]][%{{.*}}][] : memref<?xi8> to memref<4x64xf32>
  // CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
  // CHECK: math.tanh
  // CHECK: } {gpt.kernel_name = "softcap", gpt.op = "gpt.softcap"}
  %0 = gpt.softcap %a {cap = 15.0 : f64} : tensor<4x64xf32>
  // The accumulation writes in place into the donated argument.
  // CHECK: gpu.launch
  // CHECK: arith.addf
  // CHECK: } {gpt.kernel_name = "add", gpt.op = "gpt.add"}
  %1 = gpt.add %acc, %0 : tensor<4x64xf32>, tensor<4x64xf32>
  // CHECK: return %{{.*}} : memref<4x64xf32>
  return %1 : tensor<4x64xf32>
}

// Two launches of identical code are one kernel, launched twice.
// OUTLINED-LABEL: func.func @twice
// OUTLINED: gpu.launch_func @kernels::@[[K:[a-z_0-9]+]] blocks in
// OUTLINED: gpu.launch_func @kernels::@[[K]] blocks in
// OUTLINED: gpu.module @kernels
// OUTLINED-COUNT-1: gpu.func @relu_square
func.func @twice(%a: tensor<8x32xf32> {gpt.name = "a"}, %b: tensor<8x32xf32> {gpt.name = "b"})
    -> (tensor<8x32xf32> {gpt.name = "x"}, tensor<8x32xf32> {gpt.name = "y"}) {
  %0 = gpt.relu_square %a : tensor<8x32xf32>
  %1 = gpt.relu_square %b : tensor<8x32xf32>
  return %0, %1 : tensor<8x32xf32>, tensor<8x32xf32>
}
