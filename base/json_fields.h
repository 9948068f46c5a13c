// Reading and writing the fields of a JSON object with nlohmann::json, where a missing or
// null field is a std::optional without value and a wrong type is an error naming where the
// object came from and the field. JsonT is base::Json (keys in file order) or nlohmann::json.
#ifndef GPT_SFT_BASE_JSON_FIELDS_H_
#define GPT_SFT_BASE_JSON_FIELDS_H_

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::base {

/// `j[key]` into `out`; DataLoss "<where>: no field \"key\"" or "...: field \"key\": <why>".
template <typename T, typename JsonT>
absl::Status ReadField(const JsonT& j, const char* key, T& out, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) {
    return absl::DataLossError(absl::StrCat(where, ": no field \"", key, "\""));
  }
  try {
    out = j.at(key).template get<T>();
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat(where, ": field \"", key, "\": ", e.what()));
  }
  return absl::OkStatus();
}

/// As ReadField, but a missing or null field leaves `out` empty instead of failing.
template <typename T, typename JsonT>
absl::Status ReadOptionalField(const JsonT& j, const char* key, std::optional<T>& out, const std::string& where) {
  out.reset();
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return absl::OkStatus();
  T value{};
  if (absl::Status s = ReadField(j, key, value, where); !s.ok()) return s;
  out = std::move(value);
  return absl::OkStatus();
}

/// `j[key] = value`, or null when `value` is empty (or a non-finite double, which JSON lacks).
template <typename T, typename JsonT>
void WriteOptionalField(JsonT& j, const char* key, const std::optional<T>& value) {
  if (!value.has_value()) {
    j[key] = nullptr;
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) {
      j[key] = nullptr;
      return;
    }
  }
  j[key] = *value;
}

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_JSON_FIELDS_H_
