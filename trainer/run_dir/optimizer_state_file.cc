#include "trainer/run_dir/optimizer_state_file.h"

#include <cstdio>
#include <cstring>

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/read_file.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/checkpoint/zip_archive.h"

namespace gpt_sft::trainer {
namespace {

// Metadata keys: "crc32/<tensor name>" per tensor and "crc32/steps_taken" for the one number
// the header holds, so a flipped bit in what is read is an error naming what it hit.
constexpr char kCrcPrefix[] = "crc32/";
constexpr char kStepsKey[] = "steps_taken";

std::string Hex8(uint32_t crc) {
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", crc);
  return hex;
}

uint32_t CrcOf(const std::string& text) { return runtime::Crc32(text.data(), text.size()); }

}  // namespace

std::string OptimizerStateFileName(int64_t step) {
  char name[48];
  std::snprintf(name, sizeof(name), "optim_%06lld.safetensors", static_cast<long long>(step));
  return name;
}

absl::Status WriteOptimizerStateFile(const std::string& path, const OptimizerState& state) {
  std::vector<runtime::TensorInfo> infos;
  uint64_t offset = 0;
  for (const auto& [name, t] : state.tensors) {
    infos.push_back({name, "F32", t.shape(), offset, offset + t.bytes()});
    offset += t.bytes();
  }
  const std::string steps = absl::StrCat(state.steps_taken);
  std::vector<std::pair<std::string, std::string>> metadata = {
      {kStepsKey, steps}, {"writer", "gpt_sft"}, {absl::StrCat(kCrcPrefix, kStepsKey), Hex8(CrcOf(steps))}};
  for (const auto& [name, t] : state.tensors)
    metadata.push_back({absl::StrCat(kCrcPrefix, name), Hex8(runtime::Crc32(t.raw_data(), t.bytes()))});
  const std::string header = runtime::EncodeSafetensorsHeader(infos, metadata);
  absl::StatusOr<std::unique_ptr<base::AtomicFile>> file = base::AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = (*file)->Append(header.data(), header.size()); !s.ok()) return s;
  for (const auto& [name, t] : state.tensors) {
    if (absl::Status s = (*file)->Append(t.raw_data(), t.bytes()); !s.ok()) return s;
  }
  if (absl::Status s = (*file)->Sync(); !s.ok()) return s;
  return (*file)->Publish();
}

absl::StatusOr<OptimizerState> ReadOptimizerStateFile(const std::string& path) {
  absl::StatusOr<runtime::SafetensorsHeader> header = runtime::ReadSafetensorsHeader(path);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != header->data_start + header->data_size) {
    return absl::DataLossError(absl::StrCat(path, ": changed while it was read"));
  }
  std::map<std::string, std::string> crcs;  // by what they cover; none in files written before them
  OptimizerState state;
  std::string steps;
  for (const auto& [key, value] : header->metadata) {
    if (key == kStepsKey) steps = value;
    if (absl::StartsWith(key, kCrcPrefix)) crcs[key.substr(sizeof(kCrcPrefix) - 1)] = value;
  }
  // Every load checks what the writer summed; a file with no sums at all predates them.
  const auto check = [&](const std::string& what, uint32_t crc) -> absl::Status {
    if (crcs.empty()) return absl::OkStatus();
    const auto it = crcs.find(what);
    if (it == crcs.end()) return absl::DataLossError(absl::StrCat(path, ": no checksum for '", what, "' in its metadata"));
    if (it->second != Hex8(crc)) {
      return absl::DataLossError(absl::StrCat(path, ": '", what, "' does not match its checksum (crc32 ", Hex8(crc),
                                              ", written ", it->second, "): the file is corrupt"));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check(kStepsKey, CrcOf(steps)); !s.ok()) return s;
  if (!absl::SimpleAtoi(steps, &state.steps_taken) || state.steps_taken < 0) {
    return absl::DataLossError(absl::StrCat(path, ": no integer \"steps_taken\" in its metadata"));
  }
  for (const runtime::TensorInfo& info : header->tensors) {
    if (info.dtype != "F32") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", info.name, "' is ", info.dtype, ", not F32"));
    }
    const char* data = bytes->data() + header->data_start + info.begin;
    if (absl::Status s = check(info.name, runtime::Crc32(data, info.end - info.begin)); !s.ok()) return s;
    runtime::Tensor t = runtime::Tensor::Empty(runtime::DType::kF32, info.shape);
    std::memcpy(t.raw_data(), data, info.end - info.begin);
    state.tensors.emplace_back(info.name, std::move(t));
  }
  return state;
}

}  // namespace gpt_sft::trainer
