// Reads the golden files that tests/golden/make_golden.py writes (format: FORMAT.md).
#ifndef GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_
#define GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::tests {

struct GoldenTensor {
  std::vector<int64_t> shape;
  std::vector<float> f32;    // dtype f32
  std::vector<int32_t> i32;  // dtype i32
};

struct GoldenFile {
  std::string header_json;  // the whole header, for fields the struct does not surface
  std::string config_json;  // GPTConfig keys
  std::map<std::string, GoldenTensor> tensors;
};

/// The command that rewrites every golden file; every load error ends with it.
inline constexpr char kRegenerateCommand[] = "/usr/bin/python3 tests/golden/make_golden.py";

/// Checks the magic, the format version, the header, and that the tensors tile the data
/// exactly with sizes matching their shapes. A stale or foreign file is an error that
/// names the file and says how to regenerate it.
absl::StatusOr<GoldenFile> LoadGoldenFile(const std::string& path);

}  // namespace gpt_sft::tests

#endif  // GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_
