// Implements RunSteps and the loop's JSON.
#include "trainer/step_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/split_mix64.h"
#include "artifact/artifact_file.h"
#include "nlohmann/json.hpp"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "trainer/batch_tensors.h"
#include "trainer/eval/batch_json.h"

namespace gpt_sft::trainer {

namespace {

/// The artifact and its StepConfig.
absl::Status LoadArtifact(const std::string& artifact_path, StepLoopInputs& in) {
  std::ifstream file(artifact_path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("--artifact=", artifact_path, ": cannot read it"));
  std::stringstream bytes;
  bytes << file.rdbuf();
  absl::StatusOr<artifact::Artifact> a = artifact::ParseArtifact(bytes.str(), artifact_path);
  if (!a.ok()) return absl::Status(a.status().code(), absl::StrCat("--artifact: ", a.status().message()));
  in.artifact = *std::move(a);
  absl::StatusOr<compiler::StepConfig> config = compiler::StepConfig::FromJson(in.artifact.step_config);
  if (!config.ok()) return absl::InvalidArgumentError(absl::StrCat("--artifact=", artifact_path, ": ", config.status().message()));
  in.config = *config;
  return absl::OkStatus();
}

}  // namespace

data::Batch SyntheticBatch(uint64_t seed, int B, int T, int vocab) {
  base::SplitMix64 rng(seed);
  data::Batch b = data::NewBatch(B, T);
  for (int r = 0; r < B; ++r) {
    const int split = T / 2 + r;
    for (int t = 0; t < T; ++t) {
      b.inputs[b.Offset(r, t)] = static_cast<int32_t>(rng.Next() % vocab);
      b.segment_ids[b.Offset(r, t)] = t < split ? 0 : 1;
      b.positions[b.Offset(r, t)] = t < split ? t : t - split;
      b.targets[b.Offset(r, t)] = (t % 5 == 4) ? -1 : static_cast<int32_t>(rng.Next() % vocab);
    }
  }
  b.supervised_tokens = data::CountSupervised(b);
  return b;
}

absl::StatusOr<StepLoopInputs> SyntheticStepLoopInputs(const std::string& artifact_path, uint64_t seed, int count) {
  StepLoopInputs in;
  if (absl::Status s = LoadArtifact(artifact_path, in); !s.ok()) return s;
  absl::StatusOr<runtime::ParamStore> params = runtime::ParamStore::Create(in.config.model);
  if (!params.ok()) return params.status();
  params->InitNanochat(seed);
  in.params = std::make_unique<runtime::ParamStore>(*std::move(params));
  for (int i = 0; i < std::max(count, 1); ++i) {
    const data::Batch b = SyntheticBatch(seed + i, static_cast<int>(in.config.batch_size),
                                         static_cast<int>(in.config.seq_len), in.config.model.vocab_size);
    in.batches.push_back(ToStepBatch(b, in.config.packed));
  }
  return in;
}

absl::StatusOr<StepLoopInputs> LoadStepLoopInputs(const std::string& artifact_path, const std::string& checkpoint_dir,
                                                  int64_t step, const std::string& batches_path) {
  StepLoopInputs in;
  if (absl::Status s = LoadArtifact(artifact_path, in); !s.ok()) return s;
  if (step < 0) {
    absl::StatusOr<int64_t> last = runtime::FindLastStep(checkpoint_dir);
    if (!last.ok()) return absl::Status(last.status().code(), absl::StrCat("--checkpoint_dir: ", last.status().message()));
    step = *last;
  }
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = runtime::LoadCheckpoint(checkpoint_dir, step);
  if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat("--checkpoint_dir: ", loaded.status().message()));
  in.params = std::make_unique<runtime::ParamStore>(std::move(loaded->params));
  absl::StatusOr<std::vector<data::Batch>> batches = ReadBatchesJson(batches_path);
  if (!batches.ok()) return absl::Status(batches.status().code(), absl::StrCat("--batches: ", batches.status().message()));
  for (const data::Batch& b : *batches) {
    if (b.B != in.config.batch_size || b.T != in.config.seq_len) {
      return absl::InvalidArgumentError(absl::StrCat("--batches=", batches_path, " holds [", b.B, ", ", b.T,
                                                     "] batches; the artifact was compiled for [", in.config.batch_size,
                                                     ", ", in.config.seq_len, "]"));
    }
    in.batches.push_back(ToStepBatch(b, in.config.packed));
  }
  return in;
}

absl::StatusOr<StepLoopInputs> OpenStepLoopInputs(const StepLoopSource& source) {
  if (source.checkpoint_dir.empty() != source.batches_path.empty()) {
    return absl::InvalidArgumentError("--checkpoint_dir and --batches go together (neither: synthetic inputs)");
  }
  if (source.checkpoint_dir.empty()) {
    return SyntheticStepLoopInputs(source.artifact_path, source.seed, source.synthetic_batches);
  }
  return LoadStepLoopInputs(source.artifact_path, source.checkpoint_dir, source.step, source.batches_path);
}

absl::StatusOr<StepLoopResult> RunSteps(TrainStep& step, const std::vector<StepBatch>& batches,
                                        const StepLoopOptions& options) {
  if (batches.empty()) return absl::InvalidArgumentError("no batches to train on");
  StepLoopResult result;
  size_t next = 0;
  for (int it = 0; it < options.steps; ++it) {
    const auto start = std::chrono::steady_clock::now();
    double sum = 0;
    int64_t tokens = 0;
    for (int m = 0; m < options.grad_accum_steps; ++m) {
      const StepBatch& batch = batches[next++ % batches.size()];
      absl::StatusOr<double> loss = step.MicroStep(batch);
      if (!loss.ok()) return absl::Status(loss.status().code(), absl::StrCat("step ", it, ": ", loss.status().message()));
      sum += *loss;
      tokens += batch.inputs.numel();
    }
    const double lrm = 1.0 - double(it) / options.steps;
    if (absl::Status s = step.OptimizerStep(lrm); !s.ok()) return s;
    result.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    result.losses.push_back(sum / options.grad_accum_steps);
    result.tokens_per_step = tokens;
    if (it + 1 == options.warmup_steps && options.after_warmup) options.after_warmup();
  }
  std::vector<double> timed(result.step_seconds.begin() + std::min<size_t>(options.warmup_steps, result.step_seconds.size()),
                            result.step_seconds.end());
  if (timed.empty()) {
    result.median_step_seconds = std::nan("");
  } else {
    std::sort(timed.begin(), timed.end());
    result.median_step_seconds = timed[timed.size() / 2];
    result.tokens_per_second = result.tokens_per_step / result.median_step_seconds;
  }
  return result;
}

std::string StepLoopJson(const StepLoopResult& r, const std::string& fields) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(fields);
  j["losses"] = r.losses;
  j["step_seconds"] = r.step_seconds;
  j["tokens_per_step"] = r.tokens_per_step;
  if (std::isfinite(r.median_step_seconds)) {
    j["median_step_seconds"] = r.median_step_seconds;
    j["tokens_per_second"] = r.tokens_per_second;
  }
  return j.dump(1);
}

absl::StatusOr<std::vector<double>> ReadLosses(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("losses") || !j["losses"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no \"losses\" array (a run_step or reference_steps --json output)"));
  }
  return j["losses"].get<std::vector<double>>();
}

}  // namespace gpt_sft::trainer
