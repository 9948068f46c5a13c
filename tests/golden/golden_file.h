// Reads the golden files that tests/golden/make_golden.py writes (layout: FORMAT.md).
//
// A golden file holds one case of our PyTorch reference of nanochat's model (config, the
// [M,B,T] batch, initial weights, loss, every gradient, weights after 1 and 3 optimizer
// steps). Load() checks everything it can about the bytes (magic, format version, header,
// that the tensors tile the data exactly and match their shapes), so a stale or foreign
// file fails loudly with the command that regenerates it, instead of as a numeric mismatch.
#ifndef GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_
#define GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::tests {

/// The format version this reader accepts (FORMAT_VERSION in make_golden.py).
inline constexpr uint32_t kGoldenFormatVersion = 2;

/// The command that rewrites every golden file, run from the repository root; every load
/// error ends with it.
inline constexpr char kGoldenRegenerateCommand[] =
    "apt-get install -y python3-torch python3-numpy && /usr/bin/python3 tests/golden/make_golden.py";

enum class GoldenDtype { kF32, kI32 };

/// One stored tensor, row-major. Exactly one of f32 / i32 is filled, per dtype.
struct GoldenTensor {
  GoldenDtype dtype = GoldenDtype::kF32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int32_t> i32;
  int64_t numel() const;
};

/// A loaded golden file. Owns its tensors; copyable.
struct GoldenFile {
  std::string path;
  std::string case_name;      // header "case": padded, packed, accum2
  std::string header_json;    // the whole JSON header, for fields not surfaced here
  std::string config_json;    // header "config": nanochat's GPTConfig keys
  std::map<std::string, GoldenTensor> tensors;  // by name, e.g. "grad/lm_head.weight"

  /// Reads and checks `path`. Errors (NotFound for a missing file, DataLoss for anything
  /// else) name the file, what is wrong, and kGoldenRegenerateCommand.
  static absl::StatusOr<GoldenFile> Load(const std::string& path);

  /// The tensor `name`; an error naming the file and the tensor when absent. The pointer
  /// lives as long as this GoldenFile.
  absl::StatusOr<const GoldenTensor*> Get(const std::string& name) const;
};

}  // namespace gpt_sft::tests

#endif  // GPT_SFT_TESTS_GOLDEN_GOLDEN_FILE_H_
