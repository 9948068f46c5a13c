// The embedding kernels (embedding_kernels.cc): the gather, one work-item per output element;
// the scatter-add gradient without atomics: links (first occurrence and next token of the
// same id, ids staged through workgroup memory between barriers), the table zeroed, then per
// (first-occurrence token, channel) the chain summed in token order; the ids argument's
// valid range [0, V).
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: %{{.*}}: memref<3x50xi32> {gpt.name = "ids", gpt.valid_range = array<i64: 0, 20>}
// 3600 elements: 15 workgroups of 256.
// CHECK: gpu.launch_func @kernels::@embedding blocks in (%c15{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// 150 tokens: one workgroup; first[150] and next[150] in scratch.
// CHECK: gpu.launch_func @kernels::@embedding_grad_links blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%{{.*}} : memref<150xi32>, %[[FIRST:.*]] : memref<150xi32>, %[[NEXT:.*]] : memref<150xi32>)
// CHECK: gpu.launch_func @kernels::@zero blocks in (%c2{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%[[TABLE:.*]] : memref<480xf32>)
// CHECK: gpu.launch_func @kernels::@embedding_grad_sum blocks in (%c15{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in {{.*}} args(%[[FIRST]] : memref<150xi32>, %{{.*}} : memref<3600xf32>, %[[NEXT]] : memref<150xi32>, %{{.*}} : memref<150xi32>, %[[TABLE]] : memref<480xf32>)
// CHECK: gpu.func @embedding(
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// CHECK: gpu.func @embedding_grad_links({{.*}}) workgroup(%[[STAGED:.*]] : memref<256xi32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[STAGED]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[STAGED]]
// CHECK: gpu.return
// CHECK: gpu.func @zero(
// CHECK: gpu.func @embedding_grad_sum(
// CHECK-NOT: gpu.barrier
// CHECK: scf.while
// CHECK: gpu.return
func.func @embedding(%table: tensor<20x24xf32> {gpt.name = "table"}, %ids: tensor<3x50xi32> {gpt.name = "ids"},
                     %dy: tensor<3x50x24xf32> {gpt.name = "dy"})
    -> (tensor<3x50x24xf32> {gpt.name = "out"}, tensor<20x24xf32> {gpt.name = "dtable"}) {
  %out = gpt.embedding %table[%ids] : tensor<20x24xf32>, tensor<3x50xi32>
  %dt = gpt.embedding_grad %ids, %dy, vocab 20 : tensor<3x50xi32>, tensor<3x50x24xf32>
  return %out, %dt : tensor<3x50x24xf32>, tensor<20x24xf32>
}
