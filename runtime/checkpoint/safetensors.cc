// Implements the safetensors header codec and its checks.
#include "runtime/checkpoint/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::runtime {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so is this code");

// The format's own cap on the header (100 MB): anything larger is a foreign file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

// One entry {"dtype", "shape", "data_offsets"}, nothing else.
absl::StatusOr<TensorInfo> ParseEntry(absl::string_view file, const std::string& name, const nlohmann::json& v) {
  const std::string where = absl::StrCat("tensor \"", name, "\"");
  if (!v.is_object()) return Bad(file, absl::StrCat(where, ": entry is not an object"));
  for (const auto& [key, unused] : v.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      return Bad(file, absl::StrCat(where, ": unknown field \"", key, "\""));
    }
  }
  TensorInfo t;
  t.name = name;
  auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string()) return Bad(file, absl::StrCat(where, ": \"dtype\" missing or not a string"));
  t.dtype = dtype->get<std::string>();
  if (DtypeSize(t.dtype) < 0) return Bad(file, absl::StrCat(where, ": unknown dtype \"", t.dtype, "\""));
  auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array()) return Bad(file, absl::StrCat(where, ": \"shape\" missing or not an array"));
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned()) return Bad(file, absl::StrCat(where, ": shape entry ", d.dump(), " is not a non-negative integer"));
    t.shape.push_back(d.get<int64_t>());
  }
  auto offsets = v.find("data_offsets");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return Bad(file, absl::StrCat(where, ": \"data_offsets\" must be [begin, end], two non-negative integers"));
  }
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  if (t.end < t.begin) return Bad(file, absl::StrCat(where, ": data_offsets [", t.begin, ", ", t.end, "] run backwards"));
  // numel * size, refusing overflow: a shape whose bytes do not fit 64 bits is no real tensor.
  uint64_t bytes = static_cast<uint64_t>(DtypeSize(t.dtype));
  for (int64_t d : t.shape) {
    if (d != 0 && bytes > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
      return Bad(file, absl::StrCat(where, ": shape ", ShapeText(t.shape), " overflows"));
    }
    bytes *= static_cast<uint64_t>(d);
  }
  if (bytes != t.end - t.begin) {
    return Bad(file, absl::StrCat(where, ": shape ", ShapeText(t.shape), " of ", t.dtype, " needs ", bytes,
                                  " bytes but data_offsets [", t.begin, ", ", t.end, "] hold ", t.end - t.begin));
  }
  return t;
}

// Sorted by begin, the tensors must start at 0, abut, and end at data_size.
absl::Status CheckTiling(absl::string_view file, const std::vector<TensorInfo>& tensors, uint64_t data_size) {
  uint64_t at = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : tensors) {
    if (t.begin != at) {
      const std::string before = prev ? absl::StrCat("tensor \"", prev->name, "\" ends at ", at) : "the data starts at 0";
      return Bad(file, absl::StrCat("tensor \"", t.name, "\" begins at ", t.begin, " but ", before,
                                    t.begin < at ? ": overlapping data_offsets" : ": a gap in the data"));
    }
    if (t.end > data_size) {
      return Bad(file, absl::StrCat("truncated: tensor \"", t.name, "\" needs data bytes [", t.begin, ", ", t.end,
                                    ") but the file holds ", data_size, " bytes of data"));
    }
    at = t.end;
    prev = &t;
  }
  if (at != data_size) {
    return Bad(file, absl::StrCat("the tensors' data ends at ", at, " but the file holds ", data_size,
                                  " bytes of data: trailing bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

int DtypeSize(absl::string_view dtype) {
  static const std::pair<const char*, int> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4},  {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  for (const auto& [name, size] : kSizes) {
    if (dtype == name) return size;
  }
  return -1;
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::string_view file, absl::string_view json,
                                                         uint64_t data_size) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(json.begin(), json.end());
  } catch (const nlohmann::json::exception& e) {
    return Bad(file, absl::StrCat("the header is not JSON (not a safetensors file?): ", e.what()));
  }
  if (!j.is_object()) return Bad(file, "the header is not a JSON object");
  SafetensorsHeader h;
  h.data_size = data_size;
  for (const auto& [key, v] : j.items()) {
    if (key == "__metadata__") {
      if (!v.is_object()) return Bad(file, "\"__metadata__\" is not an object");
      for (const auto& [mk, mv] : v.items()) {
        if (!mv.is_string()) return Bad(file, absl::StrCat("\"__metadata__\" value of \"", mk, "\" is not a string"));
        h.metadata.emplace_back(mk, mv.get<std::string>());
      }
      continue;
    }
    absl::StatusOr<TensorInfo> t = ParseEntry(file, key, v);
    if (!t.ok()) return t.status();
    h.tensors.push_back(*std::move(t));
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  if (absl::Status s = CheckTiling(file, h.tensors, data_size); !s.ok()) return s;
  return h;
}

absl::StatusOr<SafetensorsHeader> ReadSafetensorsHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  if (file_size < 8) {
    return Bad(path, absl::StrCat("truncated: ", file_size, " bytes, too short for a safetensors header"));
  }
  in.seekg(0);
  unsigned char prefix[8];
  in.read(reinterpret_cast<char*>(prefix), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  if (n > kMaxHeaderBytes || n > file_size - 8) {
    return Bad(path, absl::StrCat("header length ", n, " exceeds the file's ", file_size,
                                  " bytes: truncated, or not a safetensors file"));
  }
  std::string json(n, '\0');
  in.read(json.data(), static_cast<std::streamsize>(n));
  if (!in) return absl::DataLossError(absl::StrCat(path, ": read error in the header"));
  if (n == 0 || json[0] != '{') return Bad(path, "the header does not start with '{': not a safetensors file");
  absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(path, json, file_size - 8 - n);
  if (h.ok()) h->data_start = 8 + n;
  return h;
}

std::string EncodeSafetensorsHeader(const std::vector<TensorInfo>& tensors,
                                    const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    j["__metadata__"] = m;
  }
  for (const TensorInfo& t : tensors) {
    j[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {t.begin, t.end}}};
  }
  std::string json = j.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json;
}

}  // namespace gpt_sft::runtime
