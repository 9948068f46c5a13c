#include "trainer/config/trainer_options.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

absl::Status Positive(const char* flag, int64_t value) {
  if (value > 0) return absl::OkStatus();
  return Invalid(absl::StrCat("--", flag, "=", value, " must be positive"));
}

absl::Status NonNegative(const char* flag, double value) {
  if (value >= 0) return absl::OkStatus();
  return Invalid(absl::StrCat("--", flag, "=", value, " must be >= 0"));
}

}  // namespace

absl::Status ValidateOptions(const TrainerOptions& o) {
  if (o.max_iterations < -1) {
    return Invalid(absl::StrCat("--max_iterations=", o.max_iterations, " must be -1 (one epoch) or >= 2"));
  }
  if (o.max_iterations == 0 || o.max_iterations == 1) {
    return Invalid(absl::StrCat("--max_iterations=", o.max_iterations,
                                " takes no optimizer step: the last iteration only evaluates (as nanochat's "
                                "chat_sft does); ask for at least 2"));
  }
  if (o.model_source != "base" && o.model_source != "mid") {
    return Invalid("--model_source=" + o.model_source + " is not one of: base, mid");
  }
  if (o.model_tag && o.model_tag->empty()) return Invalid("--model_tag is empty; omit it for the largest depth");
  auto indexed = [&](const std::string& driver) {
    const size_t n = driver.size() + 1;
    return o.device.rfind(driver + ":", 0) == 0 && o.device.size() > n &&
           o.device.find_first_not_of("0123456789", n) == std::string::npos;
  };
  if (o.device != "cpu" && o.device != "opencl" && o.device != "cuda" && !indexed("opencl") && !indexed("cuda")) {
    return Invalid("--device=" + o.device + " is not one of: cpu, opencl, opencl:<n>, cuda, cuda:<n>");
  }
  if (!o.compile && o.device != "cpu") {
    return Invalid("--device=" + o.device + " runs the compiled step; --compile=false runs the interpreter on the host");
  }
  if (!o.init_tokenizer.empty() && o.init_from.empty()) {
    return Invalid("--init_tokenizer=" + o.init_tokenizer + " names the tokenizer of --init_from, which is not given");
  }
  if (!o.init_from.empty() && (o.model_tag || o.step)) {
    return Invalid("--init_from=" + o.init_from + " names the checkpoint itself; drop --model_tag and --step");
  }
  if (o.step && *o.step < 0) return Invalid(absl::StrCat("--step=", *o.step, " must be >= 0; omit it for the latest"));
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"device_batch_size", o.device_batch_size},
                                    {"max_seq_len", o.max_seq_len},
                                    {"target_examples_per_step", o.target_examples_per_step},
                                    {"eval_every", o.eval_every},
                                    {"eval_steps", o.eval_steps},
                                    {"eval_metrics_every", o.eval_metrics_every},
                                    {"eval_metrics_max_problems", o.eval_metrics_max_problems},
                                    {"nproc_per_node", o.nproc_per_node},
                                    {"world_size", o.world_size}}) {
    if (absl::Status s = Positive(flag, value); !s.ok()) return s;
  }
  for (const auto& [flag, value] : {std::pair<const char*, double>{"unembedding_lr", o.unembedding_lr},
                                    {"embedding_lr", o.embedding_lr},
                                    {"matrix_lr", o.matrix_lr},
                                    {"weight_decay", o.weight_decay},
                                    {"init_lr_frac", o.init_lr_frac},
                                    {"num_threads", double(o.num_threads)}}) {
    if (absl::Status s = NonNegative(flag, value); !s.ok()) return s;
  }
  const int64_t examples_per_micro_step = int64_t{o.device_batch_size} * o.world_size;
  if (o.target_examples_per_step % examples_per_micro_step != 0) {
    return Invalid(absl::StrCat("--target_examples_per_step=", o.target_examples_per_step,
                                " is not a multiple of --device_batch_size=", o.device_batch_size, " x ", o.world_size,
                                " rank(s) = ", examples_per_micro_step,
                                "; gradient accumulation needs a whole number of micro-steps"));
  }
  // bfloat16 is nanochat's autocast numerics (bf16 values rounded into f32 tensors), not bf16
  // storage: it costs a little time over float32 and saves no memory yet. float64 steps exist
  // in the compiler, but the ParamStore holds float32.
  if (o.dtype != "float32" && o.dtype != "bfloat16") {
    return Invalid("--dtype=" + o.dtype + " is not supported; allowed: float32, bfloat16");
  }
  if (o.packing != "pad" && o.packing != "bestfit") {
    return Invalid("--packing=" + o.packing + " is not one of: pad (one conversation per row), bestfit (packed rows)");
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    return Invalid(absl::StrCat("--rank=", o.rank, " must be in [0, world_size=", o.world_size, ")"));
  }
  if (!(o.collective_timeout_s > 0)) {
    return Invalid(absl::StrCat("--collective_timeout_s=", o.collective_timeout_s, " must be > 0"));
  }
  if (o.save_every < 0) {
    return Invalid(absl::StrCat("--save_every=", o.save_every, " must be >= 0 (0: save at the end only)"));
  }
  if (o.max_seq_len > 65536) return Invalid(absl::StrCat("--max_seq_len=", o.max_seq_len, " exceeds 65536"));
  // The data files are named and readable (their lines are checked when read, still
  // before training starts).
  if (absl::Status s = data::ValidateTrainingDataFlags(o.data); !s.ok()) return s;
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
