// Implements LinkHostSharedObject: ld.lld -shared in a scratch directory.
#include "compiler/codegen/host_module.h"

#include "absl/strings/str_cat.h"
#include "compiler/codegen/external_tool.h"

#ifndef GPT_LLD_PATH
#error "GPT_LLD_PATH must name ld.lld (third_party/system_paths.bzl)"
#endif

namespace gpt_sft::compiler {

absl::StatusOr<std::string> LinkHostSharedObject(const std::string& object) {
  absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-link");
  if (!dir.ok()) return dir.status();
  const std::string in = dir->File("kernels.o"), out = dir->File("kernels.so");
  if (absl::Status s = WriteWholeFile(in, object); !s.ok()) return s;
  if (absl::Status s = RunTool({GPT_LLD_PATH, "-shared", "--no-undefined-version", "-o", out, in}, "lld-19"); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("linking the fusion kernels into a shared object: ", s.message()));
  }
  return ReadWholeFile(out);
}

}  // namespace gpt_sft::compiler
