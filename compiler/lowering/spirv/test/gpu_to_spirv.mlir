// gpt-gpu-to-spirv: every gpu.module gets an OpenCL-flavoured spirv.module twin: kernels as
// spirv.func entry points with their workgroup size, workgroup attributions as module-scope
// Workgroup variables, math as OpenCL extended instructions, barriers as control barriers.
// RUN: gptc-opt %s --gpt-gpu-to-spirv | FileCheck %s

module attributes {gpu.container_module} {
  // CHECK: gpu.module @kernels
  // CHECK: spirv.module @{{.*}} Physical64 OpenCL
  // CHECK-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.array<64 x f32>, Workgroup>
  // CHECK: spirv.func @rowsum(%{{.*}}: !spirv.ptr<!spirv.array<512 x f32>, CrossWorkgroup>, %{{.*}}: !spirv.ptr<!spirv.array<8 x f32>, CrossWorkgroup>)
  // CHECK: spirv.CL.exp
  // CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>
  // CHECK: spirv.EntryPoint "Kernel" @rowsum
  // CHECK: spirv.ExecutionMode @rowsum "LocalSize", 64, 1, 1
  // The target-neutral kernel stays beside its twin.
  // CHECK: gpu.func @rowsum
  gpu.module @kernels {
    gpu.func @rowsum(%x: memref<8x64xf32>, %y: memref<8xf32>)
        workgroup(%sm: memref<64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %v = memref.load %x[%bid, %tid] : memref<8x64xf32>
      %e = math.exp %v : f32
      memref.store %e, %sm[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c0 = arith.constant 0 : index
      %first = memref.load %sm[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %first, %y[%bid] : memref<8xf32>
      gpu.return
    }
  }
}
