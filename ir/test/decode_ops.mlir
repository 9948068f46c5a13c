// The KV-cache ops: round trip (custom and generic forms) and their inferred types.
// RUN: gpt-opt %s | gpt-opt | FileCheck %s
// RUN: gpt-opt %s --mlir-print-op-generic | gpt-opt | FileCheck %s
// RUN: gpt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=TYPE

// CHECK-LABEL: func.func @decode
func.func @decode(%cache: tensor<1x?x2x8xf32>, %k: tensor<1x1x2x8xf32>, %q: tensor<1x1x4x8xf32>,
                  %a: tensor<2x3xi32>, %b: tensor<2x5xi32>) {
  // CHECK: gpt.concat %{{.*}}, %{{.*}} axis 1 : tensor<1x?x2x8xf32>, tensor<1x1x2x8xf32>
  // TYPE: "gpt.concat"{{.*}} -> tensor<1x?x2x8xf32>
  %all = gpt.concat %cache, %k axis 1 : tensor<1x?x2x8xf32>, tensor<1x1x2x8xf32>
  // Static dims add up along the axis; ids concatenate too.
  // CHECK: gpt.concat %{{.*}}, %{{.*}} axis 1 : tensor<2x3xi32>, tensor<2x5xi32>
  // TYPE: "gpt.concat"{{.*}} -> tensor<2x8xi32>
  %ids = gpt.concat %a, %b axis 1 : tensor<2x3xi32>, tensor<2x5xi32>
  // CHECK: gpt.cached_attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x4x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>
  // TYPE: "gpt.cached_attention"{{.*}} -> tensor<1x1x4x8xf32>
  %o = gpt.cached_attention %q, %all, %all : tensor<1x1x4x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>
  // CHECK: gpt.cached_attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 2.500000e-01 : f64} : tensor<1x1x4x8xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>
  %o2 = gpt.cached_attention %q, %k, %k {scale = 0.25 : f64} : tensor<1x1x4x8xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>
  return
}
