#include "compiler/codegen/cuda_assembly.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/external_tool.h"

namespace gpt_sft::compiler {

bool CanAssembleCuda(const std::string& toolkit) {
  return ::access((toolkit + "/bin/ptxas").c_str(), X_OK) == 0 &&
         ::access((toolkit + "/bin/fatbinary").c_str(), X_OK) == 0;
}

absl::StatusOr<AssembledCudaModule> AssembleCudaModule(const std::string& ptx, const std::string& chip,
                                                       const std::string& toolkit) {
  if (!absl::StartsWith(chip, "sm_")) {
    return absl::InvalidArgumentError(absl::StrCat("cuda assembly: chip '", chip, "' is not sm_<N>"));
  }
  absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-cuda-assembly");
  if (!dir.ok()) return dir.status();
  const std::string ptx_path = dir->File("kernels.ptx"), cubin = dir->File("kernels.cubin"),
                    fatbin = dir->File("kernels.fatbin");
  if (absl::Status s = WriteWholeFile(ptx_path, ptx); !s.ok()) return s;
  AssembledCudaModule out;
  if (absl::Status s = RunTool({toolkit + "/bin/ptxas", "-arch=" + chip, "-v", "-o", cubin, ptx_path},
                               "the CUDA toolkit", &out.report);
      !s.ok()) {
    return s;
  }
  const std::string sm = chip.substr(3);
  if (absl::Status s = RunTool({toolkit + "/bin/fatbinary", "--create=" + fatbin, "-64",
                                absl::StrCat("--image3=kind=elf,sm=", sm, ",file=", cubin),
                                absl::StrCat("--image3=kind=ptx,sm=", sm, ",file=", ptx_path)},
                               "the CUDA toolkit");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> bytes = ReadWholeFile(fatbin);
  if (!bytes.ok()) return bytes.status();
  out.fatbin = *std::move(bytes);
  return out;
}

}  // namespace gpt_sft::compiler
