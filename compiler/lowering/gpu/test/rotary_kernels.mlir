// The rotary kernels (rotary_kernels.cc): cos and sin from compile-time tables [T, D/2]
// (nanochat's bf16 values, model/rotary_table.h), one pair shared by every rotary op of the function; one
// work-item per (token, head, pair); the gradient negates sin; positions index the tables, so
// the positions argument's valid range is [0, T); without positions, t itself.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s

// Position 1 of the tables: cos and sin of 1 * inv_freq[j], inv_freq[j] = fp32(10000^(-2j/16)),
// rounded to bf16 (cos 1 = 0.5403 -> 0.5390625, cos 0.3162 = 0.9504 -> 0.94921875,
// sin 1 = 0.8415 -> 0.83984375; an f32 step rotates by these bf16 values too).
// CHECK: memref.global "private" constant @[[SIN:gpt_constant_[0-9]+]] : memref<12x8xf32> = dense<{{\[\[}}0.000000e+00, {{.*}}], [0.83984375, 0.310546875,
// CHECK: memref.global "private" constant @[[COS:gpt_constant_[0-9]+]] : memref<12x8xf32> = dense<{{\[\[}}1.000000e+00, {{.*}}], [0.5390625, 0.94921875,
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: %{{.*}}: memref<2x12xi32> {gpt.name = "positions", gpt.valid_range = array<i64: 0, 12>}
// 2 * 12 * 3 * 8 = 576 work-items: 3 workgroups of 256.
// CHECK: memref.get_global @[[COS]]
// CHECK: memref.get_global @[[SIN]]
// CHECK: gpu.launch_func @kernels::@rotary blocks in (%c3{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%{{.*}} : memref<24xi32>, %{{.*}} : memref<96xf32>, %{{.*}} : memref<96xf32>, %{{.*}} : memref<1152xf32>, %{{.*}} : memref<1152xf32>)
// CHECK: memref.get_global @[[COS]]
// CHECK: memref.get_global @[[SIN]]
// CHECK: gpu.launch_func @kernels::@rotary_grad blocks
// CHECK: gpu.launch_func @kernels::@[[PLAIN:rotary_[0-9]+]] blocks {{.*}} args(%{{.*}} : memref<96xf32>, %{{.*}} : memref<96xf32>, %{{.*}} : memref<1152xf32>, %{{.*}} : memref<1152xf32>)
// CHECK: gpu.func @rotary(
// CHECK-NOT: arith.negf
// CHECK: gpu.return
// CHECK: gpu.func @rotary_grad(
// CHECK: arith.negf
// CHECK: gpu.return
// Without positions: the table row is the token's t (its index modulo T).
// CHECK: gpu.func @[[PLAIN]](
// CHECK: arith.remui %{{.*}}, %c12
func.func @rotary(%x: tensor<2x12x3x16xf32> {gpt.name = "x"}, %positions: tensor<2x12xi32> {gpt.name = "positions"})
    -> (tensor<2x12x3x16xf32> {gpt.name = "y"}, tensor<2x12x3x16xf32> {gpt.name = "dx"}, tensor<2x12x3x16xf32> {gpt.name = "p"}) {
  %y = gpt.rotary %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
  %dx = gpt.rotary_grad %x, positions %positions : tensor<2x12x3x16xf32>, tensor<2x12xi32>
  %p = gpt.rotary %x : tensor<2x12x3x16xf32>
  return %y, %dx, %p : tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>, tensor<2x12x3x16xf32>
}
