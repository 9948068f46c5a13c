// LaunchWork and LaunchCost on hand-made launches: the gemm and cuDNN sdpa builtins' FLOPs, unit and bytes,
// the attention kernels' FLOPs from the step's shape, copies, collectives, and the local
// traffic of a kernel with a stack frame.
#include "compiler/cost/launch_cost.h"

#include "artifact/artifact.h"
#include "compiler/cost/gpu_spec.h"
#include "compiler/cost/launch_work.h"
#include "gtest/gtest.h"

namespace gpt_sft::compiler::cost {
namespace {

using artifact::Arg;
using artifact::BufferRef;
using artifact::Launch;
using artifact::LaunchKind;
using artifact::Scalar;

Arg I64(int64_t v) { return Arg::Of(Scalar{Scalar::Type::kI64, v, 0}); }
Arg F64(double v) { return Arg::Of(Scalar{Scalar::Type::kF64, 0, v}); }
Arg Buffer(int64_t bytes) { return Arg::Buffer(BufferRef{BufferRef::Space::kArena, -1, 0, bytes}); }

/// gemm.f32 C[M, N] = alpha A B + beta C_in, the argument order of runtime/device/gemm_builtin.h.
Launch Gemm(int64_t M, int64_t N, int64_t K, bool inputs_bf16, double beta) {
  Launch l;
  l.kind = LaunchKind::kBuiltin;
  l.name = "gemm.f32";
  l.op = "gpt.matmul";
  l.args = {I64(M),      I64(N),       I64(K),          I64(0),          I64(1),         I64(inputs_bf16 ? 1 : 0),
            F64(1.0),    F64(beta),    Buffer(4 * M * K), Buffer(4 * K * N), Buffer(4 * M * N), Buffer(4 * M * N)};
  return l;
}

StepShape D20Shape() { return StepShape{4, 2048, 10, 10, 128, false}; }

TEST(LaunchWork, GemmIsTwoMnkOnTf32TensorCoresForBf16Inputs) {
  const LaunchWork w = WorkOfLaunch(Gemm(8192, 1280, 5120, true, 0.0), D20Shape(), {});
  EXPECT_EQ(w.unit, ComputeUnit::kTf32TensorCore);
  EXPECT_EQ(w.engine, Engine::kVendorLibrary);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 8192 * 1280 * 5120);
  EXPECT_EQ(w.bytes_read, 4 * (8192LL * 5120 + 5120LL * 1280));
  EXPECT_EQ(w.bytes_written, 4 * 8192LL * 1280);
}

TEST(LaunchWork, GemmOnF32ValuesRunsOnFp32CoresAndAnAccumulationReadsC) {
  const LaunchWork w = WorkOfLaunch(Gemm(256, 256, 256, false, 1.0), D20Shape(), {});
  EXPECT_EQ(w.unit, ComputeUnit::kFp32Core);
  EXPECT_EQ(w.bytes_read, 3 * 4 * 256LL * 256);
}

TEST(LaunchCost, ALargeGemmIsComputeBoundAtTheVendorEfficiency) {
  const GpuSpec h100 = *FindGpu("h100");
  const LaunchWork w = WorkOfLaunch(Gemm(8192, 1280, 5120, true, 0.0), D20Shape(), {});
  const LaunchCost c = PriceLaunch(w, h100, nullptr);
  EXPECT_EQ(c.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(c.seconds, w.flops / (h100.tf32_tensor_flops * kVendorLibraryEfficiency));
}

/// sdpa_fwd.cudnn / sdpa_bwd.cudnn at d20's shape, f32 buffers (runtime/device/sdpa_builtin.h).
Launch Sdpa(bool backward) {
  const int64_t q = 4LL * 2048 * 10 * 128 * 4, lse = 4LL * 10 * 2048 * 4;
  Launch l;
  l.kind = LaunchKind::kBuiltin;
  l.name = backward ? "sdpa_bwd.cudnn" : "sdpa_fwd.cudnn";
  l.args = {I64(4), I64(2048), I64(10), I64(10), I64(128), I64(0), I64(1), F64(0.0883883)};
  for (int64_t b : backward ? std::vector<int64_t>{q, q, q, q, q, lse, q, q, q} : std::vector<int64_t>{q, q, q, q, lse}) {
    l.args.push_back(Buffer(b));
  }
  return l;
}

TEST(LaunchCost, CudnnSdpaIsCausalFlopsOnBf16TensorCoresAtTheVendorEfficiency) {
  const GpuSpec h100 = *FindGpu("h100");
  const double forward = 4.0 * 4 * 10 * 2048.0 * 2048 * 128 / 2;
  const LaunchWork fwd = WorkOfLaunch(Sdpa(false), D20Shape(), {});
  EXPECT_EQ(fwd.unit, ComputeUnit::kBf16TensorCore);
  EXPECT_EQ(fwd.engine, Engine::kVendorLibrary);
  EXPECT_DOUBLE_EQ(fwd.flops, forward);
  EXPECT_EQ(fwd.bytes_read, 3 * 4LL * 2048 * 10 * 128 * 4);
  EXPECT_EQ(fwd.bytes_written, 4LL * 2048 * 10 * 128 * 4 + 4LL * 10 * 2048 * 4);
  // The f32 forward moves about as many bytes as it has time for FLOPs; the backward, 2.5x the
  // FLOPs, is compute-bound.
  EXPECT_GE(PriceLaunch(fwd, h100, nullptr).seconds, forward / (h100.bf16_tensor_flops * kVendorLibraryEfficiency));
  const LaunchWork bwd = WorkOfLaunch(Sdpa(true), D20Shape(), {});
  EXPECT_DOUBLE_EQ(bwd.flops, 2.5 * forward);
  EXPECT_EQ(bwd.bytes_written, 3 * 4LL * 2048 * 10 * 128 * 4);
  const LaunchCost c = PriceLaunch(bwd, h100, nullptr);
  EXPECT_EQ(c.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(c.seconds, 2.5 * forward / (h100.bf16_tensor_flops * kVendorLibraryEfficiency));

  Launch malformed = Sdpa(false);
  malformed.args.pop_back();
  EXPECT_FALSE(WorkOfLaunch(malformed, D20Shape(), {}).priced);
}

Launch Kernel(const std::string& name, std::array<int64_t, 3> grid, int64_t block, std::vector<int64_t> buffers) {
  Launch l;
  l.kind = LaunchKind::kKernel;
  l.module = 0;
  l.name = name;
  l.grid = grid;
  l.block = {block, 1, 1};
  for (int64_t b : buffers) l.args.push_back(Buffer(b));
  return l;
}

TEST(LaunchWork, AttentionFlopsComeFromTheCausalPairsOfTheStep) {
  const StepShape s = D20Shape();
  const double pairs = 4.0 * 10 * 2048 * 2049 / 2;
  const int64_t qkv = 4LL * 2048 * 10 * 128 * 4, lse = 4LL * 10 * 2048 * 4;
  const LaunchWork forward = WorkOfLaunch(Kernel("attention", {32, 10, 4}, 64, {qkv, qkv, qkv, qkv, lse}), s, {});
  const LaunchWork kv = WorkOfLaunch(Kernel("attention_grad_kv_segments", {32, 10, 4}, 64, {qkv, qkv}), s, {});
  const LaunchWork q = WorkOfLaunch(Kernel("attention_grad_q_3", {32, 10, 4}, 64, {qkv, qkv}), s, {});
  EXPECT_DOUBLE_EQ(forward.flops, 4 * 128 * pairs);
  EXPECT_DOUBLE_EQ(kv.flops, 8 * 128 * pairs);
  EXPECT_DOUBLE_EQ(q.flops, 6 * 128 * pairs);
  EXPECT_EQ(forward.unit, ComputeUnit::kFp32Core);
  EXPECT_EQ(forward.engine, Engine::kGenerated);
  // Without PTX facts: every buffer but the last read, the last written, and the row says so.
  EXPECT_EQ(forward.bytes_read, 4 * qkv);
  EXPECT_EQ(forward.bytes_written, lse);
  EXPECT_FALSE(forward.note.empty());
}

TEST(LaunchCost, AStackFrameIsChargedAtL2BandwidthPerVisiblePair) {
  const GpuSpec h100 = *FindGpu("h100");
  const StepShape s = D20Shape();
  const int64_t qkv = 4LL * 2048 * 10 * 128 * 4;
  const LaunchWork w = WorkOfLaunch(Kernel("attention", {32, 10, 4}, 64, {qkv, qkv, qkv, qkv}), s, {});
  KernelResources frame;
  frame.registers = 128;
  frame.stack_frame_bytes = 1120;
  const LaunchCost with = PriceLaunch(w, h100, &frame);
  const LaunchCost without = PriceLaunch(w, h100, nullptr);
  EXPECT_NEAR(static_cast<double>(with.local_bytes), kAttentionFrameAccessesPerPair * 1120 * s.CausalPairs(), 1.0);
  EXPECT_EQ(without.local_bytes, 0);
  EXPECT_EQ(with.bound, Bound::kLocal);
  EXPECT_GT(with.seconds, without.seconds);
}

TEST(LaunchCost, ElementwiseKernelsAreMemoryBound) {
  const GpuSpec h100 = *FindGpu("h100");
  const int64_t bytes = 4LL * 8192 * 1280;
  const LaunchCost c = PriceLaunch(WorkOfLaunch(Kernel("fusion_3", {40960, 1, 1}, 256, {bytes, bytes}), D20Shape(), {}),
                                   h100, nullptr);
  EXPECT_EQ(c.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(c.seconds, 2.0 * bytes / (h100.dram_bytes_per_second * kBandwidthEfficiency));
  EXPECT_DOUBLE_EQ(c.work.flops, kElementwiseFlopsPerElement * bytes / 4);
}

TEST(LaunchCost, CopiesMoveBytesAndCollectivesAreNotPriced) {
  const GpuSpec h100 = *FindGpu("h100");
  Launch copy;
  copy.kind = LaunchKind::kCopy;
  copy.args = {Buffer(1 << 20), Buffer(1 << 20)};
  const LaunchCost c = PriceLaunch(WorkOfLaunch(copy, D20Shape(), {}), h100, nullptr);
  EXPECT_EQ(c.work.bytes_read + c.work.bytes_written, 2 << 20);
  EXPECT_EQ(c.bound, Bound::kMemory);

  Launch all_reduce;
  all_reduce.kind = LaunchKind::kCollective;
  all_reduce.name = "all_reduce";
  all_reduce.args = {Buffer(1 << 20)};
  const LaunchCost r = PriceLaunch(WorkOfLaunch(all_reduce, D20Shape(), {}), h100, nullptr);
  EXPECT_FALSE(r.work.priced);
  EXPECT_EQ(r.seconds, 0);
  EXPECT_EQ(r.bound, Bound::kNone);
  EXPECT_NE(r.work.note.find("network"), std::string::npos);
}

TEST(LaunchWork, KernelStemDropsTheVariantNumber) {
  EXPECT_EQ(KernelStem("fusion_17"), "fusion");
  EXPECT_EQ(KernelStem("rms_norm_2"), "rms_norm");
  EXPECT_EQ(KernelStem("attention"), "attention");
  EXPECT_EQ(KernelStem("rotary_bf16"), "rotary_bf16");
}

}  // namespace
}  // namespace gpt_sft::compiler::cost
