// Implements ReadSdpaBuiltin.
#include "runtime/device/sdpa_builtin.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace gpt_sft::runtime::device {
namespace {

constexpr const char* kScalarNames[] = {"B", "T", "H", "Hkv", "D", "dtype", "causal", "scale"};
constexpr int kScalars = 8, kInts = 7;
constexpr const char* kForwardBuffers[] = {"q", "k", "v", "out", "lse"};
constexpr const char* kBackwardBuffers[] = {"q", "k", "v", "out", "dout", "lse", "dq", "dk", "dv"};

bool IsInt(const KernelArg& a) {
  return !a.is_buffer && (a.scalar.type == Scalar::Type::kI64 || a.scalar.type == Scalar::Type::kI32);
}
bool IsFloat(const KernelArg& a) {
  return !a.is_buffer && (a.scalar.type == Scalar::Type::kF64 || a.scalar.type == Scalar::Type::kF32);
}

}  // namespace

bool IsSdpaBuiltin(std::string_view name) { return name == kSdpaForwardBuiltin || name == kSdpaBackwardBuiltin; }

absl::StatusOr<SdpaCall> ReadSdpaBuiltin(std::string_view name, absl::Span<const KernelArg> args,
                                         std::string_view label) {
  const std::string where = absl::StrCat(std::string(label), " (builtin ", std::string(name), ")");
  if (!IsSdpaBuiltin(name)) return absl::InvalidArgumentError(absl::StrCat(where, ": not an sdpa builtin"));
  SdpaCall c;
  c.backward = name == kSdpaBackwardBuiltin;
  const absl::Span<const char* const> buffer_names =
      c.backward ? absl::Span<const char* const>(kBackwardBuffers) : absl::Span<const char* const>(kForwardBuffers);
  const size_t expected = kScalars + buffer_names.size();
  if (args.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", args.size(), " arguments, expected ", expected, " (",
                                                   kScalars, " scalars, ", buffer_names.size(), " buffers)"));
  }
  for (int i = 0; i < kScalars; ++i) {
    const bool want_int = i < kInts;
    if (want_int ? !IsInt(args[i]) : !IsFloat(args[i])) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument ", i, " (", kScalarNames[i], ") must be ",
                                                     want_int ? "an integer" : "a float", " scalar"));
    }
  }
  for (size_t i = kScalars; i < expected; ++i) {
    if (!args[i].is_buffer) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": argument ", i, " (", buffer_names[i - kScalars], ") must be a buffer"));
    }
  }
  c.B = args[0].scalar.i;
  c.T = args[1].scalar.i;
  c.H = args[2].scalar.i;
  c.Hkv = args[3].scalar.i;
  c.D = args[4].scalar.i;
  const int64_t dtype = args[5].scalar.i;
  c.causal = args[6].scalar.i != 0;
  c.scale = args[7].scalar.f;
  if (c.B < 1 || c.T < 1 || c.H < 1 || c.Hkv < 1 || c.D < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": dims B=", c.B, " T=", c.T, " H=", c.H, " Hkv=", c.Hkv,
                                                   " D=", c.D, " must be >= 1"));
  }
  if (c.H % c.Hkv != 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": H=", c.H, " is not a multiple of Hkv=", c.Hkv));
  }
  if (dtype < 0 || dtype >= (int64_t{1} << kSdpaTensorCount)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": dtype ", dtype,
                                                   " is not a mask of bf16 tensors (bits 0-7: q, k, v, out, dout, "
                                                   "dq, dk, dv)"));
  }
  c.bf16_tensors = static_cast<uint32_t>(dtype);
  BufferRange* forward_ranges[] = {&c.q, &c.k, &c.v, &c.out, &c.lse};
  BufferRange* backward_ranges[] = {&c.q, &c.k, &c.v, &c.out, &c.dout, &c.lse, &c.dq, &c.dk, &c.dv};
  const int64_t lse_bytes = c.B * c.H * c.T * 4;
  auto q_bytes = [&](SdpaTensor t) { return c.QElements() * c.ElementBytes(t); };
  auto kv_bytes = [&](SdpaTensor t) { return c.KvElements() * c.ElementBytes(t); };
  const int64_t forward_need[] = {q_bytes(SdpaTensor::kQ), kv_bytes(SdpaTensor::kK), kv_bytes(SdpaTensor::kV),
                                  q_bytes(SdpaTensor::kOut), lse_bytes};
  const int64_t backward_need[] = {q_bytes(SdpaTensor::kQ),    kv_bytes(SdpaTensor::kK),  kv_bytes(SdpaTensor::kV),
                                   q_bytes(SdpaTensor::kOut),  q_bytes(SdpaTensor::kDout), lse_bytes,
                                   q_bytes(SdpaTensor::kDq),   kv_bytes(SdpaTensor::kDk), kv_bytes(SdpaTensor::kDv)};
  for (size_t i = 0; i < buffer_names.size(); ++i) {
    BufferRange& r = c.backward ? *backward_ranges[i] : *forward_ranges[i];
    r = args[kScalars + i].buffer;
    if (!InsideItsBuffer(r)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", buffer_names[i], " bytes [", r.offset, ", ",
                                                     r.offset + r.bytes, ") lie outside its buffer of ",
                                                     r.buffer ? r.buffer->bytes() : 0, " bytes"));
    }
    const int64_t need = c.backward ? backward_need[i] : forward_need[i];
    if (r.bytes < need) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": buffer ", buffer_names[i], " holds ", r.bytes,
                                                     " bytes; [B=", c.B, ", T=", c.T, ", H=", c.H, ", Hkv=", c.Hkv,
                                                     ", D=", c.D, "] needs ", need));
    }
  }
  return c;
}

}  // namespace gpt_sft::runtime::device
