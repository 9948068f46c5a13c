// optimizer_step on 2 data-parallel ranks: every gradient is averaged over the "dp" group
// right before its own update (one all_reduce per parameter, so a backend may overlap the
// exchange of one with the update of the previous), and the module records the world size
// the runtimes check their communicator against. One rank has no collective at all.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --dp_world_size=2 | FileCheck %s
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --function=optimizer_step | FileCheck %s --check-prefix=ONE
// RUN: not gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --dp_world_size=0 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: module attributes {{{.*}}gpt.dp_world_size = 2 : i64
// CHECK-LABEL: func.func @micro_step(
// CHECK-NOT: gpt.all_reduce
// CHECK-LABEL: func.func @optimizer_step(
// CHECK: %[[G0:.*]] = gpt.all_reduce avg %arg8 over "dp" : tensor<512x128xf32>
// CHECK-NEXT: gpt.adamw_update %arg0, %[[G0]],
// CHECK: %[[G1:.*]] = gpt.all_reduce avg %arg9 over "dp" : tensor<128x128xf32>
// CHECK-NEXT: gpt.muon_update %arg1, %[[G1]],
// CHECK-COUNT-5: gpt.all_reduce avg
// CHECK: %[[G7:.*]] = gpt.all_reduce avg %arg15 over "dp" : tensor<512x128xf32>
// CHECK-NEXT: gpt.adamw_update %arg7, %[[G7]],
// CHECK-NOT: gpt.all_reduce
// CHECK: return

// ONE-LABEL: func.func @optimizer_step(
// ONE-NOT: gpt.all_reduce
// ONE: return

// BAD: dp_world_size must be >= 1, got 0
