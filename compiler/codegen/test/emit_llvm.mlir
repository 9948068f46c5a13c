// gptc --emit=llvm: the step's fusion kernels as optimized LLVM IR for this host, one
// nounwind function per lowered fusion with the (buffers, begin, end) ABI, f32 loops vectorized.
// RUN: gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=llvm | FileCheck %s
// RUN: not gptc --depth=1 --n_embd=128 --n_head=1 --vocab=512 --batch=2 --seq=64 --emit=bogus 2>&1 | FileCheck %s --check-prefix=STAGES

// CHECK: target triple = "x86_64
// CHECK: define void @gpt_fusion_0(ptr {{.*}}, i64 {{.*}}, i64 {{.*}}) {{.*}}#[[ATTRS:[0-9]+]]
// CHECK: load <{{[0-9]+}} x float>
// CHECK: attributes #[[ATTRS]] = { {{.*}}nounwind{{.*}}"target-cpu"=

// STAGES: gptc: --emit: unknown stage 'bogus'; expected one of: gpt, autodiff, fused, planned, linalg, llvm
