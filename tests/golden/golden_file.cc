// Implements LoadGoldenFile.
#include "tests/golden/golden_file.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gpt_sft::tests {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'T', 'G', 'O', 'L', 'D', '\0'};
constexpr uint32_t kVersion = 1;

absl::Status Bad(const std::string& path, const std::string& why) {
  return absl::DataLossError(absl::StrCat(path, ": ", why, "; regenerate the golden files with `",
                                          kRegenerateCommand, "`"));
}

uint32_t ReadU32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;  // the file is little-endian, as is every machine we build for
}

}  // namespace

absl::StatusOr<GoldenFile> LoadGoldenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Bad(path, "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 8) != 0) return Bad(path, "not a golden file (bad magic)");
  if (ReadU32(bytes, 8) != kVersion) {
    return Bad(path, absl::StrCat("format version ", ReadU32(bytes, 8), ", this reader knows ", kVersion));
  }
  const size_t header_len = ReadU32(bytes, 12);
  if (16 + header_len > bytes.size()) return Bad(path, "truncated header");
  GoldenFile file;
  file.header_json = bytes.substr(16, header_len);
  const size_t data_start = 16 + header_len;
  try {
    const nlohmann::json header = nlohmann::json::parse(file.header_json);
    file.config_json = header.at("config").dump();
    size_t expected_offset = 0;
    for (const nlohmann::json& t : header.at("tensors")) {
      const std::string name = t.at("name").get<std::string>(), dtype = t.at("dtype").get<std::string>();
      GoldenTensor tensor;
      tensor.shape = t.at("shape").get<std::vector<int64_t>>();
      int64_t numel = 1;
      for (int64_t d : tensor.shape) numel *= d;
      const size_t offset = t.at("offset").get<size_t>(), nbytes = t.at("nbytes").get<size_t>();
      if (offset != expected_offset) return Bad(path, absl::StrCat("tensor ", name, " is not where the previous one ends"));
      if (nbytes != static_cast<size_t>(numel) * 4) return Bad(path, absl::StrCat("tensor ", name, " size does not match its shape"));
      if (data_start + offset + nbytes > bytes.size()) return Bad(path, absl::StrCat("truncated: tensor ", name));
      const char* src = bytes.data() + data_start + offset;
      if (dtype == "f32") {
        tensor.f32.resize(numel);
        std::memcpy(tensor.f32.data(), src, nbytes);
      } else if (dtype == "i32") {
        tensor.i32.resize(numel);
        std::memcpy(tensor.i32.data(), src, nbytes);
      } else {
        return Bad(path, absl::StrCat("tensor ", name, " has unknown dtype ", dtype));
      }
      file.tensors.emplace(name, std::move(tensor));
      expected_offset = offset + nbytes;
    }
    if (data_start + expected_offset != bytes.size()) return Bad(path, "trailing bytes after the last tensor");
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, absl::StrCat("bad header: ", e.what()));
  }
  return file;
}

}  // namespace gpt_sft::tests
