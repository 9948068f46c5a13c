#include "trainer/metrics_log.h"

#include <nlohmann/json.hpp>

namespace gpt_sft::trainer {

absl::StatusOr<std::unique_ptr<MetricsLog>> MetricsLog::Open(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) return absl::UnavailableError("cannot create the metrics file " + path);
  return std::unique_ptr<MetricsLog>(new MetricsLog(path, std::move(out)));
}

absl::Status MetricsLog::Append(const StepRecord& r) {
  nlohmann::ordered_json j;
  j["run"] = r.run;
  j["step"] = r.step;
  j["mode"] = r.mode;
  j["world_size"] = r.world_size;
  j["loss"] = r.loss;
  j["loss_mean"] = r.loss_mean;
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& [b, t] : r.batch_shapes) shapes.push_back({b, t});
  j["batch_shapes"] = shapes;
  j["recompilations"] = r.recompilations;
  j["lr_multiplier"] = r.lr_multiplier;
  j["tokens"] = r.tokens;
  j["supervised_tokens"] = r.supervised_tokens;
  j["padding_fraction"] = r.padding_fraction;
  j["step_seconds"] = r.step_seconds;
  j["tokens_per_second"] = r.tokens_per_second;
  j["supervised_tokens_per_second"] = r.supervised_tokens_per_second;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  out_ << j.dump() << "\n";
  out_.flush();
  if (!out_) return absl::UnavailableError("cannot write the metrics file " + path_);
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
