// The conformance suite's OpenCL kernel: y[i] = a * x[i] + y[i] over 256 floats, workgroups
// of 64 (i = group id * 64 + local id). SPIR-V for OpenCL (Kernel, Physical64), as MLIR's
// convert-gpu-to-spirv writes it; the BUILD serializes it and translates it to SPIR bitcode.
spirv.module @__spv__kernels Physical64 OpenCL requires #spirv.vce<v1.0, [Int64, Kernel, Addresses], []> {
      spirv.GlobalVariable @__builtin__LocalInvocationId__ built_in("LocalInvocationId") : !spirv.ptr<vector<3xi64>, Input>
      spirv.GlobalVariable @__builtin__WorkgroupId__ built_in("WorkgroupId") : !spirv.ptr<vector<3xi64>, Input>
      spirv.func @axpy(%arg0: !spirv.ptr<!spirv.array<256 x f32>, CrossWorkgroup>, %arg1: !spirv.ptr<!spirv.array<256 x f32>, CrossWorkgroup>, %arg2: f32) "None" attributes {workgroup_attributions = 0 : i64} {
        %__builtin__WorkgroupId___addr = spirv.mlir.addressof @__builtin__WorkgroupId__ : !spirv.ptr<vector<3xi64>, Input>
        %0 = spirv.Load "Input" %__builtin__WorkgroupId___addr : vector<3xi64>
        %1 = spirv.CompositeExtract %0[0 : i32] : vector<3xi64>
        %__builtin__LocalInvocationId___addr = spirv.mlir.addressof @__builtin__LocalInvocationId__ : !spirv.ptr<vector<3xi64>, Input>
        %2 = spirv.Load "Input" %__builtin__LocalInvocationId___addr : vector<3xi64>
        %3 = spirv.CompositeExtract %2[0 : i32] : vector<3xi64>
        %cst64_i64 = spirv.Constant 64 : i64
        %4 = spirv.IMul %1, %cst64_i64 : i64
        %5 = spirv.IAdd %4, %3 : i64
        %cst0_i64 = spirv.Constant 0 : i64
        %cst1_i64 = spirv.Constant 1 : i64
        %6 = spirv.AccessChain %arg0[%5] : !spirv.ptr<!spirv.array<256 x f32>, CrossWorkgroup>, i64
        %7 = spirv.Load "CrossWorkgroup" %6 : f32
        %cst0_i64_0 = spirv.Constant 0 : i64
        %cst1_i64_1 = spirv.Constant 1 : i64
        %8 = spirv.AccessChain %arg1[%5] : !spirv.ptr<!spirv.array<256 x f32>, CrossWorkgroup>, i64
        %9 = spirv.Load "CrossWorkgroup" %8 : f32
        %10 = spirv.FMul %arg2, %7 : f32
        %11 = spirv.FAdd %10, %9 : f32
        %cst0_i64_2 = spirv.Constant 0 : i64
        %cst1_i64_3 = spirv.Constant 1 : i64
        %12 = spirv.AccessChain %arg1[%5] : !spirv.ptr<!spirv.array<256 x f32>, CrossWorkgroup>, i64
        spirv.Store "CrossWorkgroup" %12, %11 : f32
        spirv.Return
      }
      spirv.EntryPoint "Kernel" @axpy, @__builtin__WorkgroupId__, @__builtin__LocalInvocationId__
      spirv.ExecutionMode @axpy "LocalSize", 64, 1, 1
    }
