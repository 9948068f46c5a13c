// How a cpu builtin reads its arguments: one Call struct per builtin, parsed by ArgReader with
// the same code when the launch is recorded (checked: counts, kinds, sizes against the dims)
// and every step (unchecked: a few pointer reads), so the two cannot disagree. Entry<Call>
// makes the table entry. Shared by host_builtins.cc and the families in ukernels/.
#ifndef GPT_SFT_RUNTIME_DEVICE_CPU_BUILTIN_CALL_H_
#define GPT_SFT_RUNTIME_DEVICE_CPU_BUILTIN_CALL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "runtime/device/cpu/host_builtins.h"
#include "runtime/kernels/cpu/workspace.h"

namespace gpt_sft::runtime::device::cpu {

/// Reads a builtin's arguments in order: buffers (checked to hold at least the bytes the
/// dims imply, when `check` is on) and scalars. The first problem is kept and names the
/// builtin and the argument.
class ArgReader {
 public:
  ArgReader(std::string_view builtin, absl::Span<const HostArg> args, bool check)
      : builtin_(builtin), args_(args), check_(check) {}

  int64_t Int(const char* what) {
    const HostArg* a = Next(what, /*buffer=*/false);
    return a ? a->i() : 0;
  }
  double Float(const char* what) {
    const HostArg* a = Next(what, /*buffer=*/false);
    return a ? a->f() : 0.0;
  }
  /// The next buffer, as T*, which must hold `count` elements.
  template <typename T>
  T* Buffer(int64_t count, const char* what) {
    const HostArg* a = Next(what, /*buffer=*/true);
    if (a == nullptr) return nullptr;
    if (check_ && a->bytes < count * static_cast<int64_t>(sizeof(T))) {
      Fail(absl::StrCat("argument ", index_ - 1, " (", what, ") has ", a->bytes, " bytes; ", count * sizeof(T),
                        " are needed"));
    }
    return a->as<T>();
  }
  /// The status once every argument is read: any problem, or arguments left over.
  absl::Status Finish() {
    if (status_.ok() && index_ != args_.size()) {
      Fail(absl::StrCat("takes ", index_, " arguments, got ", args_.size()));
    }
    return status_;
  }
  /// Records a problem with the arguments (the first one is the status).
  void Fail(const std::string& message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(std::string(builtin_), ": ", message));
  }

 private:
  const HostArg* Next(const char* what, bool buffer) {
    if (index_ >= args_.size()) {
      Fail(absl::StrCat("argument ", index_, " (", what, ") is missing; got ", args_.size()));
      return nullptr;
    }
    const HostArg& a = args_[index_++];
    if (a.is_buffer != buffer) {
      Fail(absl::StrCat("argument ", index_ - 1, " (", what, ") must be a ", buffer ? "buffer" : "scalar"));
      return nullptr;
    }
    return &a;
  }

  std::string_view builtin_;
  absl::Span<const HostArg> args_;
  bool check_;
  size_t index_ = 0;
  absl::Status status_;
};

inline absl::Status CheckIds(const int32_t* ids, int64_t n, int64_t lo, int64_t end, const char* what) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < lo || ids[i] >= end) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", ids[i], " at flat index ", i, " is outside [", lo, ", ",
                                                     end, ")"));
    }
  }
  return absl::OkStatus();
}

template <typename Call>
absl::StatusOr<int64_t> Prepare(absl::Span<const HostArg> args, int threads) {
  ArgReader reader(Call::kName, args, /*check=*/true);
  Call call(reader);
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  return call.Workspace(threads);
}

template <typename Call>
absl::Status Run(absl::Span<const HostArg> args, kernels::Workspace workspace) {
  ArgReader reader(Call::kName, args, /*check=*/false);
  return Call(reader).Run(workspace);
}

template <typename Call>
constexpr HostBuiltin Entry(std::string_view name) {
  return HostBuiltin{name, &Prepare<Call>, &Run<Call>};
}

}  // namespace gpt_sft::runtime::device::cpu

#endif  // GPT_SFT_RUNTIME_DEVICE_CPU_BUILTIN_CALL_H_
