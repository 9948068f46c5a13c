// Implements DynamicLibrary.
#include "base/dynamic_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace gpt_sft::base {

absl::StatusOr<DynamicLibrary> DynamicLibrary::Open(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(error != nullptr ? error : absl::StrCat(name, ": cannot be loaded"));
  }
  return DynamicLibrary(handle);
}

void* DynamicLibrary::Symbol(const char* name) {
  void* symbol = dlsym(handle_, name);
  if (symbol == nullptr) absl::StrAppend(&missing_, missing_.empty() ? "" : ", ", name);
  return symbol;
}

}  // namespace gpt_sft::base
