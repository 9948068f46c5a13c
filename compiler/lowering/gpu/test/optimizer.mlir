// gpt-lower-to-gpu, optimizer updates: AdamW is one element-wise kernel in f64 (the step
// rounded, bias corrections by powf once per work-item, a no-op select for step < 1) writing
// the donated arguments in place; Muon is momentum + per-workgroup f64 sums of squares, one
// workgroup finishing the Frobenius norm, the normalisation (transposed: [96, 48] is tall),
// five Newton-Schulz rounds of three tiled gemms (the polynomial's sums in their epilogues)
// and the parameter update, its matrices in scratch memory past the plan. Same-shape updates
// run as one group: per matrix its momentum, norm, normalisation and update, each product one
// batched gemm for the whole group (the grid's z).
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu | FileCheck %s

// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[P:[a-z0-9]+]]: memref<64x48xf32> {gpt.name = "p"}, %{{.*}}: memref<64x48xf32> {gpt.name = "g"}, %[[M:[a-z0-9]+]]: memref<64x48xf32> {gpt.name = "m"}, %[[V:[a-z0-9]+]]: memref<64x48xf32> {gpt.name = "v"}
// 3072 elements: 12 workgroups of 256.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c12{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: %[[VALID:.*]] = arith.cmpf oge, %{{.*}}, %{{.*}} : f64
// CHECK: math.floor %{{.*}} : f64
// CHECK: math.powf
// CHECK: math.powf
// CHECK: arith.select %[[VALID]]
// CHECK: arith.select %[[VALID]]
// CHECK: arith.select %[[VALID]]
// CHECK: } {gpt.kernel_name = "adamw", gpt.op = "gpt.adamw_update"}
// CHECK: return %[[P]], %[[M]], %[[V]]
func.func @adamw(%p: tensor<64x48xf32> {gpt.name = "p"}, %g: tensor<64x48xf32> {gpt.name = "g"},
                 %m: tensor<64x48xf32> {gpt.name = "m"}, %v: tensor<64x48xf32> {gpt.name = "v"},
                 %lr: tensor<f32> {gpt.name = "lr"}, %t: tensor<f32> {gpt.name = "step"})
    -> (tensor<64x48xf32> {gpt.name = "p"}, tensor<64x48xf32> {gpt.name = "m"}, tensor<64x48xf32> {gpt.name = "v"}) {
  %p1, %m1, %v1 = gpt.adamw_update %p, %g, %m, %v, %lr, %t : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<f32>, tensor<f32>
  return %p1, %m1, %v1 : tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>
}

// CHECK-LABEL: func.func @muon
// The group's scratch (one matrix here): its Nesterov gradient, 18 f64 partial sums (4608
// elements: 18 workgroups) and the inverse norm (each matrix's part padded to 256 bytes),
// X and X' [48, 96], A and B [48, 48]; then the matrix's parts of them as views of their own.
// CHECK: memref.view %{{.*}} to memref<4608xf32>
// CHECK: memref.view %{{.*}} to memref<32xf64>
// CHECK: memref.view %{{.*}} to memref<32xf64>
// CHECK: memref.view %{{.*}} to memref<4608xf32>
// CHECK: memref.view %{{.*}} to memref<4608xf32>
// CHECK: memref.view %{{.*}} to memref<2304xf32>
// CHECK: memref.view %{{.*}} to memref<2304xf32>
// CHECK: %[[INV:.*]] = memref.view %{{.*}} to memref<1xf64>
// CHECK: %[[PARTIAL:.*]] = memref.view %{{.*}} to memref<18xf64>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c18{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) workgroup(%{{.*}} : memref<256xf64, #gpu.address_space<workgroup>>)
// CHECK: memref.store %{{.*}}, %[[PARTIAL]]
// CHECK: } {gpt.kernel_name = "muon_momentum", gpt.op = "gpt.muon_update"}
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}, {{.*}}) workgroup(%{{.*}} : memref<256xf64, #gpu.address_space<workgroup>>)
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: memref.store %{{.*}}, %[[INV]]
// CHECK: } {gpt.kernel_name = "muon_norm", gpt.op = "gpt.muon_update"}
// CHECK: } {gpt.kernel_name = "muon_normalize", gpt.op = "gpt.muon_update"}
// B = 2.0315 (A A) - 4.775 A in the epilogue.
// CHECK: } {gpt.kernel_name = "muon_gram", gpt.op = "gpt.muon_update"}
// CHECK: arith.constant 2.031500e+00 : f32
// CHECK: arith.constant -4.775000e+00 : f32
// CHECK: } {gpt.kernel_name = "muon_poly", gpt.op = "gpt.muon_update"}
// CHECK: arith.constant 3.444500e+00 : f32
// CHECK: } {gpt.kernel_name = "muon_apply", gpt.op = "gpt.muon_update"}
// CHECK-COUNT-4: gpt.kernel_name = "muon_apply"
// CHECK: } {gpt.kernel_name = "muon_update", gpt.op = "gpt.muon_update"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @muon(%p: tensor<96x48xf32> {gpt.name = "p"}, %g: tensor<96x48xf32> {gpt.name = "g"},
                %b: tensor<96x48xf32> {gpt.name = "buf"}, %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<96x48xf32> {gpt.name = "p"}, tensor<96x48xf32> {gpt.name = "buf"}) {
  %p1, %b1 = gpt.muon_update %p, %g, %b, %lr : tensor<96x48xf32>, tensor<96x48xf32>, tensor<96x48xf32>, tensor<f32>
  return %p1, %b1 : tensor<96x48xf32>, tensor<96x48xf32>
}

// Three [32, 64] updates and one [64, 32]: the three are one group (every product a batched
// gemm over z = 3: one workgroup of 64 x 64 tiles each), the fourth its own.
// CHECK-LABEL: func.func @muon_group
// CHECK-COUNT-3: gpt.kernel_name = "muon_normalize"
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c3{{.*}}) threads
// CHECK: } {gpt.kernel_name = "muon_gram", gpt.op = "gpt.muon_update"}
// CHECK-COUNT-14: gpt.kernel_name = "muon_{{gram|poly|apply}}"
// CHECK-COUNT-3: gpt.kernel_name = "muon_update"
// CHECK: gpt.kernel_name = "muon_momentum"
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads
// CHECK: } {gpt.kernel_name = "muon_gram", gpt.op = "gpt.muon_update"}
// CHECK-COUNT-14: gpt.kernel_name = "muon_{{gram|poly|apply}}"
// CHECK: gpt.kernel_name = "muon_update"
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @muon_group(%p0: tensor<32x64xf32> {gpt.name = "p0"}, %g0: tensor<32x64xf32> {gpt.name = "g0"},
                      %b0: tensor<32x64xf32> {gpt.name = "b0"}, %p1: tensor<32x64xf32> {gpt.name = "p1"},
                      %g1: tensor<32x64xf32> {gpt.name = "g1"}, %b1: tensor<32x64xf32> {gpt.name = "b1"},
                      %p2: tensor<32x64xf32> {gpt.name = "p2"}, %g2: tensor<32x64xf32> {gpt.name = "g2"},
                      %b2: tensor<32x64xf32> {gpt.name = "b2"}, %p3: tensor<64x32xf32> {gpt.name = "p3"},
                      %g3: tensor<64x32xf32> {gpt.name = "g3"}, %b3: tensor<64x32xf32> {gpt.name = "b3"},
                      %lr: tensor<f32> {gpt.name = "lr"})
    -> (tensor<32x64xf32> {gpt.name = "p0"}, tensor<32x64xf32> {gpt.name = "b0"},
        tensor<32x64xf32> {gpt.name = "p1"}, tensor<32x64xf32> {gpt.name = "b1"},
        tensor<32x64xf32> {gpt.name = "p2"}, tensor<32x64xf32> {gpt.name = "b2"},
        tensor<64x32xf32> {gpt.name = "p3"}, tensor<64x32xf32> {gpt.name = "b3"}) {
  %q0, %c0 = gpt.muon_update %p0, %g0, %b0, %lr : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<f32>
  %q1, %c1 = gpt.muon_update %p1, %g1, %b1, %lr : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<f32>
  %q2, %c2 = gpt.muon_update %p2, %g2, %b2, %lr : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<f32>
  %q3, %c3 = gpt.muon_update %p3, %g3, %b3, %lr : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<f32>
  return %q0, %c0, %q1, %c1, %q2, %c2, %q3, %c3 : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>,
      tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}
