// The meta JSON beside each model file, shaped like nanochat's meta_%06d.json: keys in the
// order step, val_loss, the metric keys, model_config (GPTConfig's fields in their order),
// then our own extras under one key, "gpt_sft", which nanochat's loader never reads:
//   {
//     "step": 650,
//     "val_loss": 1.0234,
//     "mmlu_acc": 0.31,
//     "arc_easy_acc": 0.42,
//     "model_config": {"sequence_len": 2048, "vocab_size": 65536, "n_layer": 20, ...},
//     "gpt_sft": {"format_version": 1, "model_file": "model_000650.safetensors",
//                 "dtype": "F32", "num_params": 560988160, "param_checksum": "0123456789abcdef"}
//   }
// param_checksum is ParamStore::Checksum() in hex (a JSON number would lose bits past 2^53):
// the load checks it, so a model file that does not belong to its meta is an error.
#ifndef GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_META_H_
#define GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_META_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/model_config.h"

namespace gpt_sft::runtime {

/// What the trainer knows at a save: the step and its evaluation figures.
struct CheckpointRecord {
  int64_t step = 0;
  std::optional<double> val_loss;  // JSON null when no validation ran (or it was not finite)
  std::vector<std::pair<std::string, double>> metrics;  // e.g. {"mmlu_acc", 0.31}, in order
};

struct CheckpointMeta {
  CheckpointRecord record;
  compiler::ModelConfig model_config;
  // Our extras; absent from nanochat's own meta files.
  std::optional<std::string> model_file;
  std::optional<std::string> dtype;
  std::optional<int64_t> num_params;
  std::optional<uint64_t> param_checksum;
};

/// indent-2 JSON in the key order above. Fails on a metric key that is empty, repeats, or
/// collides with step, val_loss, model_config or gpt_sft.
absl::StatusOr<std::string> MetaToJson(const CheckpointMeta& meta);

/// Parses a meta file's text (ours or nanochat's): "step" (an integer) and "model_config" are
/// required; every other top-level key with a numeric value is a metric, in file order, and
/// non-numeric keys nanochat adds at HEAD (user_config, ...) are ignored. Errors name `file`.
absl::StatusOr<CheckpointMeta> MetaFromJson(absl::string_view file, absl::string_view json);

}  // namespace gpt_sft::runtime

#endif  // GPT_SFT_RUNTIME_CHECKPOINT_CHECKPOINT_META_H_
