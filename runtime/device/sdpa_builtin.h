// The cuda driver's attention builtins `sdpa_fwd.cudnn` and `sdpa_bwd.cudnn` (SDPA_BUILTIN.md
// beside this file): cuDNN's fused scaled-dot-product attention, called where the compiler
// lowered attention with --attention=cudnn.
//
// Reading and checking the arguments is a plain function here, tested on any machine; the
// cuda driver builds and runs cuDNN's plans from what it returns.
#ifndef GPT_SFT_RUNTIME_DEVICE_SDPA_BUILTIN_H_
#define GPT_SFT_RUNTIME_DEVICE_SDPA_BUILTIN_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/device/device.h"

namespace gpt_sft::runtime::device {

inline constexpr std::string_view kSdpaForwardBuiltin = "sdpa_fwd.cudnn";
inline constexpr std::string_view kSdpaBackwardBuiltin = "sdpa_bwd.cudnn";

/// The tensors whose storage the `dtype` scalar describes, as its bit numbers: bit b set means
/// that tensor's buffer stores bf16 (2 bytes an element), clear means f32. Under bf16 storage
/// q, k, v are bf16 while out and the gradients are f32, so one flag for all cannot say it.
/// Either way cuDNN computes on bf16 values: f32 buffers (bf16 values in f32 storage under
/// autocast) are rounded into bf16 scratch before the call and the results widened after it.
enum class SdpaTensor { kQ = 0, kK, kV, kOut, kDout, kDq, kDk, kDv };
inline constexpr int64_t kSdpaTensorCount = 8;

/// One call. Layouts (row-major): q, out, dout, dq [B, T, H, D]; k, v, dk, dv [B, T, Hkv, D];
/// lse [B, H, T] f32, the natural log-sum-exp of each query row's scaled scores (cuDNN's
/// "stats"). With GQA query head h reads kv head h / (H / Hkv).
struct SdpaCall {
  bool backward = false;
  int64_t B = 0, T = 0, H = 0, Hkv = 0, D = 0;
  uint32_t bf16_tensors = 0;  // the dtype scalar: bit SdpaTensor set = stored as bf16
  bool causal = true;
  double scale = 0;
  BufferRange q, k, v, out, lse;  // forward: q, k, v read; out, lse written
  BufferRange dout, dq, dk, dv;   // backward: q, k, v, out, dout, lse read; dq, dk, dv written

  bool StoresBf16(SdpaTensor t) const { return (bf16_tensors >> static_cast<int>(t)) & 1u; }
  int64_t ElementBytes(SdpaTensor t) const { return StoresBf16(t) ? 2 : 4; }
  int64_t QElements() const { return B * T * H * D; }
  int64_t KvElements() const { return B * T * Hkv * D; }
};

/// Whether `name` is one of the sdpa builtins.
bool IsSdpaBuiltin(std::string_view name);

/// The builtin's arguments in order: scalars B, T, H, Hkv, D, dtype, causal (integers), scale
/// (float); buffers q, k, v, out, lse (sdpa_fwd.cudnn) or q, k, v, out, dout, lse, dq, dk, dv
/// (sdpa_bwd.cudnn). InvalidArgument naming `label` and the argument at fault (a count, a kind,
/// a dim below 1, H not a multiple of Hkv, an unknown dtype, a range outside its buffer or
/// smaller than its tensor).
absl::StatusOr<SdpaCall> ReadSdpaBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label);

}  // namespace gpt_sft::runtime::device

#endif  // GPT_SFT_RUNTIME_DEVICE_SDPA_BUILTIN_H_
