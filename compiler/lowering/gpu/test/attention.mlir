// The attention kernels (attention_kernels.cc, attention_grad_kernels.cc): the forward, a
// workgroup of 64 work-items per (query tile, head, batch) over key/value tiles staged in
// workgroup memory (64 rows for D = 16, 56 for D = 64: two tiles within 32 KiB), keeps its
// lse [B, H, T] past the plan for the backward; the backward is three launches (delta;
// dk/dv per (key tile, kv head, batch) over staged q/dout/lse/delta tiles; dq per query
// tile over the forward's key tiles) and reads that lse, or recomputes the forward into
// scratch when its `out` is not the forward's. With segment ids each kernel stages the
// tiles' ids and skips a tile pair whose id ranges cannot meet (an scf.if around the
// staging, uniform over the workgroup).
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s

// Packed rows, GQA (H = 4 query heads on Hkv = 2), T = 40 (one tile, 24 padding rows).
// CHECK-LABEL: func.func @packed
// The lse, persistent: a [2, 4, 40] view past the arena's planned bytes.
// CHECK: %[[LSE:view_[0-9]+]] = memref.view %{{.*}} : memref<?xi8> to memref<2x4x40xf32>
// CHECK: %[[LSE_FWD:.*]] = memref.reinterpret_cast %[[LSE]] to offset: [0], sizes: [320]
// CHECK: gpu.launch_func @kernels::@attention_segments blocks in (%c1{{[_0-9]*}}, %c4{{[_0-9]*}}, %c2{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args({{.*}}, %[[LSE_FWD]] : memref<320xf32>) {gpt.op = "gpt.attention"}
// The backward reads it (no forward again); delta is scratch after it.
// CHECK-NOT: @attention_segments
// CHECK: %[[LSE_BWD:.*]] = memref.reinterpret_cast %[[LSE]] to offset: [0], sizes: [320]
// CHECK: %[[DELTA_VIEW:view_[0-9]+]] = memref.view %{{.*}} : memref<?xi8> to memref<2x4x40xf32>
// CHECK: %[[DELTA:.*]] = memref.reinterpret_cast %[[DELTA_VIEW]] to offset: [0], sizes: [320]
// CHECK-NOT: @attention_segments
// CHECK: gpu.launch_func @kernels::@attention_grad_delta blocks in (%c3{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args({{.*}}, %[[DELTA]] : memref<320xf32>) {gpt.op = "gpt.attention_grad"}
// CHECK: gpu.launch_func @kernels::@attention_grad_kv_segments blocks in (%c1{{[_0-9]*}}, %c2{{[_0-9]*}}, %c2{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args({{.*}}%[[LSE_BWD]] : memref<320xf32>, %[[DELTA]] : memref<320xf32>
// CHECK: gpu.launch_func @kernels::@attention_grad_q_segments blocks in (%c1{{[_0-9]*}}, %c4{{[_0-9]*}}, %c2{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args({{.*}}%[[LSE_BWD]] : memref<320xf32>, %[[DELTA]] : memref<320xf32>
// CHECK-NOT: gpu.launch_func
// Forward: k, v tiles [64 x 16], the key tile's and the query tile's ids.
// CHECK: gpu.func @attention_segments({{.*}}) workgroup(%{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// The query tile's id range, once.
// CHECK: memref.store %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: arith.minsi
// CHECK: arith.maxsi
// Key tiles below the query tile's end, carrying the running max and sum.
// CHECK: scf.for %{{.*}} step %c64{{[_0-9]*}} iter_args(%{{.*}}, %{{.*}}) -> (f32, f32) {
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: arith.cmpi sle
// CHECK: scf.if %{{.*}} -> (f32, f32) {
// CHECK: memref.store %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// The keys j <= i of the tile (at least one iteration: AtLeastOnce).
// CHECK: arith.maxui
// CHECK: arith.cmpi eq, %{{.*}} : i32
// CHECK: math.fma
// CHECK: math.exp
// CHECK: math.exp
// CHECK-NOT: gpu.barrier
// CHECK: math.log
// CHECK: gpu.return
// Delta: a work-item per row, no workgroup memory.
// CHECK: gpu.func @attention_grad_delta({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// dk/dv: q, dout tiles [64 x 16], lse, delta, and the ids of the query and key tiles.
// CHECK: gpu.func @attention_grad_kv_segments({{.*}}) workgroup(%{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>) kernel
// CHECK: gpu.barrier
// Query tiles from the key tile's on; the two query heads of the kv head inside the skip test.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c40{{[_0-9]*}} step %c64
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// CHECK: gpu.func @attention_grad_q_segments({{.*}}) workgroup(%{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.if %{{.*}} {
// CHECK: math.exp
// CHECK: gpu.return
func.func @packed(%q: tensor<2x40x4x16xf32> {gpt.name = "q"}, %k: tensor<2x40x2x16xf32> {gpt.name = "k"},
                  %v: tensor<2x40x2x16xf32> {gpt.name = "v"}, %do: tensor<2x40x4x16xf32> {gpt.name = "dout"},
                  %seg: tensor<2x40xi32> {gpt.name = "seg"})
    -> (tensor<2x40x4x16xf32> {gpt.name = "out"}, tensor<2x40x4x16xf32> {gpt.name = "dq"},
        tensor<2x40x2x16xf32> {gpt.name = "dk"}, tensor<2x40x2x16xf32> {gpt.name = "dv"}) {
  %o = gpt.attention %q, %k, %v, segments %seg : tensor<2x40x4x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40xi32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg : tensor<2x40x4x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x4x16xf32>, tensor<2x40x4x16xf32>, tensor<2x40xi32>
  return %o, %dq, %dk, %dv : tensor<2x40x4x16xf32>, tensor<2x40x4x16xf32>, tensor<2x40x2x16xf32>, tensor<2x40x2x16xf32>
}

// -----

// Plain causal, MQA, D = 64 (56-row tiles), T = 130: three query tiles, no ids, no skip test.
// CHECK-LABEL: func.func @causal_mqa
// CHECK: gpu.launch_func @kernels::@attention blocks in (%c3{{[_0-9]*}}, %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.launch_func @kernels::@attention_grad_delta blocks in (%c3{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}},
// CHECK: gpu.launch_func @kernels::@attention_grad_kv blocks in (%c3{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c64{{[_0-9]*}},
// CHECK: gpu.launch_func @kernels::@attention_grad_q blocks in (%c3{{[_0-9]*}}, %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c64{{[_0-9]*}},
// CHECK: gpu.func @attention({{.*}}) workgroup(%{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.for %{{.*}} step %c56 iter_args(%{{.*}}, %{{.*}}) -> (f32, f32) {
// CHECK-NOT: scf.if %{{.*}} -> (f32, f32)
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: math.log
// CHECK: gpu.func @attention_grad_kv({{.*}}) workgroup(%{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<56xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<56xf32, #gpu.address_space<workgroup>>) kernel
// Query tiles of 56 rows from the key tile's on, the two query heads sharing the kv head
// inside.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c130{{[_0-9]*}} step %c56
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1
// CHECK: gpu.func @attention_grad_q({{.*}}) workgroup(%{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<3584xf32, #gpu.address_space<workgroup>>) kernel
func.func @causal_mqa(%q: tensor<1x130x2x64xf32> {gpt.name = "q"}, %k: tensor<1x130x1x64xf32> {gpt.name = "k"},
                      %v: tensor<1x130x1x64xf32> {gpt.name = "v"}, %do: tensor<1x130x2x64xf32> {gpt.name = "dout"})
    -> (tensor<1x130x2x64xf32> {gpt.name = "out"}, tensor<1x130x2x64xf32> {gpt.name = "dq"},
        tensor<1x130x1x64xf32> {gpt.name = "dk"}, tensor<1x130x1x64xf32> {gpt.name = "dv"}) {
  %o = gpt.attention %q, %k, %v : tensor<1x130x2x64xf32>, tensor<1x130x1x64xf32>, tensor<1x130x1x64xf32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x130x2x64xf32>, tensor<1x130x1x64xf32>, tensor<1x130x1x64xf32>, tensor<1x130x2x64xf32>, tensor<1x130x2x64xf32>
  return %o, %dq, %dk, %dv : tensor<1x130x2x64xf32>, tensor<1x130x2x64xf32>, tensor<1x130x1x64xf32>, tensor<1x130x1x64xf32>
}

// -----

// The backward alone: `out` is an argument, so the forward runs again inside the op's
// launches, into scratch (an out it never reads back, and the lse).
// CHECK-LABEL: func.func @backward_alone
// CHECK: %[[OUT:.*]] = memref.view %{{.*}} : memref<?xi8> to memref<768xf32>
// CHECK: %[[LSE:view_[0-9]+]] = memref.view %{{.*}} : memref<?xi8> to memref<1x2x24xf32>
// CHECK: gpu.launch_func @kernels::@attention blocks {{.*}} args({{.*}}, %[[OUT]] : memref<768xf32>, %{{.*}} : memref<48xf32>) {gpt.op = "gpt.attention_grad"}
// CHECK: %[[LSE_BWD:.*]] = memref.reinterpret_cast %[[LSE]] to offset: [0], sizes: [48]
// CHECK: gpu.launch_func @kernels::@attention_grad_delta
// CHECK: gpu.launch_func @kernels::@attention_grad_kv blocks {{.*}} %[[LSE_BWD]] : memref<48xf32>
// CHECK: gpu.launch_func @kernels::@attention_grad_q blocks {{.*}} %[[LSE_BWD]] : memref<48xf32>
func.func @backward_alone(%q: tensor<1x24x2x16xf32> {gpt.name = "q"}, %k: tensor<1x24x2x16xf32> {gpt.name = "k"},
                          %v: tensor<1x24x2x16xf32> {gpt.name = "v"}, %o: tensor<1x24x2x16xf32> {gpt.name = "o"},
                          %do: tensor<1x24x2x16xf32> {gpt.name = "dout"})
    -> (tensor<1x24x2x16xf32> {gpt.name = "dq"}, tensor<1x24x2x16xf32> {gpt.name = "dk"},
        tensor<1x24x2x16xf32> {gpt.name = "dv"}) {
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
  return %dq, %dk, %dv : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
}

// -----

// `out` from a forward of other queries: its lse is not this backward's, so it recomputes.
// CHECK-LABEL: func.func @other_forward
// CHECK: gpu.launch_func @kernels::@attention blocks {{.*}} {gpt.op = "gpt.attention"}
// CHECK: gpu.launch_func @kernels::@attention blocks {{.*}} {gpt.op = "gpt.attention_grad"}
// CHECK: gpu.launch_func @kernels::@attention_grad_delta
func.func @other_forward(%q: tensor<1x24x2x16xf32> {gpt.name = "q"}, %q2: tensor<1x24x2x16xf32> {gpt.name = "q2"},
                         %k: tensor<1x24x2x16xf32> {gpt.name = "k"}, %v: tensor<1x24x2x16xf32> {gpt.name = "v"},
                         %do: tensor<1x24x2x16xf32> {gpt.name = "dout"})
    -> (tensor<1x24x2x16xf32> {gpt.name = "dq"}, tensor<1x24x2x16xf32> {gpt.name = "dk"},
        tensor<1x24x2x16xf32> {gpt.name = "dv"}) {
  %o = gpt.attention %q2, %k, %v : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
  return %dq, %dk, %dv : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
}

// -----

// A scale given as the default 1/sqrt(16) is the default: accepted, and the backward with
// the same attribute reads the forward's lse.
// CHECK-LABEL: func.func @default_scale_given
// CHECK: gpu.launch_func @kernels::@attention blocks {{.*}} {gpt.op = "gpt.attention"}
// CHECK-NOT: @kernels::@attention blocks
// CHECK: gpu.launch_func @kernels::@attention_grad_delta
func.func @default_scale_given(%q: tensor<1x24x2x16xf32> {gpt.name = "q"}, %k: tensor<1x24x2x16xf32> {gpt.name = "k"},
                               %v: tensor<1x24x2x16xf32> {gpt.name = "v"}, %do: tensor<1x24x2x16xf32> {gpt.name = "dout"})
    -> (tensor<1x24x2x16xf32> {gpt.name = "dq"}, tensor<1x24x2x16xf32> {gpt.name = "dk"},
        tensor<1x24x2x16xf32> {gpt.name = "dv"}) {
  %o = gpt.attention %q, %k, %v {scale = 0.25 : f64} : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do {scale = 0.25 : f64} : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
  return %dq, %dk, %dv : tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>, tensor<1x24x2x16xf32>
}
