// The artifact's file format (FORMAT.md): one file, a fixed header, a JSON manifest (slots,
// functions, launch lists, module table) and the binary blobs (kernel modules, constants),
// each blob checked by size and a 64-bit FNV-1a hash on load. Readable without MLIR or
// LLVM: the artifact runner and the device runtime parse it.
//
//   std::string bytes = SerializeArtifact(artifact);
//   absl::StatusOr<Artifact> back = ParseArtifact(bytes, "step.gptart");
//   std::string text = LaunchListText(*back);   // gptc --emit=launches
#ifndef GPT_SFT_ARTIFACT_ARTIFACT_FILE_H_
#define GPT_SFT_ARTIFACT_ARTIFACT_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "artifact/artifact.h"

namespace gpt_sft::artifact {

/// The file's first 8 bytes.
inline constexpr char kFileMagic[8] = {'G', 'P', 'T', 'A', 'R', 'T', '\0', '\1'};

std::string SerializeArtifact(const Artifact& artifact);

/// Parses and Validate()s. `what` names the source in errors (a path). DataLoss for a
/// damaged file (bad magic, truncated, a blob's hash), FailedPrecondition for another
/// format version.
absl::StatusOr<Artifact> ParseArtifact(std::string_view bytes, std::string_view what);

/// The manifest alone, pretty-printed (JSON): the launch list as the runtime reads it.
std::string ManifestJson(const Artifact& artifact);

/// One line per launch, for people: "  12 kernel  matmul_nt_64x64  grid [4,1,1] block
/// [256,1,1] wg 8192  args arena+0:65536 slot3(transformer.h.0.attn.c_q.weight)+0:16384 ...
/// <- gpt.matmul at loc(...)".
std::string LaunchListText(const Artifact& artifact);

}  // namespace gpt_sft::artifact

#endif  // GPT_SFT_ARTIFACT_ARTIFACT_FILE_H_
