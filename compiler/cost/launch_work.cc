// Implements WorkOfLaunch: the rules listed in launch_work.h, one function per kind of launch.
#include "compiler/cost/launch_work.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace gpt_sft::compiler::cost {
namespace {

using artifact::Arg;
using artifact::Launch;
using artifact::LaunchKind;

/// A gemm builtin's f32 matrices (c_in, c; a and b of gemm.f32), and a and b of gemm.bf16.
constexpr int64_t kElementBytes = 4;
constexpr int64_t kBf16ElementBytes = 2;

/// The GPU drivers' vendor gemm (runtime/device/gemm_builtin.h, which compiler/ cannot include).
constexpr char kGemmBuiltin[] = "gemm.f32";
constexpr char kGemmBatchedBuiltin[] = "gemm_batched.f32";
/// The cuda driver's cuDNN attention (runtime/device/sdpa_builtin.h).
constexpr char kSdpaForwardBuiltin[] = "sdpa_fwd.cudnn";
constexpr char kSdpaBackwardBuiltin[] = "sdpa_bwd.cudnn";
constexpr char kGemmBf16Builtin[] = "gemm.bf16";
constexpr char kGemmBatchedBf16Builtin[] = "gemm_batched.bf16";

bool IsGemmBuiltin(const std::string& name) {
  return name == kGemmBuiltin || name == kGemmBatchedBuiltin || name == kGemmBf16Builtin ||
         name == kGemmBatchedBf16Builtin;
}

int64_t LargestBuffer(const Launch& launch) {
  int64_t largest = 0;
  for (const Arg& a : launch.args) {
    if (a.is_buffer) largest = std::max(largest, a.buffer.bytes);
  }
  return largest;
}

/// Bytes a kernel's arguments move, by direction. With the kernel's PTX facts, from them;
/// else the argument-order rule (launch_work.h).
void KernelBytes(const Launch& launch, const KernelFacts* facts, LaunchWork& work) {
  if (facts != nullptr && facts->params.size() == launch.args.size()) {
    for (size_t i = 0; i < launch.args.size(); ++i) {
      if (!launch.args[i].is_buffer) continue;
      if (facts->params[i].read) work.bytes_read += launch.args[i].buffer.bytes;
      if (facts->params[i].written) work.bytes_written += launch.args[i].buffer.bytes;
    }
    return;
  }
  std::vector<int64_t> buffers;
  for (const Arg& a : launch.args) {
    if (a.is_buffer) buffers.push_back(a.buffer.bytes);
  }
  if (buffers.empty()) return;
  for (size_t i = 0; i + 1 < buffers.size(); ++i) work.bytes_read += buffers[i];
  work.bytes_written = buffers.back();
  if (buffers.size() == 1) work.bytes_read = buffers.back();
  work.note = "bytes by argument order (no PTX facts)";
}

/// Gathers and scatters touch only the rows they index: the largest buffer (the table)
/// moves at most as many bytes as the next largest (the dense rows), in each direction.
/// Returns the bytes of the largest buffer the kernel really touches.
int64_t ClampTableToRows(const Launch& launch, const KernelFacts* facts, LaunchWork& work) {
  std::vector<int64_t> buffers;
  for (const Arg& a : launch.args) {
    if (a.is_buffer) buffers.push_back(a.buffer.bytes);
  }
  if (buffers.size() < 2) return LargestBuffer(launch);
  std::sort(buffers.rbegin(), buffers.rend());
  const int64_t saved = buffers[0] - std::min(buffers[0], buffers[1]);
  bool table_read = true, table_written = false;
  if (facts != nullptr && facts->params.size() == launch.args.size()) {
    for (size_t i = 0; i < launch.args.size(); ++i) {
      if (launch.args[i].is_buffer && launch.args[i].buffer.bytes == buffers[0]) {
        table_read = facts->params[i].read;
        table_written = facts->params[i].written;
      }
    }
  }
  if (table_read) work.bytes_read -= std::min(work.bytes_read, saved);
  if (table_written) work.bytes_written -= std::min(work.bytes_written, saved);
  return buffers[1];
}

/// The document-causal variants of the attention kernels ("attention_segments") follow the
/// same rule as the causal ones.
std::string WithoutSegments(std::string stem) {
  constexpr std::string_view kSegments = "_segments";
  const bool ends_with = stem.size() > kSegments.size() &&
                         stem.compare(stem.size() - kSegments.size(), kSegments.size(), kSegments) == 0;
  if (ends_with) stem.resize(stem.size() - kSegments.size());
  return stem;
}

/// FLOPs per visible pair of each attention kernel, per head-dim element (launch_work.h).
/// The warp-tile kernels (flash_attention*) run the same products, on tensor cores (their
/// PTX's mma says which unit).
double AttentionFlopsPerPairPerDim(std::string kernel) {
  constexpr std::string_view kFlash = "flash_";
  if (kernel.compare(0, kFlash.size(), kFlash) == 0) kernel.erase(0, kFlash.size());
  if (kernel == "attention") return 4;
  if (kernel == "attention_grad_kv") return 8;
  if (kernel == "attention_grad_q") return 6;
  return 0;
}

LaunchWork KernelWork(const Launch& launch, const StepShape& shape, const KernelFacts* facts) {
  LaunchWork work;
  work.engine = Engine::kGenerated;
  work.unit = facts != nullptr && facts->mma_unit != ComputeUnit::kNone ? facts->mma_unit : ComputeUnit::kFp32Core;
  work.work_items = launch.grid[0] * launch.grid[1] * launch.grid[2] * launch.block[0] * launch.block[1] *
                    launch.block[2];
  work.frame_touches_per_work_item = kFrameTouchesPerWorkItem;
  KernelBytes(launch, facts, work);
  const std::string stem = WithoutSegments(KernelStem(launch.name));
  const int64_t touched = stem == "embedding" || stem == "embedding_grad_sum" ? ClampTableToRows(launch, facts, work)
                                                                              : LargestBuffer(launch);
  if (const double per_pair = AttentionFlopsPerPairPerDim(stem); per_pair > 0) {
    const double pairs = shape.CausalPairs();
    work.flops = per_pair * static_cast<double>(shape.head_dim) * pairs;
    work.frame_touches_per_work_item =
        kAttentionFrameAccessesPerPair * pairs / static_cast<double>(std::max<int64_t>(1, work.work_items));
    work.rule = absl::StrCat(stem, ": ", per_pair, " D FLOPs x causal pairs");
    return work;
  }
  work.flops = kElementwiseFlopsPerElement * static_cast<double>(touched / kElementBytes);
  work.rule = absl::StrCat("elementwise: ", kElementwiseFlopsPerElement, " FLOPs x elements");
  return work;
}

/// gemm.f32: scalars M, N, K, a_transposed, b_transposed, inputs_bf16 (i64), alpha, beta
/// (f64); buffers a, b, c_in, c (runtime/device/gemm_builtin.h).
LaunchWork GemmWork(const Launch& launch) {
  LaunchWork work;
  // gemm_batched.*: a batch count first, then gemm.f32's arguments for each of its matrices.
  const bool batched = launch.name == kGemmBatchedBuiltin || launch.name == kGemmBatchedBf16Builtin;
  const bool ab_bf16 = launch.name == kGemmBf16Builtin || launch.name == kGemmBatchedBf16Builtin;
  absl::Span<const Arg> a(launch.args);
  if (batched && !a.empty()) a.remove_prefix(1);
  const bool shaped = a.size() == 12 && !a[0].is_buffer && !a[5].is_buffer && !a[7].is_buffer && a[8].is_buffer &&
                      a[11].is_buffer && (!batched || !launch.args[0].is_buffer);
  if (!shaped) {
    work.priced = false;
    work.note = launch.name + " with unexpected arguments: not priced";
    return work;
  }
  const double batch = batched ? static_cast<double>(launch.args[0].scalar.i) : 1.0;
  const double M = static_cast<double>(a[0].scalar.i), N = static_cast<double>(a[1].scalar.i),
               K = static_cast<double>(a[2].scalar.i);
  const bool inputs_bf16 = a[5].scalar.i != 0;
  const bool reads_c_in = a[7].scalar.f != 0;
  work.engine = Engine::kVendorLibrary;
  work.unit = ab_bf16       ? ComputeUnit::kBf16TensorCore
              : inputs_bf16 ? ComputeUnit::kTf32TensorCore
                            : ComputeUnit::kFp32Core;
  work.flops = batch * 2 * M * N * K;
  const double ab_bytes = ab_bf16 ? kBf16ElementBytes : kElementBytes;
  work.bytes_read =
      static_cast<int64_t>(batch * ((M * K + K * N) * ab_bytes + (reads_c_in ? M * N * kElementBytes : 0)));
  work.bytes_written = static_cast<int64_t>(batch * M * N * kElementBytes);
  work.rule = batched ? absl::StrCat("gemm ", launch.args[0].scalar.i, " x ", a[0].scalar.i, "x", a[1].scalar.i, "x",
                                     a[2].scalar.i, ": batch 2MNK")
                      : absl::StrCat("gemm ", a[0].scalar.i, "x", a[1].scalar.i, "x", a[2].scalar.i, ": 2MNK");
  return work;
}

/// sdpa_fwd.cudnn / sdpa_bwd.cudnn: scalars B, T, H, Hkv, D, dtype, causal (i64), scale (f64);
/// buffers q, k, v, out, lse (forward) or q, k, v, out, dout, lse, dq, dk, dv (backward), the
/// last two / three written (runtime/device/SDPA_BUILTIN.md). FLOPs as cuDNN's fused kernels
/// count them: 4 B H T^2 D / 2 for the causal forward (two products over half the scores), 2.5x
/// that backward (five products, P recomputed); bf16 tensor cores at the vendor efficiency.
LaunchWork SdpaWork(const Launch& launch) {
  LaunchWork work;
  const bool backward = launch.name == kSdpaBackwardBuiltin;
  const size_t buffers = backward ? 9 : 5, written = backward ? 3 : 2;
  const absl::Span<const Arg> a(launch.args);
  bool shaped = a.size() == 8 + buffers;
  for (size_t i = 0; shaped && i < a.size(); ++i) shaped = a[i].is_buffer == (i >= 8);
  if (!shaped) {
    work.priced = false;
    work.note = launch.name + " with unexpected arguments: not priced";
    return work;
  }
  const double B = static_cast<double>(a[0].scalar.i), T = static_cast<double>(a[1].scalar.i),
               H = static_cast<double>(a[2].scalar.i), D = static_cast<double>(a[4].scalar.i);
  const bool causal = a[6].scalar.i != 0;
  const double forward = 4 * B * H * T * T * D / (causal ? 2 : 1);
  work.engine = Engine::kVendorLibrary;
  work.unit = ComputeUnit::kBf16TensorCore;
  work.flops = backward ? 2.5 * forward : forward;
  for (size_t i = 8; i < a.size(); ++i) {
    (i >= a.size() - written ? work.bytes_written : work.bytes_read) += a[i].buffer.bytes;
  }
  work.rule = absl::StrCat(backward ? "sdpa bwd: 2.5 x " : "sdpa fwd: ", "4BHT^2D", causal ? "/2" : "");
  return work;
}

/// A builtin the cost model has no rule for: its bytes by argument order, no FLOPs.
LaunchWork UnknownBuiltinWork(const Launch& launch) {
  LaunchWork work;
  KernelBytes(launch, nullptr, work);
  work.note = "builtin '" + launch.name + "' has no cost rule: bytes only";
  return work;
}

LaunchWork MovementWork(const Launch& launch) {
  LaunchWork work;
  auto bytes = [&](size_t i) { return i < launch.args.size() && launch.args[i].is_buffer ? launch.args[i].buffer.bytes : 0; };
  switch (launch.kind) {
    case LaunchKind::kCopy:
      work.bytes_read = bytes(0);
      work.bytes_written = bytes(1);
      work.rule = "copy";
      break;
    case LaunchKind::kFill:
      work.bytes_written = bytes(0);
      work.rule = "fill";
      break;
    case LaunchKind::kCollective:
      work.bytes_read = work.bytes_written = bytes(0);
      work.rule = "collective";
      work.priced = false;
      work.note = "collective: not priced (needs a network model)";
      break;
    default:
      break;
  }
  return work;
}

}  // namespace

StepShape StepShape::Of(const StepConfig& config) {
  StepShape s;
  s.batch = config.batch_size;
  s.seq = config.seq_len;
  s.heads = config.model.n_head;
  s.kv_heads = config.model.n_kv_head;
  s.head_dim = config.model.head_dim();
  s.packed = config.packed;
  return s;
}

double StepShape::CausalPairs() const {
  const double t = static_cast<double>(seq);
  return static_cast<double>(batch) * static_cast<double>(heads) * t * (t + 1) / 2;
}

std::string KernelStem(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  if (end == name.size() || end < 2 || name[end - 1] != '_') return name;
  return name.substr(0, end - 1);
}

std::string_view PtxOf(const artifact::KernelModule& module) {
  switch (module.format) {
    case artifact::ModuleFormat::kPtx: return module.bytes;
    case artifact::ModuleFormat::kCudaFatbin: return module.source;
    default: return {};
  }
}

ArtifactKernelFacts ReadArtifactKernelFacts(const artifact::Artifact& artifact) {
  ArtifactKernelFacts facts;
  for (size_t m = 0; m < artifact.modules.size(); ++m) {
    const std::string_view ptx = PtxOf(artifact.modules[m]);
    if (ptx.empty()) continue;
    absl::StatusOr<std::map<std::string, KernelFacts>> module = ReadPtxKernelFacts(ptx);
    if (!module.ok()) continue;
    for (auto& [symbol, f] : *module) facts[{static_cast<int>(m), symbol}] = std::move(f);
  }
  return facts;
}

LaunchWork WorkOfLaunch(const Launch& launch, const StepShape& shape, const ArtifactKernelFacts& facts) {
  switch (launch.kind) {
    case LaunchKind::kKernel: {
      auto it = facts.find({launch.module, launch.name});
      return KernelWork(launch, shape, it == facts.end() ? nullptr : &it->second);
    }
    case LaunchKind::kBuiltin:
      if (IsGemmBuiltin(launch.name)) return GemmWork(launch);
      if (launch.name == kSdpaForwardBuiltin || launch.name == kSdpaBackwardBuiltin) return SdpaWork(launch);
      return UnknownBuiltinWork(launch);
    default:
      return MovementWork(launch);
  }
}

}  // namespace gpt_sft::compiler::cost
