// The cpu driver's builtin table. Today: the elementwise sum the conformance suite launches;
// the compiler's cpu lowering brings the library kernels' entries (BUILTINS.md).
#include "runtime/device/cpu/host_builtins.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/cpu/pointwise.h"

namespace gpt_sft::runtime::device::cpu {
namespace {

/// cpu.add.f32 (a, b, y: n floats; n: i64): y = a + b.
absl::StatusOr<int64_t> PrepareAdd(absl::Span<const HostArg> args, int) {
  if (args.size() != 4 || !args[0].is_buffer || !args[1].is_buffer || !args[2].is_buffer || args[3].is_buffer) {
    return absl::InvalidArgumentError("cpu.add.f32 takes (a, b, y, n)");
  }
  const int64_t bytes = args[3].i() * 4;
  for (int i = 0; i < 3; ++i) {
    if (args[i].bytes < bytes) {
      return absl::InvalidArgumentError(absl::StrCat("cpu.add.f32: argument ", i, " has ", args[i].bytes,
                                                     " bytes; n = ", args[3].i(), " needs ", bytes));
    }
  }
  return 0;
}

absl::Status RunAdd(absl::Span<const HostArg> args, kernels::Workspace) {
  kernels::Add(args[0].as<const float>(), args[1].as<const float>(), args[2].as<float>(), args[3].i());
  return absl::OkStatus();
}

constexpr std::array<HostBuiltin, 1> kBuiltins = {{
    {"cpu.add.f32", PrepareAdd, RunAdd},
}};

}  // namespace

const HostBuiltin* FindHostBuiltin(std::string_view name) {
  for (const HostBuiltin& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::vector<std::string_view> HostBuiltinNames() {
  std::vector<std::string_view> names;
  for (const HostBuiltin& b : kBuiltins) names.push_back(b.name);
  return names;
}

}  // namespace gpt_sft::runtime::device::cpu
