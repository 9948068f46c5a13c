// The safetensors container (huggingface/safetensors, the format of record; no code of
// theirs is used). A file is:
//   bytes [0, 8)        N, the header length, a little-endian uint64
//   bytes [8, 8+N)      a UTF-8 JSON object: {"__metadata__": {str: str}?,
//                        name: {"dtype": "F32", "shape": [d0, ...], "data_offsets": [b, e]}, ...}
//                       (we pad it with spaces so that 8+N is a multiple of 8)
//   bytes [8+N, end)    the data; tensor `name` is bytes [8+N+b, 8+N+e), row-major, little-endian
// The offsets must tile the data exactly: sorted by b they start at 0, each begins where the
// last ended, and the last ends at the end of the file. This file parses and checks headers
// and encodes them; param_file.h moves a ParamStore in and out of such files.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_SAFETENSORS_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_SAFETENSORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpt_sft::runtime {

struct TensorInfo {
  std::string name;
  std::string dtype;           // safetensors' spelling: "F32", "BF16", "F16", "I64", ...
  std::vector<int64_t> shape;  // may be empty (a scalar)
  uint64_t begin = 0, end = 0; // data_offsets, relative to the start of the data
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // in data order (sorted by begin)
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__", in file order
  uint64_t data_start = 0;          // 8 + N
  uint64_t data_size = 0;           // file size - data_start
};

/// Bytes per element of a safetensors dtype; -1 for a name the format does not define.
int DtypeSize(absl::string_view dtype);

/// Checks `json` (the N header bytes) against a data section of `data_size` bytes: an object,
/// well-formed entries, known dtypes, byte sizes equal to numel * dtype size, offsets that tile
/// the data exactly. Errors name `file` and the tensor at fault.
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view file, absl::string_view json,
                                                         uint64_t data_size);

/// Reads and checks the header of the file at `path` (the data is not read). A file too short,
/// a header length past the end (truncated, or not a safetensors file at all) and every error of
/// ParseSafetensorsHeader are reported with the path.
absl::StatusOr<SafetensorsHeader> ReadSafetensorsHeader(const std::string& path);

/// The first 8 + N bytes of a file holding `tensors` (whose offsets the caller has laid out)
/// with `metadata` first in the JSON, padded with spaces to a multiple of 8.
std::string EncodeSafetensorsHeader(const std::vector<TensorInfo>& tensors,
                                    const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_SAFETENSORS_H_
