#include "trainer/validation/trainer_outputs.h"

#include <fstream>

#include "base/json_fields.h"

namespace gpt_sft::trainer::validation {

using base::Json;
using base::ReadField;
using base::ReadOptionalField;
using base::WriteOptionalField;

namespace {

absl::StatusOr<Json> ParseObject(const std::string& text, const std::string& where) {
  Json j = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(where + ": not valid JSON");
  if (!j.is_object()) return absl::DataLossError(where + ": not a JSON object");
  return j;
}

absl::Status ReadShapes(const Json& j, std::vector<BatchShape>& out, const std::string& where) {
  out.clear();
  if (!j.contains("batch_shapes") || j["batch_shapes"].is_null()) return absl::OkStatus();
  const Json& shapes = j["batch_shapes"];
  if (!shapes.is_array()) return absl::DataLossError(where + ": field \"batch_shapes\" is not a list");
  for (const Json& shape : shapes) {
    if (!shape.is_array() || shape.size() != 2 || !shape[0].is_number_integer() || !shape[1].is_number_integer()) {
      return absl::DataLossError(absl::StrCat(where, ": field \"batch_shapes\": ", shape.dump(), " is not [B, T]"));
    }
    out.push_back({shape[0].get<int64_t>(), shape[1].get<int64_t>()});
  }
  return absl::OkStatus();
}

}  // namespace

bool StepMetrics::operator==(const StepMetrics& o) const {
  return step == o.step && loss == o.loss && loss_mean == o.loss_mean && step_seconds == o.step_seconds &&
         tokens_per_second == o.tokens_per_second && supervised_tokens_per_second == o.supervised_tokens_per_second &&
         tokens == o.tokens && supervised_tokens == o.supervised_tokens && peak_rss_bytes == o.peak_rss_bytes &&
         batch_shapes == o.batch_shapes && world_size == o.world_size && mode == o.mode &&
         recompilations == o.recompilations;
}

bool CompileSummary::operator==(const CompileSummary& o) const {
  return cache_hit == o.cache_hit && seconds == o.seconds && compile_seconds == o.compile_seconds && key == o.key &&
         arena_bytes == o.arena_bytes;
}

bool CheckpointSummary::operator==(const CheckpointSummary& o) const {
  return model_path == o.model_path && step == o.step && verified == o.verified &&
         reload_bit_exact == o.reload_bit_exact && mismatch == o.mismatch &&
         val_loss_saved == o.val_loss_saved && val_loss_reloaded == o.val_loss_reloaded;
}

bool RunSummary::operator==(const RunSummary& o) const {
  return mode == o.mode && world_size == o.world_size && backend == o.backend && device == o.device &&
         num_threads == o.num_threads &&
         batch_shape == o.batch_shape && packing == o.packing && steps_trained == o.steps_trained &&
         first_loss == o.first_loss && final_loss == o.final_loss && final_loss_mean == o.final_loss_mean &&
         val_loss == o.val_loss && compile == o.compile && recompilations_training == o.recompilations_training &&
         recompilations_evaluation == o.recompilations_evaluation && peak_rss_bytes == o.peak_rss_bytes &&
         tokens_per_second == o.tokens_per_second && seconds_per_step == o.seconds_per_step &&
         checkpoint == o.checkpoint;
}

absl::StatusOr<StepMetrics> StepMetricsFromJson(const Json& j, const std::string& where) {
  StepMetrics m;
  for (absl::Status s : {ReadField(j, "step", m.step, where), ReadField(j, "loss", m.loss, where),
                         ReadField(j, "step_seconds", m.step_seconds, where),
                         ReadField(j, "tokens_per_second", m.tokens_per_second, where),
                         ReadField(j, "supervised_tokens_per_second", m.supervised_tokens_per_second, where),
                         ReadField(j, "tokens", m.tokens, where),
                         ReadField(j, "supervised_tokens", m.supervised_tokens, where),
                         ReadField(j, "peak_rss_bytes", m.peak_rss_bytes, where),
                         ReadOptionalField(j, "loss_mean", m.loss_mean, where),
                         ReadOptionalField(j, "world_size", m.world_size, where),
                         ReadOptionalField(j, "mode", m.mode, where),
                         ReadOptionalField(j, "recompilations", m.recompilations, where),
                         ReadShapes(j, m.batch_shapes, where)}) {
    if (!s.ok()) return s;
  }
  return m;
}

absl::StatusOr<StepMetrics> ParseStepMetrics(const std::string& line, const std::string& where) {
  absl::StatusOr<Json> j = ParseObject(line, where);
  if (!j.ok()) return j.status();
  return StepMetricsFromJson(*j, where);
}

absl::StatusOr<std::vector<StepMetrics>> ReadMetricsJsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::vector<StepMetrics> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    absl::StatusOr<StepMetrics> m = ParseStepMetrics(line, absl::StrCat(path, ":", number));
    if (!m.ok()) return m.status();
    records.push_back(*std::move(m));
  }
  return records;
}

absl::StatusOr<RunSummary> RunSummaryFromJson(const Json& j, const std::string& where) {
  RunSummary r;
  std::optional<std::vector<int64_t>> shape;
  for (absl::Status s : {ReadField(j, "mode", r.mode, where), ReadField(j, "world_size", r.world_size, where),
                         ReadOptionalField(j, "backend", r.backend, where),
                         ReadOptionalField(j, "device", r.device, where),
                         ReadOptionalField(j, "num_threads", r.num_threads, where),
                         ReadOptionalField(j, "batch_shape", shape, where),
                         ReadOptionalField(j, "packing", r.packing, where),
                         ReadField(j, "steps_trained", r.steps_trained, where),
                         ReadOptionalField(j, "first_loss", r.first_loss, where),
                         ReadOptionalField(j, "final_loss", r.final_loss, where),
                         ReadOptionalField(j, "final_loss_mean", r.final_loss_mean, where),
                         ReadOptionalField(j, "val_loss", r.val_loss, where),
                         ReadOptionalField(j, "recompilations_training", r.recompilations_training, where),
                         ReadOptionalField(j, "recompilations_evaluation", r.recompilations_evaluation, where),
                         ReadOptionalField(j, "peak_rss_bytes", r.peak_rss_bytes, where),
                         ReadOptionalField(j, "tokens_per_second", r.tokens_per_second, where),
                         ReadOptionalField(j, "seconds_per_step", r.seconds_per_step, where)}) {
    if (!s.ok()) return s;
  }
  if (shape) {
    if (shape->size() != 2) return absl::DataLossError(where + ": field \"batch_shape\" is not [B, T]");
    r.batch_shape = BatchShape{(*shape)[0], (*shape)[1]};
  }
  if (j.contains("compile") && !j["compile"].is_null()) {
    const Json& c = j["compile"];
    const std::string at = where + " compile";
    CompileSummary compile;
    for (absl::Status s : {ReadField(c, "cache_hit", compile.cache_hit, at), ReadField(c, "seconds", compile.seconds, at),
                           ReadField(c, "compile_seconds", compile.compile_seconds, at),
                           ReadField(c, "key", compile.key, at), ReadField(c, "arena_bytes", compile.arena_bytes, at)}) {
      if (!s.ok()) return s;
    }
    r.compile = compile;
  }
  if (j.contains("checkpoint") && !j["checkpoint"].is_null()) {
    const Json& c = j["checkpoint"];
    const std::string at = where + " checkpoint";
    CheckpointSummary checkpoint;
    for (absl::Status s : {ReadField(c, "model_path", checkpoint.model_path, at),
                           ReadField(c, "step", checkpoint.step, at),
                           ReadOptionalField(c, "verified", checkpoint.verified, at),
                           ReadField(c, "reload_bit_exact", checkpoint.reload_bit_exact, at),
                           ReadOptionalField(c, "val_loss_saved", checkpoint.val_loss_saved, at),
                           ReadOptionalField(c, "val_loss_reloaded", checkpoint.val_loss_reloaded, at)}) {
      if (!s.ok()) return s;
    }
    if (c.contains("mismatch") && c["mismatch"].is_string()) checkpoint.mismatch = c["mismatch"].get<std::string>();
    r.checkpoint = checkpoint;
  }
  return r;
}

absl::StatusOr<RunSummary> ParseRunSummary(const std::string& text, const std::string& where) {
  absl::StatusOr<Json> j = ParseObject(text, where);
  if (!j.ok()) return j.status();
  return RunSummaryFromJson(*j, where);
}

absl::StatusOr<RunSummary> ReadRunSummary(const std::string& path) {
  absl::StatusOr<Json> j = base::ReadJsonFile(path);
  if (!j.ok()) return j.status();
  if (!j->is_object()) return absl::DataLossError(path + ": not a JSON object");
  return RunSummaryFromJson(*j, path);
}

Json ToJson(const StepMetrics& m) {
  Json j;
  j["step"] = m.step;
  j["loss"] = m.loss;
  WriteOptionalField(j, "loss_mean", m.loss_mean);
  j["step_seconds"] = m.step_seconds;
  j["tokens"] = m.tokens;
  j["supervised_tokens"] = m.supervised_tokens;
  j["tokens_per_second"] = m.tokens_per_second;
  j["supervised_tokens_per_second"] = m.supervised_tokens_per_second;
  j["peak_rss_bytes"] = m.peak_rss_bytes;
  Json shapes = Json::array();
  for (const BatchShape& s : m.batch_shapes) shapes.push_back({s[0], s[1]});
  j["batch_shapes"] = shapes;
  WriteOptionalField(j, "world_size", m.world_size);
  WriteOptionalField(j, "mode", m.mode);
  WriteOptionalField(j, "recompilations", m.recompilations);
  return j;
}

Json ToJson(const RunSummary& r) {
  Json j;
  j["mode"] = r.mode;
  j["world_size"] = r.world_size;
  WriteOptionalField(j, "backend", r.backend);
  WriteOptionalField(j, "device", r.device);
  WriteOptionalField(j, "num_threads", r.num_threads);
  if (r.batch_shape) {
    j["batch_shape"] = {(*r.batch_shape)[0], (*r.batch_shape)[1]};
  } else {
    j["batch_shape"] = nullptr;
  }
  WriteOptionalField(j, "packing", r.packing);
  j["steps_trained"] = r.steps_trained;
  WriteOptionalField(j, "first_loss", r.first_loss);
  WriteOptionalField(j, "final_loss", r.final_loss);
  WriteOptionalField(j, "final_loss_mean", r.final_loss_mean);
  WriteOptionalField(j, "val_loss", r.val_loss);
  if (r.compile) {
    j["compile"] = {{"cache_hit", r.compile->cache_hit},
                    {"seconds", r.compile->seconds},
                    {"compile_seconds", r.compile->compile_seconds},
                    {"key", r.compile->key},
                    {"arena_bytes", r.compile->arena_bytes}};
  } else {
    j["compile"] = nullptr;
  }
  WriteOptionalField(j, "recompilations_training", r.recompilations_training);
  WriteOptionalField(j, "recompilations_evaluation", r.recompilations_evaluation);
  WriteOptionalField(j, "peak_rss_bytes", r.peak_rss_bytes);
  WriteOptionalField(j, "tokens_per_second", r.tokens_per_second);
  WriteOptionalField(j, "seconds_per_step", r.seconds_per_step);
  if (r.checkpoint) {
    Json c;
    c["model_path"] = r.checkpoint->model_path;
    c["step"] = r.checkpoint->step;
    WriteOptionalField(c, "verified", r.checkpoint->verified);
    c["reload_bit_exact"] = r.checkpoint->reload_bit_exact;
    c["mismatch"] = r.checkpoint->mismatch;
    WriteOptionalField(c, "val_loss_saved", r.checkpoint->val_loss_saved);
    WriteOptionalField(c, "val_loss_reloaded", r.checkpoint->val_loss_reloaded);
    j["checkpoint"] = c;
  } else {
    j["checkpoint"] = nullptr;
  }
  return j;
}

}  // namespace gpt_sft::trainer::validation
