// ObjectLibrary: LLJIT with the process's symbols as a fallback generator, one object added.
// Linking is lazy in ORC; Load looks up nothing, so an unresolvable external shows up at the
// first Find. To report it at Load, Load materializes every defined symbol of the object.
#include "runtime/jit/object_library.h"

#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

namespace gpt_sft::runtime {
namespace {

std::string Message(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

ObjectLibrary::ObjectLibrary(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}

ObjectLibrary::~ObjectLibrary() = default;

absl::StatusOr<std::unique_ptr<ObjectLibrary>> ObjectLibrary::Load(const std::string& object_bytes) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  // The defined global symbols, to link them all now rather than at the first Find.
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(object_bytes, "gpt_kernels.o");
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> parsed =
      llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
  if (!parsed) return absl::InvalidArgumentError("ObjectLibrary: not an object file: " + Message(parsed.takeError()));
  std::vector<std::string> defined;
  for (const llvm::object::SymbolRef& symbol : (*parsed)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!flags || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Global) && !(*flags & llvm::object::SymbolRef::SF_Undefined)) {
      defined.push_back(name->str());
    }
  }

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return absl::InternalError("ObjectLibrary: cannot create an LLJIT: " + Message(jit.takeError()));
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    return absl::InternalError("ObjectLibrary: cannot search the process's symbols: " + Message(process.takeError()));
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (llvm::Error error = (*jit)->addObjectFile(std::move(buffer))) {
    return absl::InvalidArgumentError("ObjectLibrary: cannot add the object: " + Message(std::move(error)));
  }
  auto library = std::unique_ptr<ObjectLibrary>(new ObjectLibrary(std::move(*jit)));
  for (const std::string& name : defined) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = library->jit_->lookup(name);
    if (!address) {
      return absl::InvalidArgumentError(
          absl::StrCat("ObjectLibrary: linking the object failed (at '", name, "'): ", Message(address.takeError())));
    }
  }
  return library;
}

absl::StatusOr<void*> ObjectLibrary::Find(const std::string& symbol) const {
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(symbol);
  if (!address) {
    return absl::NotFoundError(
        absl::StrCat("ObjectLibrary: no symbol '", symbol, "' in the object: ", Message(address.takeError())));
  }
  return address->toPtr<void*>();
}

}  // namespace gpt_sft::runtime
