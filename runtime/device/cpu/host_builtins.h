// The cpu driver's builtins: the CPU library kernels (runtime/kernels/cpu: BLAS matmuls, the
// flash-style attention, RMSNorm, rotary, cross-entropy, embedding, AdamW, Muon, permute,
// unfused elementwise ops) under stable names, which the compiler's cpu lowering
// (compiler/lowering/cpu) chooses and whose arguments it lays out. The compiler decides which
// builtin runs and with what sizes; a builtin only checks and runs. BUILTINS.md lists every
// name with its arguments; a family's contract (params, flags, argument order) is ukernel/.
//
//   const HostBuiltin* b = FindHostBuiltin("cpu.gemm.f32");
//   absl::StatusOr<int64_t> ws = b->prepare(args, threads);   // once, when recorded
//   absl::Status s = b->run(args, workspace);                   // every step
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_HOST_BUILTINS_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_HOST_BUILTINS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "artifact/artifact.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::device::cpu {

/// One argument as the cpu driver passes it: host memory or a scalar.
struct HostArg {
  bool is_buffer = true;
  char* data = nullptr;  // is_buffer
  int64_t bytes = 0;     // is_buffer
  artifact::Scalar scalar;

  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
  int64_t i() const { return scalar.i; }
  double f() const { return scalar.f; }
};

struct HostBuiltin {
  std::string_view name;
  /// Checks the arguments once, when the call is recorded (count, buffer or scalar, sizes that
  /// agree with the scalars), and returns the workspace bytes one call needs when the kernels
  /// run on `threads` threads. Errors name the builtin and the argument at fault.
  absl::StatusOr<int64_t> (*prepare)(absl::Span<const HostArg> args, int threads);
  /// Runs the call. Non-OK only for data the types cannot rule out (an id outside the
  /// vocabulary, a step count below 1).
  absl::Status (*run)(absl::Span<const HostArg> args, kernels::Workspace workspace);
};

/// Null when there is no builtin of that name.
const HostBuiltin* FindHostBuiltin(std::string_view name);
std::vector<std::string_view> HostBuiltinNames();

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_HOST_BUILTINS_H_
