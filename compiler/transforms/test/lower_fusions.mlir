// gpt-lower-fusions: each elementwise gpt.fusion becomes one linalg.generic over its shape,
// the region's ops as scalar arith/math code.
// RUN: gptc-opt %s --gpt-lower-fusions | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=linalg | FileCheck %s --check-prefix=STEP

// CHECK-LABEL: func.func @chain
func.func @chain(%h: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NOT: gpt.fusion
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
  // CHECK: linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) attrs =  {gpt.fusion_ops = "relu_square,add,softcap", gpt.offsets = array<i64: 128>}
  // CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
  // relu(a)^2
  // CHECK: %[[R:.*]] = arith.maximumf %[[A]], %{{.*}} : f32
  // CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[R]], %[[R]] : f32
  // + b
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[SQ]], %[[B]] : f32
  // 15 tanh(s / 15)
  // CHECK: %[[D:.*]] = arith.divf %[[S]], %{{.*}} : f32
  // CHECK-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
  // CHECK: %[[C:.*]] = arith.mulf %{{.*}}, %[[T]] : f32
  // CHECK-NEXT: linalg.yield %[[C]] : f32
  %r = gpt.fusion (%h, %x) {gpt.offsets = array<i64: 128>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %0 = gpt.relu_square %a : tensor<4x8xf32>
    %1 = gpt.add %0, %b : tensor<4x8xf32>, tensor<4x8xf32>
    %2 = gpt.softcap %1 {cap = 15.0 : f64} : tensor<4x8xf32>
    gpt.yield %2 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// round_bf16 is integer code on the f32's bits: quiet a NaN, else add 0x7fff plus the kept
// part's lowest bit (ties to even), then keep the top 16 bits.
// CHECK-LABEL: func.func @round_bf16
// CHECK: linalg.generic {{.*}} attrs =  {gpt.fusion_ops = "round_bf16"}
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[NAN:.*]] = arith.cmpi ugt
// CHECK: arith.shrui %[[BITS]]
// CHECK: %[[PICK:.*]] = arith.select %[[NAN]]
// CHECK: %[[KEPT:.*]] = arith.andi %[[PICK]], %{{.*}} : i32
// CHECK: %[[Y:.*]] = arith.bitcast %[[KEPT]] : i32 to f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
func.func @round_bf16(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = gpt.fusion (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %0 = gpt.round_bf16 %a : tensor<4x8xf32>
    gpt.yield %0 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @grads
func.func @grads(%x: tensor<8xf32>, %dy: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // 2 relu(x) dy, then (1 - (y/cap)^2) times it
  // CHECK: arith.maximumf
  // CHECK: arith.mulf
  // CHECK: arith.mulf
  // CHECK: arith.divf
  // CHECK: arith.mulf
  // CHECK: arith.subf
  // CHECK: arith.mulf
  // CHECK: linalg.yield
  %r = gpt.fusion (%x, %dy, %y) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>):
    %0 = gpt.relu_square_grad %a, %b : tensor<8xf32>, tensor<8xf32>
    %1 = gpt.softcap_grad %c, %0 : tensor<8xf32>, tensor<8xf32>
    gpt.yield %1 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// The whole step at the linalg stage: fusions lowered, planned offsets kept.
// STEP-LABEL: func.func @micro_step
// STEP-NOT: gpt.fusion
// STEP: linalg.generic {{.*}} attrs =  {gpt.fusion_ops = "{{[a-z_,]+}}", gpt.offsets = array<i64: {{[0-9]+}}>}
