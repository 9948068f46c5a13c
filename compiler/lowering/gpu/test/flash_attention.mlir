// The warp-tile attention kernels (flash_attention_*.cc): under bf16 autocast gpt.attention
// runs on four warps per 64 query rows, its products m16n8k16 bf16 warp tiles (mma_tile.h).
// mma=nvvm calls the tensor-core intrinsic and reduces a row over its lanes with shuffles;
// mma=emulated (the default: any OpenCL device) runs the same fragments through workgroup
// memory: a [4 warps x 384] f32 scratch beside the staged K/V tile, and no intrinsic.
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu="mma=nvvm" --gpt-outline-kernels | FileCheck %s --check-prefix=NVVM
// RUN: gptc-opt %s --gpt-plan-buffers="alignment=256" --gpt-lower-to-gpu --gpt-outline-kernels | FileCheck %s --check-prefix=EMU

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
