#include "trainer/eval/batch_json.h"

#include <climits>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace gpt_sft::trainer {
namespace {

// rows[b][t] -> out[b * T + t]; every row must hold T ints.
absl::Status ReadRows(absl::string_view where, const nlohmann::json& object, const char* key, int B, int T,
                      std::vector<int32_t>* out) {
  auto it = object.find(key);
  if (it == object.end()) return absl::InvalidArgumentError(absl::StrCat(where, ": no \"", key, "\""));
  if (!it->is_array() || static_cast<int>(it->size()) != B) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"", key, "\" must be ", B, " rows"));
  }
  out->clear();
  out->reserve(static_cast<size_t>(B) * T);
  for (int b = 0; b < B; ++b) {
    const nlohmann::json& row = (*it)[b];
    if (!row.is_array() || static_cast<int>(row.size()) != T) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": \"", key, "\" row ", b, " must hold ", T, " values"));
    }
    for (const nlohmann::json& v : row) {
      if (!v.is_number_integer()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": \"", key, "\" row ", b, " holds a non-integer"));
      }
      out->push_back(v.get<int32_t>());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<data::Batch> BatchFromJson(absl::string_view where, absl::string_view json_line) {
  nlohmann::json object = nlohmann::json::parse(json_line.begin(), json_line.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": not a JSON object"));
  }
  auto shape = object.find("inputs_shape");
  if (shape == object.end() || !shape->is_array() || shape->size() != 2 || !(*shape)[0].is_number_integer() ||
      !(*shape)[1].is_number_integer() || (*shape)[0].get<int64_t>() <= 0 || (*shape)[1].get<int64_t>() <= 0 ||
      (*shape)[0].get<int64_t>() > INT32_MAX || (*shape)[1].get<int64_t>() > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"inputs_shape\" must be [B, T] with B, T > 0"));
  }
  data::Batch batch = data::NewBatch((*shape)[0].get<int>(), (*shape)[1].get<int>());
  for (const auto& [key, out] : {std::pair<const char*, std::vector<int32_t>*>{"inputs", &batch.inputs},
                                 {"targets", &batch.targets},
                                 {"segment_ids", &batch.segment_ids},
                                 {"positions", &batch.positions}}) {
    if (absl::Status s = ReadRows(where, object, key, batch.B, batch.T, out); !s.ok()) return s;
  }
  batch.supervised_tokens = data::CountSupervised(batch);
  if (absl::Status s = data::ValidateBatch(batch); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
  }
  return batch;
}

absl::StatusOr<std::vector<data::Batch>> ReadBatchesJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read batches file ", path));
  std::vector<data::Batch> batches;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    absl::StatusOr<data::Batch> batch = BatchFromJson(absl::StrCat(path, ":", number), line);
    if (!batch.ok()) return batch.status();
    batches.push_back(*std::move(batch));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  if (batches.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " holds no batch"));
  return batches;
}

}  // namespace gpt_sft::trainer
