// Running the toolchain programs the back ends need (llvm-spirv for OpenCL, the linker for
// the host module, ptxas for CUDA) as child processes, on files in a private temporary
// directory. The compiler calls them at compile time only; artifacts carry their outputs.
#ifndef GPT_SFT_COMPILER_CODEGEN_EXTERNAL_TOOL_H_
#define GPT_SFT_COMPILER_CODEGEN_EXTERNAL_TOOL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpt_sft::compiler {

/// A directory of our own under $TMPDIR (or /tmp), removed with everything in it when the
/// object is destroyed.
class ScratchDir {
 public:
  static absl::StatusOr<ScratchDir> Make(const std::string& prefix);
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir();
  const std::string& path() const { return path_; }
  /// path()/name.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

/// Runs argv (argv[0] an absolute path) with no stdin and waits. OK when it exits 0; else an
/// error naming the tool, how it ended and the end of its stderr. A missing tool is
/// FailedPrecondition naming the path and the Debian package that provides it (`package`).
/// `stderr_text`, when given, receives what the tool wrote to stderr (ptxas -v reports there).
absl::Status RunTool(const std::vector<std::string>& argv, const std::string& package,
                     std::string* stderr_text = nullptr);

absl::StatusOr<std::string> ReadWholeFile(const std::string& path);
absl::Status WriteWholeFile(const std::string& path, const std::string& bytes);

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_EXTERNAL_TOOL_H_
