// The warp-tile attention kernels (flash_attention_*.cc): under bf16 autocast gpt.attention
// runs on four warps per 64 query rows, gpt.attention_grad on delta, dk/dv (four warps per 64
// key rows) and dq (per 64 query rows), their products m16n8k16 bf16 warp tiles (mma_tile.h).
// mma=nvvm calls the tensor-core intrinsic and reduces a row over its lanes with shuffles;
// mma=emulated (the default: any OpenCL device) runs the same fragments through workgroup
// memory: a [4 warps x 384] f32 scratch beside the staged K/V tile, and no intrinsic.
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu="mma=nvvm" --gpt-outline-kernels | FileCheck %s --check-prefix=NVVM
// RUN: gptc-opt %s --split-input-file --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s --check-prefix=EMU

// T = 70 (two query tiles, the second of 6 rows), H = 2 on Hkv = 1, D = 128.
// NVVM-LABEL: func.func @gqa
// NVVM: gpu.launch_func @kernels::@flash_attention blocks in (%c2{{[_0-9]*}}, %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// The key or value tile, 64 rows of 64 bf16 pairs; no scratch.
// NVVM: gpu.func @flash_attention({{.*}}) workgroup(%{{.*}} : memref<4096xi32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// Key tiles of 64 carrying 16 output fragments, the rows' max and sum.
// NVVM: scf.for %{{.*}} step %c64{{[_0-9]*}} iter_args({{.*}}) -> (f32,
// NVVM: gpu.barrier
// NVVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// NVVM: gpu.shuffle  xor
// NVVM: math.exp
// NVVM: gpu.barrier
// NVVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// NVVM: math.log
// NVVM: gpu.return

// EMU-LABEL: func.func @gqa
// EMU: gpu.func @flash_attention({{.*}}) workgroup(%{{.*}} : memref<4096xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1536xf32, #gpu.address_space<workgroup>>) kernel
// EMU-NOT: llvm.call_intrinsic
// EMU-NOT: gpu.shuffle
// EMU: gpu.return
module attributes {gpt.autocast = "bf16"} {
func.func @gqa(%q: tensor<1x70x2x128xf32> {gpt.name = "q"}, %k: tensor<1x70x1x128xf32> {gpt.name = "k"},
               %v: tensor<1x70x1x128xf32> {gpt.name = "v"}) -> (tensor<1x70x2x128xf32> {gpt.name = "out"}) {
  %o = gpt.attention %q, %k, %v : tensor<1x70x2x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70x1x128xf32>
  return %o : tensor<1x70x2x128xf32>
}
}

// -----

// The backward with segment ids: delta (Delta = dO . bf16(O)), dk/dv per (key tile, kv
// head), dq per (query tile, head); each stages two [32 x 128] bf16 tiles as pairs.
// NVVM-LABEL: func.func @packed
// NVVM: gpu.launch_func @kernels::@flash_attention_segments
// NVVM: gpu.launch_func @kernels::@flash_attention_grad_delta
// NVVM: gpu.launch_func @kernels::@flash_attention_grad_kv_segments blocks in (%c2{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128
// NVVM: gpu.launch_func @kernels::@flash_attention_grad_q_segments blocks in (%c2{{[_0-9]*}}, %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128
// NVVM: gpu.func @flash_attention_grad_delta
// NVVM: arith.shrui
// NVVM: math.fma
// NVVM: gpu.func @flash_attention_grad_kv_segments({{.*}}) workgroup(%{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>)
// Query tiles from the key tile on, skipped whole when their ids cannot meet; the query heads inside.
// NVVM: scf.for %{{.*}} = %{{.*}} to %c70{{[_0-9]*}} step %c32
// NVVM: scf.if
// NVVM: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1
// NVVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// NVVM: math.exp
// NVVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// NVVM: gpu.return
// NVVM: gpu.func @flash_attention_grad_q_segments({{.*}}) workgroup(%{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64xi32, #gpu.address_space<workgroup>>)
// NVVM: scf.for %{{.*}} step %c32
// NVVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// NVVM: gpu.return

// EMU-LABEL: func.func @packed
// EMU: gpu.func @flash_attention_grad_kv_segments({{.*}}) workgroup(%{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<2048xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1536xf32, #gpu.address_space<workgroup>>
// EMU-NOT: llvm.call_intrinsic
// EMU: gpu.return
module attributes {gpt.autocast = "bf16"} {
func.func @packed(%q: tensor<1x70x2x128xf32> {gpt.name = "q"}, %k: tensor<1x70x1x128xf32> {gpt.name = "k"},
                  %v: tensor<1x70x1x128xf32> {gpt.name = "v"}, %do: tensor<1x70x2x128xf32> {gpt.name = "dout"},
                  %seg: tensor<1x70xi32> {gpt.name = "seg"})
    -> (tensor<1x70x2x128xf32> {gpt.name = "out"}, tensor<1x70x2x128xf32> {gpt.name = "dq"},
        tensor<1x70x1x128xf32> {gpt.name = "dk"}, tensor<1x70x1x128xf32> {gpt.name = "dv"}) {
  %o = gpt.attention %q, %k, %v, segments %seg : tensor<1x70x2x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70xi32>
  %dq, %dk, %dv = gpt.attention_grad %q, %k, %v, %o, %do, segments %seg : tensor<1x70x2x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70x2x128xf32>, tensor<1x70x2x128xf32>, tensor<1x70xi32>
  return %o, %dq, %dk, %dv : tensor<1x70x2x128xf32>, tensor<1x70x2x128xf32>, tensor<1x70x1x128xf32>, tensor<1x70x1x128xf32>
}
}
