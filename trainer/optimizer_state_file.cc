#include "trainer/optimizer_state_file.h"

#include <cstdio>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/read_file.h"
#include "runtime/checkpoint/safetensors.h"

namespace gpt_sft::trainer {

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
  const std::string header =
      runtime::EncodeSafetensorsHeader(infos, {{"steps_taken", absl::StrCat(state.steps_taken)}, {"writer", "gpt_sft"}});
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
  OptimizerState state;
  bool has_steps = false;
  for (const auto& [key, value] : header->metadata) {
    if (key == "steps_taken") has_steps = absl::SimpleAtoi(value, &state.steps_taken);
  }
  if (!has_steps) return absl::DataLossError(absl::StrCat(path, ": no integer \"steps_taken\" in its metadata"));
  for (const runtime::TensorInfo& info : header->tensors) {
    if (info.dtype != "F32") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", info.name, "' is ", info.dtype, ", not F32"));
    }
    runtime::Tensor t = runtime::Tensor::Empty(runtime::DType::kF32, info.shape);
    std::memcpy(t.raw_data(), bytes->data() + header->data_start + info.begin, info.end - info.begin);
    state.tensors.emplace_back(info.name, std::move(t));
  }
  return state;
}

}  // namespace gpt_sft::trainer
