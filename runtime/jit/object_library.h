// ObjectLibrary: a relocatable object (compiler/codegen's KernelObject::object) linked into
// this process with LLVM ORC, so the runtime calls compiled fusion kernels by symbol:
//
//   auto library = ObjectLibrary::Load(kernel_object.object);
//   auto fn = reinterpret_cast<compiler::FusionKernelFn>(*(*library)->Find("gpt_fusion_0"));
//
// Undefined symbols of the object (libm's tanh) resolve against the process. The code
// lives as long as the library; addresses from Find are invalid after it is destroyed.
// MLIR-free: only LLVM (ORC) and Abseil, behind this header.
#ifndef GPT_SFT_RUNTIME_JIT_OBJECT_LIBRARY_H_
#define GPT_SFT_RUNTIME_JIT_OBJECT_LIBRARY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace gpt_sft::runtime {

class ObjectLibrary {
 public:
  /// Links a relocatable object (KernelObject::object) into this process with LLVM ORC (LLJIT),
  /// resolving anything external (libm) from the process. Error says what failed to link.
  static absl::StatusOr<std::unique_ptr<ObjectLibrary>> Load(const std::string& object_bytes);
  /// The address of `symbol`; NotFound naming the symbol otherwise.
  absl::StatusOr<void*> Find(const std::string& symbol) const;
  ~ObjectLibrary();

  ObjectLibrary(const ObjectLibrary&) = delete;
  ObjectLibrary& operator=(const ObjectLibrary&) = delete;

 private:
  explicit ObjectLibrary(std::unique_ptr<llvm::orc::LLJIT> jit);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_JIT_OBJECT_LIBRARY_H_
