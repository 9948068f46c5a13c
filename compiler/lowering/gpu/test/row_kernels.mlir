// The row kernels (rms_norm_kernels.cc, cross_entropy_kernels.cc): a workgroup per row of
// 96 (128 work-items) or eight rows of 16 per workgroup, tree reductions along x in
// workgroup memory between barriers; cross-entropy's two launches per op, the row stats the
// loss keeps for the gradient of the same logits, the softcap-gradient epilogue absorbed
// when the gradient's only reader is the softcap's gradient at the same logits, and not
// otherwise; the targets argument's valid range.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @rms
// CHECK: gpu.launch_func @kernels::@rms_norm blocks in (%c42{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.launch_func @kernels::@rms_norm_grad blocks in (%c42{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// 30 rows of 16, eight per workgroup: four workgroups, the last with two padding rows.
// CHECK: gpu.launch_func @kernels::@[[SHORT:rms_norm_[0-9]+]] blocks in (%c4{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c16{{[_0-9]*}}, %c8{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.func @rms_norm({{.*}}) workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.for
// CHECK-COUNT-9: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: math.sqrt
// CHECK: gpu.return
// The gradient: two sums, one after the other through the same memory.
// CHECK: gpu.func @rms_norm_grad({{.*}}) workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-COUNT-18: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// CHECK: gpu.func @[[SHORT]]({{.*}}) workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 16, 8, 1>}
// CHECK: gpu.thread_id y
// CHECK-COUNT-6: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @rms(%x: tensor<6x7x96xf32> {gpt.name = "x"}, %dy: tensor<6x7x96xf32> {gpt.name = "dy"},
               %q: tensor<2x5x3x16xf32> {gpt.name = "q"})
    -> (tensor<6x7x96xf32> {gpt.name = "y"}, tensor<6x7x96xf32> {gpt.name = "dx"}, tensor<2x5x3x16xf32> {gpt.name = "qn"}) {
  %y = gpt.rms_norm %x : tensor<6x7x96xf32>
  %dx = gpt.rms_norm_grad %x, %dy : tensor<6x7x96xf32>, tensor<6x7x96xf32>
  %qn = gpt.rms_norm %q : tensor<2x5x3x16xf32>
  return %y, %dx, %qn : tensor<6x7x96xf32>, tensor<6x7x96xf32>, tensor<2x5x3x16xf32>
}

// -----

// The loss: rows, then one workgroup's mean; the loss keeps each row's max and sum in a
// persistent [N, 2] past the plan that the gradient reads (no reductions of its own); the
// softcap_grad is absorbed: the fused kernel writes its buffer (the returned one).
// CHECK-LABEL: func.func @fused
// CHECK-SAME: %{{.*}}: memref<2x20xi32> {gpt.name = "targets", gpt.valid_range = array<i64: -1, 128>}
// CHECK: gpu.launch_func @kernels::@cross_entropy_rows blocks in (%c40{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args({{.*}}, %[[STATS:.*]] : memref<80xf32>) {gpt.op = "gpt.cross_entropy"}
// CHECK: gpu.launch_func @kernels::@cross_entropy_mean blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: %[[OUT:.*]] = memref.reinterpret_cast %[[DX:[a-z_0-9]+]] to offset: [0], sizes: [5120]
// CHECK: gpu.launch_func @kernels::@cross_entropy_scale blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.launch_func @kernels::@cross_entropy_softcap_grad_from_stats blocks in (%c40{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%[[STATS]] : memref<80xf32>, {{.*}}, %[[OUT]] : memref<5120xf32>) {gpt.op = "gpt.cross_entropy_grad"}
// CHECK-NOT: gpu.launch_func
// CHECK: return %{{.*}}, %[[DX]] :
// CHECK: gpu.func @cross_entropy_rows({{.*}}) workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: math.exp
// CHECK: gpu.barrier
// CHECK: math.log
// CHECK: gpu.func @cross_entropy_mean({{.*}}) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: gpu.func @cross_entropy_scale({{.*}}) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// The softcap's derivative 1 - (y / cap)^2 on the gradient, with no barrier.
// CHECK: gpu.func @cross_entropy_softcap_grad_from_stats({{.*}}) kernel
// CHECK-NOT: gpu.barrier
// CHECK: math.exp
// CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: gpu.return
// CHECK-NOT: gpu.func @softcap_grad
func.func @fused(%x: tensor<2x20x128xf32> {gpt.name = "x"}, %targets: tensor<2x20xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}, tensor<2x20x128xf32> {gpt.name = "dx"}) {
  %seed = arith.constant dense<0.5> : tensor<f32>
  %y = gpt.softcap %x {cap = 2.0 : f64} : tensor<2x20x128xf32>
  %l = gpt.reshape %y to [-1, 128] : tensor<2x20x128xf32>
  %t = gpt.reshape %targets to [-1] : tensor<2x20xi32>
  %loss = gpt.cross_entropy %l, %t : tensor<40x128xf32>, tensor<40xi32>
  %g = gpt.cross_entropy_grad %l, %t, %seed : tensor<40x128xf32>, tensor<40xi32>, tensor<f32>
  %g3 = gpt.reshape %g to [2, 20, 128] : tensor<40x128xf32>
  %dx = gpt.softcap_grad %y, %g3 {cap = 2.0 : f64} : tensor<2x20x128xf32>, tensor<2x20x128xf32>
  return %loss, %dx : tensor<f32>, tensor<2x20x128xf32>
}

// -----

// Not absorbed: the gradient is also returned; the other softcap_grad's y is not these
// logits. Without the loss the gradient computes its rows' stats itself (reductions).
// CHECK-LABEL: func.func @unfused
// CHECK: gpu.launch_func @kernels::@cross_entropy_scale
// CHECK: gpu.launch_func @kernels::@cross_entropy_grad blocks
// CHECK: gpu.launch_func @kernels::@softcap_grad{{[_0-9]*}} blocks
// CHECK: gpu.launch_func @kernels::@cross_entropy_scale
// CHECK: gpu.launch_func @kernels::@cross_entropy_grad blocks
// CHECK: gpu.launch_func @kernels::@softcap{{[_0-9]*}} blocks
// CHECK: gpu.launch_func @kernels::@softcap_grad{{[_0-9]*}} blocks
// CHECK: gpu.func @cross_entropy_grad({{.*}}) workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: gpu.barrier
func.func @unfused(%x: tensor<24x96xf32> {gpt.name = "x"}, %other: tensor<24x96xf32> {gpt.name = "other"},
                   %targets: tensor<24xi32> {gpt.name = "targets"}, %dloss: tensor<f32> {gpt.name = "dloss"})
    -> (tensor<24x96xf32> {gpt.name = "g"}, tensor<24x96xf32> {gpt.name = "dx"}, tensor<24x96xf32> {gpt.name = "dz"}) {
  %y = gpt.softcap %x {cap = 3.0 : f64} : tensor<24x96xf32>
  %g = gpt.cross_entropy_grad %y, %targets, %dloss : tensor<24x96xf32>, tensor<24xi32>, tensor<f32>
  %dx = gpt.softcap_grad %y, %g {cap = 3.0 : f64} : tensor<24x96xf32>, tensor<24x96xf32>
  %h = gpt.cross_entropy_grad %y, %targets, %dloss : tensor<24x96xf32>, tensor<24xi32>, tensor<f32>
  %z = gpt.softcap %other {cap = 3.0 : f64} : tensor<24x96xf32>
  %dz = gpt.softcap_grad %z, %h {cap = 3.0 : f64} : tensor<24x96xf32>, tensor<24x96xf32>
  return %g, %dx, %dz : tensor<24x96xf32>, tensor<24x96xf32>, tensor<24x96xf32>
}

// -----

// Another ignore_index: targets may hold it and the columns.
// CHECK-LABEL: func.func @ignore_five
// CHECK-SAME: gpt.valid_range = array<i64: 0, 64>
func.func @ignore_five(%logits: tensor<4x64xf32> {gpt.name = "logits"}, %targets: tensor<4xi32> {gpt.name = "targets"})
    -> (tensor<f32> {gpt.name = "loss"}) {
  %loss = gpt.cross_entropy %logits, %targets {ignore_index = 5 : i64} : tensor<4x64xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}
