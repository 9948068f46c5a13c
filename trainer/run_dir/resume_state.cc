#include "trainer/run_dir/resume_state.h"

#include <filesystem>
#include <optional>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/fnv1a.h"
#include "base/json_fields.h"
#include "base/json_file.h"
#include "base/read_file.h"
#include "runtime/checkpoint/checkpoint_paths.h"
#include "runtime/checkpoint/step_directory.h"
#include "trainer/run_dir/optimizer_state_file.h"

namespace gpt_sft::trainer {
namespace {

namespace fs = std::filesystem;

constexpr char kStateFile[] = "train_state.json";
// 2: the file carries its checksum (1, without, is still read).
constexpr int kFormatVersion = 2;

std::string Exact(double v) { return absl::StrFormat("%.17g", v); }

/// What the training data is made of: the built-in switch, the repeat count and each --jsonl
/// file's name with a fingerprint of its contents, so a resume on edited data is refused even
/// when its row count stayed the same.
std::string TrainingDataShape(const data::TrainingDataOptions& d) {
  std::string shape = absl::StrCat("builtin_tasks=", d.builtin_tasks ? "true" : "false",
                                   " jsonl_repeat=", d.jsonl_repeat, " jsonl=[");
  for (size_t i = 0; i < d.jsonl.size(); ++i) {
    absl::StatusOr<std::string> bytes = base::ReadFile(d.jsonl[i]);
    absl::StrAppend(&shape, i ? ", " : "", fs::path(d.jsonl[i]).filename().string(), "#",
                    bytes.ok() ? absl::StrFormat("%016x", base::Fnv1a64(*bytes)) : "unreadable");
  }
  return shape + "]";
}

// The file's own checksum: FNV-1a 64 of the compact dump (no spaces, the fields in file order)
// of every other field, so a flipped bit that still parses is refused. Format 1 files have none.
constexpr char kChecksumField[] = "checksum";
std::string ContentChecksum(base::Json j) {
  j.erase(kChecksumField);
  return absl::StrFormat("%016x", base::Fnv1a64(j.dump()));
}

std::string ToJson(const ResumeState& r) {
  base::Json j;
  j["format_version"] = kFormatVersion;
  j["step"] = r.step;
  j["micro_batches_per_rank"] = r.micro_batches;
  j["run"] = r.run;
  j["metrics_bytes"] = r.metrics_bytes;
  base::Json shape = base::Json::object();
  for (const auto& [k, v] : r.shape) shape[k] = v;
  j["run_shape"] = shape;
  j[kChecksumField] = ContentChecksum(j);
  return j.dump(2) + "\n";
}

absl::StatusOr<ResumeState> ReadResumeState(const std::string& path) {
  absl::StatusOr<base::Json> j = base::ReadJsonFile(path);
  if (!j.ok()) return j.status();
  const bool summed = j->is_object() && !(j->contains("format_version") && (*j)["format_version"] == 1);
  if (summed) {
    if (!j->contains(kChecksumField)) {
      return absl::DataLossError(absl::StrCat(path, ": no \"", kChecksumField, "\" field: the file is corrupt"));
    }
    const base::Json& written = (*j)[kChecksumField];
    const std::string want = ContentChecksum(*j);
    if (!written.is_string() || written.get<std::string>() != want) {
      return absl::DataLossError(absl::StrCat(path, ": does not match its checksum (", want, ", written ",
                                              written.dump(), "): the file is corrupt"));
    }
  }
  ResumeState r;
  int version = 0;
  base::Json shape;
  for (absl::Status s : {base::ReadField(*j, "format_version", version, path), base::ReadField(*j, "step", r.step, path),
                         base::ReadField(*j, "micro_batches_per_rank", r.micro_batches, path),
                         base::ReadField(*j, "run", r.run, path), base::ReadField(*j, "metrics_bytes", r.metrics_bytes, path),
                         base::ReadField(*j, "run_shape", shape, path)}) {
    if (!s.ok()) return s;
  }
  if (version != kFormatVersion && version != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": format_version ", version, "; this trainer reads 1 and ", kFormatVersion));
  }
  if (!shape.is_object()) return absl::DataLossError(absl::StrCat(path, ": run_shape is not an object"));
  for (const auto& [k, v] : shape.items()) {
    if (!v.is_string()) return absl::DataLossError(absl::StrCat(path, ": run_shape \"", k, "\" is not a string"));
    r.shape.emplace_back(k, v.get<std::string>());
  }
  return r;
}

}  // namespace

RunShape RunShapeOf(const TrainerOptions& o, const compiler::ModelConfig& model, int64_t num_iterations,
                    int64_t training_rows) {
  return {
      {"model_config", model.ToJson()},
      {"device_batch_size", absl::StrCat(o.device_batch_size)},
      {"max_seq_len", absl::StrCat(o.max_seq_len)},
      {"target_examples_per_step", absl::StrCat(o.target_examples_per_step)},
      {"world_size", absl::StrCat(o.world_size)},
      {"packing", o.packing},
      {"dtype", o.dtype},
      {"unembedding_lr", Exact(o.unembedding_lr)},
      {"embedding_lr", Exact(o.embedding_lr)},
      {"matrix_lr", Exact(o.matrix_lr)},
      {"weight_decay", Exact(o.weight_decay)},
      {"init_lr_frac", Exact(o.init_lr_frac)},
      {"seed", absl::StrCat(o.seed)},
      {"training_data", TrainingDataShape(o.data)},
      {"training_rows", absl::StrCat(training_rows)},
      {"num_iterations", absl::StrCat(num_iterations)},
  };
}

absl::Status CheckSameRun(const RunShape& saved, const RunShape& now, const std::string& step_dir) {
  for (const auto& [key, value] : now) {
    std::optional<std::string> was;
    for (const auto& [k, v] : saved) {
      if (k == key) was = v;
    }
    if (!was) {
      return absl::FailedPreconditionError(absl::StrCat("--resume: ", step_dir, " does not record ", key,
                                                        " (written by another version of the trainer)"));
    }
    if (*was != value) {
      // The values that are not flags themselves say where they come from.
      const std::string origin = key == "num_iterations"  ? " (set by --max_iterations, or one epoch of the data)"
                                 : key == "world_size"    ? " (the ranks: --nproc_per_node or mpirun's -np)"
                                 : key == "training_rows" ? " (the training data)"
                                 : key == "training_data" ? " (--jsonl's files and contents, --jsonl_repeat, --builtin_tasks)"
                                 : key == "model_config"  ? " (the model --model_source/--model_tag/--step load)"
                                                          : "";
      const std::string name = origin.empty() ? "--" + key : key;
      return absl::FailedPreconditionError(absl::StrCat(
          "--resume: ", step_dir, " was trained with ", name, "=", *was, "; this run has ", name, "=", value, origin,
          ". A resumed run keeps what shapes its steps (the model, --device_batch_size, --max_seq_len, "
          "--target_examples_per_step, the ranks, --packing, --dtype, the learning rates, --seed, the data, "
          "--max_iterations); start a changed run in another --output_dir"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::ResolvedCheckpoint> SaveRunStep(const std::string& run_dir, const runtime::ParamStore& params,
                                                        const runtime::CheckpointRecord& record,
                                                        const OptimizerState& optimizer, const ResumeState& resume) {
  absl::StatusOr<std::unique_ptr<runtime::StepDirectory>> step = runtime::StepDirectory::Begin(run_dir, record.step);
  if (!step.ok()) return step.status();
  const std::string temp = (*step)->temp_dir();
  absl::StatusOr<runtime::ResolvedCheckpoint> model = runtime::SaveCheckpoint(temp, params, record);
  if (!model.ok()) return model.status();
  if (absl::Status s = WriteOptimizerStateFile(temp + "/" + OptimizerStateFileName(record.step), optimizer); !s.ok()) {
    return s;
  }
  if (absl::Status s = base::WriteFileAtomically(temp + "/" + kStateFile, ToJson(resume)); !s.ok()) return s;
  if (absl::Status s = (*step)->Publish(); !s.ok()) return s;
  return runtime::CheckpointFilesOf(run_dir, record.step);
}

absl::StatusOr<LoadedRunStep> LoadLatestRunStep(const std::string& run_dir) {
  std::error_code ec;
  fs::directory_iterator it(run_dir, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("--resume: cannot list ", run_dir, ": ", ec.message()));
  std::optional<int64_t> last;
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    if (!absl::StartsWith(name, "step_") || !fs::exists(e.path() / kStateFile, ec)) continue;
    const std::string digits = name.substr(5);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const int64_t step = std::stoll(digits);
    if (!last || step > *last) last = step;
  }
  if (!last) {
    return absl::NotFoundError(absl::StrCat("--resume: ", run_dir, " has no step to resume from (a step_<N>/ with ",
                                            kStateFile, "; --save_every=N writes one every N steps)"));
  }
  absl::StatusOr<runtime::LoadedCheckpoint> checkpoint = runtime::LoadCheckpoint(run_dir, *last);
  if (!checkpoint.ok()) return checkpoint.status();
  LoadedRunStep out{(fs::path(run_dir) / runtime::StepDirName(*last)).string(), std::move(checkpoint->params),
                    std::move(checkpoint->meta)};
  absl::StatusOr<OptimizerState> optimizer = ReadOptimizerStateFile(out.dir + "/" + OptimizerStateFileName(*last));
  if (!optimizer.ok()) return optimizer.status();
  out.optimizer = *std::move(optimizer);
  absl::StatusOr<ResumeState> resume = ReadResumeState(out.dir + "/" + kStateFile);
  if (!resume.ok()) return resume.status();
  out.resume = *std::move(resume);
  if (out.resume.step != *last || out.optimizer.steps_taken != *last) {
    return absl::DataLossError(absl::StrCat(out.dir, ": records step ", out.resume.step, " and ",
                                            out.optimizer.steps_taken, " optimizer steps; its name says ", *last));
  }
  return out;
}

absl::StatusOr<LoadedRunStep> LoadStepToResume(const std::string& run_dir, const RunShape& now) {
  absl::StatusOr<LoadedRunStep> step = LoadLatestRunStep(run_dir);
  if (!step.ok()) return step.status();
  if (absl::Status s = CheckSameRun(step->resume.shape, now, step->dir); !s.ok()) return s;
  return step;
}

}  // namespace gpt_sft::trainer
