// Implements WriteParamFile and ReadParamFile over the safetensors codec.
#include "runtime/checkpoint/param_file.h"

#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/checkpoint/safetensors.h"

namespace gpt_sft::runtime {
namespace {

constexpr absl::string_view kCompiledPrefix = "_orig_mod.";

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

// bf16 is the top half of a float32: widening is a shift, exact for every value.
void WidenBf16(const uint16_t* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(&out[i], &bits, sizeof(bits));
  }
}

// Matches header entries to the store's parameters: same set of names, same shapes, a
// dtype we read. Returns, per store parameter, its entry.
absl::StatusOr<std::vector<const TensorInfo*>> MatchTensors(const std::string& path, const SafetensorsHeader& h,
                                                            const ParamStore& store) {
  std::map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo& t : h.tensors) {
    absl::string_view name = t.name;
    if (absl::StartsWith(name, kCompiledPrefix)) name.remove_prefix(kCompiledPrefix.size());
    if (store.Find(std::string(name)) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", t.name, "\" is not a parameter of this model (",
                                                     store.config().ToJson(), ")"));
    }
    if (!by_name.emplace(std::string(name), &t).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", name, "\" appears twice"));
    }
  }
  std::vector<const TensorInfo*> matched;
  for (const Param& p : store.params()) {
    auto it = by_name.find(p.name);
    if (it == by_name.end()) return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", p.name, "\" is missing"));
    const TensorInfo& t = *it->second;
    if (t.shape != p.shape) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", t.name, "\" has shape ", ShapeText(t.shape),
                                                     ", the model expects ", ShapeText(p.shape)));
    }
    if (t.dtype != "F32" && t.dtype != "BF16") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", t.name, "\" has dtype ", t.dtype,
                                                     "; only F32 (and BF16, widened to float32) can be loaded"));
    }
    matched.push_back(&t);
  }
  return matched;
}

absl::Status ReadTensor(std::ifstream& in, const std::string& path, const TensorInfo& t, uint64_t data_start,
                        Param& p) {
  in.seekg(static_cast<std::streamoff>(data_start + t.begin));
  if (t.dtype == "F32") {
    in.read(reinterpret_cast<char*>(p.data()), static_cast<std::streamsize>(t.end - t.begin));
  } else {  // BF16, in chunks so a 65536 x 1280 embedding needs no second full-size buffer
    constexpr int64_t kChunk = 1 << 20;
    std::vector<uint16_t> buf(static_cast<size_t>(std::min<int64_t>(kChunk, p.numel())));
    for (int64_t at = 0; at < p.numel() && in; at += kChunk) {
      const int64_t n = std::min<int64_t>(kChunk, p.numel() - at);
      in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n * 2));
      WidenBf16(buf.data(), n, p.data() + at);
    }
  }
  if (!in) return absl::DataLossError(absl::StrCat(path, ": read error in the data of tensor \"", t.name, "\""));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteParamFile(const ParamStore& store, const std::vector<std::pair<std::string, std::string>>& metadata,
                            base::AtomicFile& out) {
  std::vector<TensorInfo> tensors;
  uint64_t at = 0;
  for (const Param& p : store.params()) {
    const uint64_t bytes = static_cast<uint64_t>(p.numel()) * sizeof(float);
    tensors.push_back({p.name, "F32", p.shape, at, at + bytes});
    at += bytes;
  }
  const std::string header = EncodeSafetensorsHeader(tensors, metadata);
  if (absl::Status s = out.Append(header.data(), header.size()); !s.ok()) return s;
  for (const Param& p : store.params()) {
    if (absl::Status s = out.Append(p.data(), p.numel() * sizeof(float)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ParamStore> ReadParamFile(const std::string& path, const compiler::ModelConfig& config) {
  absl::StatusOr<SafetensorsHeader> header = ReadSafetensorsHeader(path);
  if (!header.ok()) return header.status();
  absl::StatusOr<ParamStore> store = ParamStore::Create(config);
  if (!store.ok()) return absl::Status(store.status().code(), absl::StrCat(path, ": ", store.status().message()));
  absl::StatusOr<std::vector<const TensorInfo*>> matched = MatchTensors(path, *header, *store);
  if (!matched.ok()) return matched.status();
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  for (size_t k = 0; k < matched->size(); ++k) {
    if (absl::Status s = ReadTensor(in, path, *(*matched)[k], header->data_start, store->params()[k]); !s.ok()) return s;
  }
  return store;
}

}  // namespace gpt_sft::runtime
