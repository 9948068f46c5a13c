// Implements the meta JSON codec.
#include "runtime/checkpoint/checkpoint_meta.h"

#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fnv1a.h"
#include "base/json_file.h"

namespace gpt_sft::runtime {
namespace {

constexpr const char* kExtras = "gpt_sft";
// 2: the file carries its own checksum (gpt_sft.meta_checksum); 1, without, is still read.
constexpr int kFormatVersion = 2;
constexpr const char* kChecksum = "meta_checksum";

// FNV-1a 64 of the compact dump of the whole file without the checksum itself (fields in file
// order): a flipped bit that still parses (a digit of val_loss, a letter of a metric) is refused.
std::string MetaChecksum(nlohmann::ordered_json j) {
  if (j.contains(kExtras) && j[kExtras].is_object()) j[kExtras].erase(kChecksum);
  return absl::StrFormat("%016x", base::Fnv1a64(j.dump()));
}

bool Reserved(const std::string& key) {
  return key == "step" || key == "val_loss" || key == "model_config" || key == kExtras;
}

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

absl::Status ParseExtras(absl::string_view file, const nlohmann::ordered_json& x, CheckpointMeta& meta) {
  if (!x.is_object()) return Bad(file, "\"gpt_sft\" is not an object");
  try {
    const int version = x.contains("format_version") ? x.at("format_version").get<int>() : 1;
    if (version != kFormatVersion && version != 1) {
      return Bad(file, absl::StrCat("gpt_sft.format_version ", x.at("format_version").dump(), " is not 1 or ",
                                    kFormatVersion, ", the versions this build reads"));
    }
    if (version >= 2 && !x.contains(kChecksum)) {
      return absl::DataLossError(absl::StrCat(file, ": no gpt_sft.", kChecksum, " field: the file is corrupt"));
    }
    if (x.contains("model_file")) meta.model_file = x.at("model_file").get<std::string>();
    if (x.contains("dtype")) meta.dtype = x.at("dtype").get<std::string>();
    if (x.contains("num_params")) meta.num_params = x.at("num_params").get<int64_t>();
    if (x.contains("param_checksum")) {
      const std::string hex = x.at("param_checksum").get<std::string>();
      uint64_t sum = 0;
      if (hex.size() != 16 || !absl::SimpleHexAtoi(hex, &sum)) {
        return Bad(file, absl::StrCat("gpt_sft.param_checksum \"", hex, "\" is not 16 hex digits"));
      }
      meta.param_checksum = sum;
    }
  } catch (const nlohmann::json::exception& e) {
    return Bad(file, absl::StrCat("a \"gpt_sft\" field has the wrong type: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> MetaToJson(const CheckpointMeta& meta) {
  nlohmann::ordered_json j;
  j["step"] = meta.record.step;
  j["val_loss"] = nullptr;
  if (meta.record.val_loss && std::isfinite(*meta.record.val_loss)) j["val_loss"] = *meta.record.val_loss;
  std::set<std::string> seen;
  for (const auto& [key, value] : meta.record.metrics) {
    if (key.empty() || Reserved(key) || !seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat("metric key \"", key, "\" is empty, repeated or reserved"));
    }
    j[key] = value;
  }
  j["model_config"] = nlohmann::ordered_json::parse(meta.model_config.ToJson());
  nlohmann::ordered_json x;
  x["format_version"] = kFormatVersion;
  if (meta.model_file) x["model_file"] = *meta.model_file;
  if (meta.dtype) x["dtype"] = *meta.dtype;
  if (meta.num_params) x["num_params"] = *meta.num_params;
  if (meta.param_checksum) {
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(*meta.param_checksum));
    x["param_checksum"] = hex;
  }
  j[kExtras] = x;
  j[kExtras][kChecksum] = MetaChecksum(j);
  return j.dump(2) + "\n";
}

absl::StatusOr<CheckpointMeta> MetaFromJson(absl::string_view file, absl::string_view json) {
  absl::StatusOr<base::Json> parsed = base::ParseJson(json, file);
  if (!parsed.ok()) return parsed.status();
  base::Json& j = *parsed;
  if (!j.is_object()) return Bad(file, "not a JSON object");
  // A damaged "gpt_sft" key would hide our fields, checksum included, as a stranger's.
  for (const auto& [key, value] : j.items()) {
    if (key != kExtras && value.is_object() && value.contains(kChecksum)) {
      return absl::DataLossError(absl::StrCat(file, ": the field \"", key, "\" holds ", kExtras, ".", kChecksum,
                                              ": its name is damaged and the file is corrupt"));
    }
  }
  if (j.contains(kExtras) && j[kExtras].is_object() && j[kExtras].contains(kChecksum)) {
    const base::Json& written = j[kExtras][kChecksum];
    const std::string want = MetaChecksum(j);
    if (!written.is_string() || written.get<std::string>() != want) {
      return absl::DataLossError(absl::StrCat(file, ": does not match its checksum (", want, ", written ",
                                              written.dump(), "): the file is corrupt"));
    }
  }
  CheckpointMeta meta;
  if (!j.contains("step") || !j["step"].is_number_integer()) return Bad(file, "\"step\" is missing or not an integer");
  meta.record.step = j["step"].get<int64_t>();
  if (j.contains("val_loss") && !j["val_loss"].is_null()) {
    if (!j["val_loss"].is_number()) return Bad(file, "\"val_loss\" is not a number");
    meta.record.val_loss = j["val_loss"].get<double>();
  }
  if (!j.contains("model_config") || !j["model_config"].is_object()) {
    return Bad(file, "\"model_config\" is missing or not an object");
  }
  absl::StatusOr<compiler::ModelConfig> config = compiler::ModelConfig::FromJson(j["model_config"].dump());
  if (!config.ok()) return Bad(file, config.status().message());
  meta.model_config = *config;
  for (const auto& [key, v] : j.items()) {
    if (!Reserved(key) && v.is_number()) meta.record.metrics.emplace_back(key, v.get<double>());
  }
  if (j.contains(kExtras)) {
    if (absl::Status s = ParseExtras(file, j[kExtras], meta); !s.ok()) return s;
  }
  return meta;
}

}  // namespace gpt_sft::runtime
