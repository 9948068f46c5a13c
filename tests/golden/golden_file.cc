// Implements GoldenFile::Load: parse and check, in the order the bytes come (FORMAT.md).
#include "tests/golden/golden_file.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::tests {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'T', 'G', 'O', 'L', 'D', '\0'};
constexpr size_t kPreambleBytes = 16;  // magic, u32 version, u32 header length

absl::Status Bad(const std::string& path, const std::string& why) {
  return absl::DataLossError(absl::StrCat(path, ": ", why, "; the golden file is stale or foreign: regenerate it with `",
                                          kGoldenRegenerateCommand, "` from the repository root"));
}

uint32_t ReadU32(const std::string& s, size_t at) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data() + at);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;  // little-endian
}

// Fills `tensor` from one header entry; `data` is the whole data section.
absl::Status ReadTensor(const std::string& path, const nlohmann::json& entry, const std::string& data,
                        size_t expected_offset, std::string* name, GoldenTensor* tensor) {
  *name = entry.at("name").get<std::string>();
  const std::string dtype = entry.at("dtype").get<std::string>();
  if (dtype == "f32") {
    tensor->dtype = GoldenDtype::kF32;
  } else if (dtype == "i32") {
    tensor->dtype = GoldenDtype::kI32;
  } else {
    return Bad(path, absl::StrCat("tensor ", *name, " has unknown dtype '", dtype, "' (want f32 or i32)"));
  }
  tensor->shape = entry.at("shape").get<std::vector<int64_t>>();
  for (int64_t d : tensor->shape) {
    if (d < 0) return Bad(path, absl::StrCat("tensor ", *name, " has a negative dimension"));
  }
  const size_t offset = entry.at("offset").get<size_t>(), nbytes = entry.at("nbytes").get<size_t>();
  const size_t want_bytes = static_cast<size_t>(tensor->numel()) * 4;
  if (offset != expected_offset) {
    return Bad(path, absl::StrCat("tensor ", *name, " starts at data offset ", offset, ", the previous tensor ends at ",
                                  expected_offset));
  }
  if (nbytes != want_bytes) {
    return Bad(path, absl::StrCat("tensor ", *name, " has ", nbytes, " bytes but shape [",
                                  absl::StrJoin(tensor->shape, ","), "] needs ", want_bytes));
  }
  if (offset + nbytes > data.size()) {
    return Bad(path, absl::StrCat("truncated: tensor ", *name, " needs data bytes [", offset, ", ", offset + nbytes,
                                  ") of ", data.size()));
  }
  const char* src = data.data() + offset;  // the data is little-endian, as is every machine we build for
  if (tensor->dtype == GoldenDtype::kF32) {
    tensor->f32.resize(tensor->numel());
    std::memcpy(tensor->f32.data(), src, nbytes);
  } else {
    tensor->i32.resize(tensor->numel());
    std::memcpy(tensor->i32.data(), src, nbytes);
  }
  return absl::OkStatus();
}

}  // namespace

int64_t GoldenTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<GoldenFile> GoldenFile::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open; generate it with `", kGoldenRegenerateCommand, "` from the repository root"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < kPreambleBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Bad(path, "not a golden file (the first 8 bytes are not \"GPTGOLD\\0\")");
  }
  const uint32_t version = ReadU32(bytes, 8);
  if (version != kGoldenFormatVersion) {
    return Bad(path, absl::StrCat("format version ", version, ", this reader reads version ", kGoldenFormatVersion));
  }
  const size_t header_len = ReadU32(bytes, 12);
  if (kPreambleBytes + header_len > bytes.size()) {
    return Bad(path, absl::StrCat("truncated: the header claims ", header_len, " bytes, the file has ",
                                  bytes.size() - kPreambleBytes, " after the preamble"));
  }
  GoldenFile file;
  file.path = path;
  file.header_json = bytes.substr(kPreambleBytes, header_len);
  const std::string data = bytes.substr(kPreambleBytes + header_len);
  nlohmann::json header = nlohmann::json::parse(file.header_json, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Bad(path, "the header is not a JSON object");
  try {
    file.case_name = header.at("case").get<std::string>();
    file.config_json = header.at("config").dump();
    size_t end = 0;
    for (const nlohmann::json& entry : header.at("tensors")) {
      std::string name;
      GoldenTensor tensor;
      if (absl::Status s = ReadTensor(path, entry, data, end, &name, &tensor); !s.ok()) return s;
      end += tensor.numel() * 4;
      if (!file.tensors.emplace(name, std::move(tensor)).second) {
        return Bad(path, absl::StrCat("tensor ", name, " is listed twice"));
      }
    }
    if (end != data.size()) {
      return Bad(path, absl::StrCat("the header's tensors cover ", end, " data bytes, the file has ", data.size()));
    }
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, absl::StrCat("header field missing or mistyped: ", e.what()));
  }
  return file;
}

absl::StatusOr<const GoldenTensor*> GoldenFile::Get(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) {
    return absl::NotFoundError(absl::StrCat(path, ": no tensor '", name, "'; if the generator added it, regenerate with `",
                                            kGoldenRegenerateCommand, "`"));
  }
  return &it->second;
}

}  // namespace gpt_sft::tests
