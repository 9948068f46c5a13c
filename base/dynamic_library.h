// A shared library opened with dlopen for a table of its entry points: how the runtime reaches
// the libraries no binary links (the CUDA driver, cuBLASLt, NCCL, the OpenCL loader, CLBlast), so
// that every binary builds and starts on machines without them.
#ifndef GPT_SFT_BASE_DYNAMIC_LIBRARY_H_
#define GPT_SFT_BASE_DYNAMIC_LIBRARY_H_

#include <string>
#include <type_traits>

#include "absl/status/statusor.h"

namespace gpt_sft::base {

class DynamicLibrary {
 public:
  /// dlopen(name, RTLD_NOW | RTLD_LOCAL). The library stays loaded for the process (the tables
  /// built from it live as long). NotFound carrying dlerror()'s text when it cannot be loaded.
  static absl::StatusOr<DynamicLibrary> Open(const std::string& name);

  /// Sets `fn` to the symbol `name`, or to null and records `name` as missing.
  template <typename Fn>
  void Bind(Fn& fn, const char* name) {
    static_assert(std::is_pointer_v<Fn>, "Bind fills function pointers");
    fn = reinterpret_cast<Fn>(Symbol(name));
  }

  /// The names Bind did not find, comma-separated; empty when it found them all.
  const std::string& missing() const { return missing_; }

 private:
  explicit DynamicLibrary(void* handle) : handle_(handle) {}
  void* Symbol(const char* name);

  void* handle_;
  std::string missing_;
};

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_DYNAMIC_LIBRARY_H_
