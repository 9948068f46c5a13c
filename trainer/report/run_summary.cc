#include "trainer/report/run_summary.h"

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"

namespace gpt_sft::trainer {
namespace {

nlohmann::ordered_json ToJson(const RunSummary& s) {
  nlohmann::ordered_json j;
  j["mode"] = s.mode;
  j["device"] = s.device;
  j["world_size"] = s.world_size;
  j["backend"] = s.backend;
  j["num_threads"] = s.num_threads;
  j["batch_shape"] = {s.batch_size, s.seq_len};
  j["packing"] = s.packing;
  j["steps_trained"] = s.steps_trained;
  j["first_loss"] = s.first_loss;
  j["final_loss"] = s.final_loss;
  j["final_loss_mean"] = s.final_loss_mean;
  j["val_loss"] = s.val_loss ? nlohmann::ordered_json(*s.val_loss) : nlohmann::ordered_json(nullptr);
  if (s.compile) {
    j["compile"] = {{"cache_hit", s.compile->cache_hit},
                    {"seconds", s.compile->seconds},
                    {"compile_seconds", s.compile->compile_seconds},
                    {"key", s.compile->key},
                    {"arena_bytes", s.compile->arena_bytes}};
  }
  j["recompilations_training"] = s.recompilations_training;
  j["recompilations_evaluation"] = s.recompilations_evaluation;
  j["peak_rss_bytes"] = s.peak_rss_bytes;
  j["tokens_per_second"] = s.tokens_per_second;
  j["supervised_tokens_per_second"] = s.supervised_tokens_per_second;
  j["seconds_per_step"] = s.seconds_per_step;
  j["measured_steps"] = s.measured_steps;
  const CheckpointSummary& c = s.checkpoint;
  j["checkpoint"] = {{"model_path", c.model_path},         {"step", c.step},
                     {"verified", c.verified},             {"reload_bit_exact", c.reload_bit_exact},
                     {"mismatch", c.mismatch},             {"val_loss_saved", c.val_loss_saved},
                     {"val_loss_reloaded", c.val_loss_reloaded}};
  return j;
}

}  // namespace

absl::Status WriteRunSummary(const RunSummary& summary, const std::string& path) {
  return base::WriteFileAtomically(path, ToJson(summary).dump(2) + "\n");
}

}  // namespace gpt_sft::trainer
