// gpt-lower-to-gpu, gpt.transpose: when the innermost dim moves, 32 x 32 tiles through
// workgroup memory (padded to 33 columns) by workgroups of 32 x 8 work-items, each moving
// 4 elements in and 4 out around one barrier (batch dims on grid z, looped); when it stays, a
// gather of one element per work-item; a transpose only read as a matmul weight: nothing.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu | FileCheck %s

// [37, 70] -> [70, 37]: grid (ceil(70/32), ceil(37/32), 1) = (3, 2, 1), no batch loop.
// CHECK-LABEL: func.func @two_dims
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c8{{.*}}, {{.*}} = %c1{{.*}}) workgroup(%[[TILE:.*]] : memref<1056xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TILE]][%{{.*}}] : memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load %[[TILE]][%{{.*}}] : memref<1056xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: } {gpt.kernel_name = "transpose_tiled", gpt.op = "gpt.transpose"}
func.func @two_dims(%x: tensor<37x70xf32> {gpt.name = "x"}) -> (tensor<70x37xf32> {gpt.name = "y"}) {
  %y = gpt.transpose %x [1, 0] : tensor<37x70xf32>
  return %y : tensor<70x37xf32>
}

// [2, 33, 3, 40] by [0, 2, 3, 1]: tiles over dims 1 (33) and 3 (40), 2 x 3 = 6 slabs on z.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c6{{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c8{{.*}}, {{.*}} = %c1{{.*}}) workgroup(%{{.*}} : memref<1056xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: } {gpt.kernel_name = "transpose_tiled", gpt.op = "gpt.transpose"}
func.func @batched(%x: tensor<2x33x3x40xf32> {gpt.name = "x"}) -> (tensor<2x3x40x33xf32> {gpt.name = "y"}) {
  %y = gpt.transpose %x [0, 2, 3, 1] : tensor<2x33x3x40xf32>
  return %y : tensor<2x3x40x33xf32>
}

// The innermost dim stays: 7920 elements, 31 workgroups of 256, no workgroup memory.
// CHECK-LABEL: func.func @gather
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c31{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) {
// CHECK-NOT: gpu.barrier
// CHECK: } {gpt.kernel_name = "transpose", gpt.op = "gpt.transpose"}
func.func @gather(%x: tensor<2x33x3x40xf32> {gpt.name = "x"}) -> (tensor<2x3x33x40xf32> {gpt.name = "y"}) {
  %y = gpt.transpose %x [0, 2, 1, 3] : tensor<2x33x3x40xf32>
  return %y : tensor<2x3x33x40xf32>
}

// Also returned: the transpose runs although a matmul reads it.
// CHECK-LABEL: func.func @returned
// CHECK: gpt.kernel_name = "transpose_tiled"
// CHECK: gpt.kernel_name = "matmul"
func.func @returned(%dy: tensor<8x96xf32> {gpt.name = "dy"}, %w: tensor<96x64xf32> {gpt.name = "w"})
    -> (tensor<8x64xf32> {gpt.name = "dx"}, tensor<64x96xf32> {gpt.name = "wt"}) {
  %wt = gpt.transpose %w [1, 0] : tensor<96x64xf32>
  %dx = gpt.matmul %dy, %wt : tensor<8x96xf32>, tensor<64x96xf32>
  return %dx, %wt : tensor<8x64xf32>, tensor<64x96xf32>
}
