// Implements the meta JSON codec.
#include "runtime/checkpoint/checkpoint_meta.h"

#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/json_file.h"

namespace gpt_sft::runtime {
namespace {

constexpr const char* kExtras = "gpt_sft";
constexpr int kFormatVersion = 1;

bool Reserved(const std::string& key) {
  return key == "step" || key == "val_loss" || key == "model_config" || key == kExtras;
}

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

absl::Status ParseExtras(absl::string_view file, const nlohmann::ordered_json& x, CheckpointMeta& meta) {
  if (!x.is_object()) return Bad(file, "\"gpt_sft\" is not an object");
  try {
    if (x.contains("format_version") && x.at("format_version").get<int>() != kFormatVersion) {
      return Bad(file, absl::StrCat("gpt_sft.format_version ", x.at("format_version").dump(), " is not ", kFormatVersion,
                                    ", the version this build reads"));
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
  return j.dump(2) + "\n";
}

absl::StatusOr<CheckpointMeta> MetaFromJson(absl::string_view file, absl::string_view json) {
  absl::StatusOr<base::Json> parsed = base::ParseJson(json, file);
  if (!parsed.ok()) return parsed.status();
  base::Json& j = *parsed;
  if (!j.is_object()) return Bad(file, "not a JSON object");
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
