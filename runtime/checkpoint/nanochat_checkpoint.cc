// Implements nanochat checkpoint loading and saving (see the header).
#include "runtime/checkpoint/nanochat_checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/atomic_file.h"
#include "base/read_file.h"
#include "runtime/checkpoint/torch_state_dict.h"

namespace gpt_sft::runtime {
namespace {

namespace fs = std::filesystem;

std::string PtName(int64_t step) { return absl::StrFormat("model_%06d.pt", step); }
std::string MetaName(int64_t step) { return absl::StrFormat("meta_%06d.json", step); }

// The step of "model_<digits>.pt", or nothing for any other name.
std::optional<int64_t> StepOf(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "model_") || !absl::ConsumeSuffix(&name, ".pt") || name.empty()) return std::nullopt;
  if (name.find_first_not_of("0123456789") != absl::string_view::npos || name.size() > 18) return std::nullopt;
  int64_t step;
  if (!absl::SimpleAtoi(name, &step)) return std::nullopt;
  return step;
}

std::string Shape(const std::vector<int64_t>& shape) { return absl::StrCat("(", absl::StrJoin(shape, ", "), ")"); }

// Fills a new store of `config` from the state_dict, checking names, shapes and dtypes first.
absl::StatusOr<ParamStore> ReadStore(const TorchStateDict& file, const compiler::ModelConfig& config,
                                     const std::string& meta_path) {
  absl::StatusOr<ParamStore> store = ParamStore::Create(config);
  if (!store.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(meta_path, ": model_config: ", store.status().message()));
  }
  absl::flat_hash_map<std::string, const TorchTensor*> by_name;
  for (const TorchTensor& t : file.tensors()) {
    absl::string_view name = t.name;
    absl::ConsumePrefix(&name, "_orig_mod.");  // torch.compile's wrapper; exact prefix only
    if (store->Find(std::string(name)) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(file.path(), ": tensor ", t.name, " is not a parameter of the model ",
                                                     meta_path, " describes (", config.ToJson(), ")"));
    }
    if (!by_name.emplace(std::string(name), &t).second) {
      return absl::InvalidArgumentError(absl::StrCat(file.path(), ": tensor ", name, " appears twice"));
    }
  }
  for (const Param& p : store->params()) {
    auto it = by_name.find(p.name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(file.path(), ": tensor ", p.name, " is missing (the model ",
                                                     meta_path, " describes has it)"));
    }
    if (it->second->shape != p.shape) {
      return absl::InvalidArgumentError(absl::StrCat(file.path(), ": tensor ", p.name, " has shape ",
                                                     Shape(it->second->shape), " but the model_config of ", meta_path,
                                                     " gives ", Shape(p.shape)));
    }
  }
  for (Param& p : store->params()) {
    if (absl::Status s = file.ReadFloat32(*by_name.at(p.name), p.data()); !s.ok()) return s;
  }
  return store;
}

std::string NanochatMetaJson(const CheckpointRecord& record, const compiler::ModelConfig& config) {
  nlohmann::ordered_json j;
  j["step"] = record.step;
  j["val_loss"] = nullptr;
  if (record.val_loss && std::isfinite(*record.val_loss)) j["val_loss"] = *record.val_loss;
  for (const auto& [key, value] : record.metrics) j[key] = value;
  j["model_config"] = nlohmann::ordered_json::parse(config.ToJson());
  return j.dump(2);  // json.dump(meta, f, indent=2): no trailing newline
}

}  // namespace

uint16_t RoundToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
  const uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7fff + lsb) >> 16);
}

absl::StatusOr<NanochatCheckpointFiles> FindNanochatCheckpoint(const std::string& path) {
  std::error_code ec;
  NanochatCheckpointFiles f;
  if (fs::is_directory(path, ec)) {
    f.dir = path;
    std::optional<int64_t> last;
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      std::optional<int64_t> step = StepOf(e.path().filename().string());
      if (step && (!last || *step > *last)) last = step;
    }
    if (ec) return absl::NotFoundError(absl::StrCat(path, ": cannot list: ", ec.message()));
    if (!last) {
      return absl::NotFoundError(absl::StrCat(path, ": no model_<step>.pt file; a nanochat checkpoint directory holds "
                                              "model_%06d.pt and meta_%06d.json"));
    }
    f.step = *last;
  } else {
    if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
    const fs::path p(path);
    std::optional<int64_t> step = StepOf(p.filename().string());
    if (!step) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a nanochat checkpoint (a directory, or a file named model_<step>.pt)"));
    }
    f.dir = p.has_parent_path() ? p.parent_path().string() : ".";
    f.step = *step;
  }
  f.model_path = (fs::path(f.dir) / PtName(f.step)).string();
  f.meta_path = (fs::path(f.dir) / MetaName(f.step)).string();
  // nanochat names the file from the step with at least six digits; model_7.pt means step 7.
  if (!fs::exists(f.model_path, ec) && fs::path(path).extension() == ".pt") f.model_path = path;
  return f;
}

absl::StatusOr<LoadedCheckpoint> LoadNanochatCheckpoint(const std::string& path) {
  absl::StatusOr<NanochatCheckpointFiles> f = FindNanochatCheckpoint(path);
  if (!f.ok()) return f.status();
  std::error_code ec;
  if (!fs::exists(f->meta_path, ec)) {
    return absl::NotFoundError(absl::StrCat(f->model_path, ": its meta file ", f->meta_path,
                                            " is missing; nanochat saves model_%06d.pt with meta_%06d.json, whose "
                                            "model_config gives the model's shape"));
  }
  absl::StatusOr<std::string> text = base::ReadFile(f->meta_path);
  if (!text.ok()) return text.status();
  absl::StatusOr<CheckpointMeta> meta = MetaFromJson(f->meta_path, *text);
  if (!meta.ok()) return meta.status();
  if (meta->record.step != f->step) {
    return absl::InvalidArgumentError(
        absl::StrCat(f->meta_path, ": records step ", meta->record.step, ", its name says ", f->step));
  }
  absl::StatusOr<TorchStateDict> file = TorchStateDict::Read(f->model_path);
  if (!file.ok()) return file.status();
  absl::StatusOr<ParamStore> store = ReadStore(*file, meta->model_config, f->meta_path);
  if (!store.ok()) return store.status();
  return LoadedCheckpoint{*std::move(store), *std::move(meta)};
}

absl::StatusOr<NanochatCheckpointFiles> SaveNanochatCheckpoint(const std::string& dir, const ParamStore& store,
                                                               const CheckpointRecord& record,
                                                               const SaveOptions& options) {
  if (record.step < 0) return absl::InvalidArgumentError(absl::StrCat("checkpoint step ", record.step, " is negative"));
  NanochatCheckpointFiles f;
  f.dir = dir;
  f.step = record.step;
  f.model_path = (fs::path(dir) / PtName(record.step)).string();
  f.meta_path = (fs::path(dir) / MetaName(record.step)).string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create checkpoint directory ", dir, ": ", ec.message()));

  // nanochat keeps wte in bf16 (NANOCHAT.md 1.2); only that tensor is converted.
  std::vector<uint16_t> wte_bf16;
  std::vector<TorchTensorBytes> tensors;
  for (const Param& p : store.params()) {
    TorchTensorBytes t{p.name, TorchDtype::kFloat32, p.shape, p.data()};
    if (p.name == "transformer.wte.weight") {
      wte_bf16.resize(p.numel());
      for (int64_t i = 0; i < p.numel(); ++i) wte_bf16[i] = RoundToBfloat16(p.data()[i]);
      t.dtype = TorchDtype::kBFloat16;
      t.data = wte_bf16.data();
    }
    tensors.push_back(std::move(t));
  }
  absl::StatusOr<std::unique_ptr<base::AtomicFile>> model = base::AtomicFile::Open(f.model_path, options.fault_hook);
  if (!model.ok()) return model.status();
  const std::string archive = fs::path(f.model_path).stem().string();
  if (absl::Status s = WriteTorchStateDict(archive, tensors, **model); !s.ok()) return s;
  if (absl::Status s = (*model)->Sync(); !s.ok()) return s;
  const std::string meta_json = NanochatMetaJson(record, store.config());
  absl::StatusOr<std::unique_ptr<base::AtomicFile>> meta = base::AtomicFile::Open(f.meta_path, options.fault_hook);
  if (!meta.ok()) return meta.status();
  if (absl::Status s = (*meta)->Append(meta_json.data(), meta_json.size()); !s.ok()) return s;
  if (absl::Status s = (*meta)->Sync(); !s.ok()) return s;
  // Both complete on disk; model, then meta, into place (as SaveCheckpoint), and a model this
  // save created is removed again if its meta cannot follow.
  const bool model_existed = fs::exists(f.model_path, ec);
  absl::Status s = (*model)->Publish();
  if (s.ok()) s = (*meta)->Publish();
  if (!s.ok() && !model_existed && !fs::exists(f.meta_path, ec)) fs::remove(f.model_path, ec);
  if (!s.ok()) return s;
  return f;
}

}  // namespace gpt_sft::runtime
