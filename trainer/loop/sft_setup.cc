#include "trainer/loop/sft_setup.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/runfiles.h"
#include "data/pipeline/pad_token.h"
#include "data/pipeline/task_source.h"
#include "runtime/checkpoint/checkpoint.h"
#include "trainer/config/demo_setup.h"
#include "trainer/config/init_from.h"

namespace gpt_sft::trainer {
namespace {

/// Whether any of the first `batches` batches of a one-rank loader over `source` holds a
/// supervised target (it stops at the first that does).
absl::StatusOr<bool> AnySupervisedTargetAhead(const data::ConversationSource& source, data::LoaderOptions options,
                                              int64_t batches) {
  options.rank = 0;
  options.world_size = 1;
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> loader = data::BatchLoader::Create(&source, options);
  if (!loader.ok()) return loader.status();
  for (int64_t i = 0; i < batches; ++i) {
    absl::StatusOr<data::Batch> batch = (*loader)->Next();
    if (!batch.ok()) return batch.status();
    if (data::CountSupervised(*batch) > 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<SftSetup> LoadSftSetup(const TrainerOptions& o, std::ostream& log) {
  SftSetup s;
  if (o.base_dir.empty()) {
    absl::StatusOr<std::string> dir = runtime::NanochatBaseDir();
    if (!dir.ok()) return dir.status();
    s.base_dir = *dir;
  } else {
    s.base_dir = o.base_dir;
  }
  // --init_from: a nanochat checkpoint and its tokenizer.pkl instead of <base_dir>'s (init_from.h).
  std::optional<InitSource> init;
  if (!o.init_from.empty()) {
    absl::StatusOr<InitSource> loaded_init = LoadInitSource(o.init_from, o.init_tokenizer);
    if (!loaded_init.ok()) return loaded_init.status();
    init.emplace(*std::move(loaded_init));
  }
  const std::string tokenizer_path = init ? init->tokenizer_path : TokenizerPath(s.base_dir);
  absl::StatusOr<data::Tokenizer> tok = init ? std::move(init->tokenizer) : data::Tokenizer::Load(tokenizer_path);
  if (!tok.ok()) {
    return absl::Status(tok.status().code(),
                        absl::StrCat("--base_dir=", s.base_dir, ": no usable tokenizer (", tok.status().message(),
                                     "); run `./bazelw run //trainer` with no flags once to set up the demo, or "
                                     "train one with //data:tok_train --output=",
                                     tokenizer_path));
  }
  s.tokenizer = std::make_shared<const data::Tokenizer>(*std::move(tok));
  const runtime::CheckpointSource source =
      o.model_source == "mid" ? runtime::CheckpointSource::kMid : runtime::CheckpointSource::kBase;
  absl::StatusOr<runtime::ResolvedCheckpoint> where =
      init ? init->where : runtime::ResolveCheckpoint(s.base_dir, source, o.model_tag, o.step);
  if (!where.ok()) {
    return absl::Status(where.status().code(), absl::StrCat("--model_source=", o.model_source, ": ",
                                                            where.status().message()));
  }
  s.source = *where;
  log << "Loading the " << (init ? "nanochat" : o.model_source) << " model from " << s.source.model_path << std::endl;
  absl::StatusOr<runtime::LoadedCheckpoint> loaded = init ? std::move(init->checkpoint) : runtime::LoadCheckpoint(s.source);
  if (!loaded.ok()) return loaded.status();
  s.params = std::make_unique<runtime::ParamStore>(std::move(loaded->params));
  if (s.params->config().vocab_size != s.tokenizer->vocab_size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the tokenizer at ", tokenizer_path, " has ", s.tokenizer->vocab_size(), " tokens but the model at ",
        s.source.model_path, " has vocab_size ", s.params->config().vocab_size, "; they must match"));
  }
  absl::StatusOr<std::string> words = base::FindRunfile("external/wordlist/words");
  if (!words.ok()) return words.status();
  s.words_path = *words;
  // The user's --jsonl files and/or the built-in tasks; --val_jsonl or the built-in tasks'
  // held-out split (their test seeds, synthetic problems from seed + 1).
  data::TrainingDataOptions data_options = o.data;
  data_options.words_path = *words;
  data_options.seed = o.seed;
  absl::StatusOr<data::TrainingData> data = data::BuildTrainingData(data_options);
  if (!data.ok()) return data.status();
  s.train = data->train;
  s.val = data->val;
  log << data->description;
  return s;
}

compiler::StepConfig StepConfigFor(const TrainerOptions& o, const compiler::ModelConfig& model) {
  compiler::StepConfig c;
  c.model = model;
  c.batch_size = o.device_batch_size;
  c.seq_len = o.max_seq_len;
  c.packed = o.packing == "bestfit";
  c.grad_accum_steps = o.GradAccumSteps();
  c.dp_world_size = o.world_size;
  // TrainerOptions::Validate admitted only float32 and bfloat16.
  c.dtype = o.dtype == "bfloat16" ? compiler::ElementType::kBF16 : compiler::ElementType::kF32;
  c.optimizer.unembedding_lr = o.unembedding_lr;
  c.optimizer.embedding_lr = o.embedding_lr;
  c.optimizer.matrix_lr = o.matrix_lr;
  c.optimizer.weight_decay = o.weight_decay;
  c.optimizer.init_lr_frac = o.init_lr_frac;
  return c;
}

data::LoaderOptions LoaderOptionsFor(const TrainerOptions& o, const data::Tokenizer& tok) {
  data::LoaderOptions l;
  l.B = o.device_batch_size;
  l.T = o.max_seq_len;
  l.packing = o.packing == "bestfit" ? data::Packing::kBestFit : data::Packing::kPad;
  l.rank = o.rank;
  l.world_size = o.world_size;
  l.pad_id = data::PadTokenId(l.packing, tok);
  return l;
}

absl::Status CheckSequencesHoldTargets(const TrainerOptions& o, const SftSetup& setup, int64_t num_iterations,
                                       int eval_steps_per_rank) {
  const data::LoaderOptions options = LoaderOptionsFor(o, *setup.tokenizer);
  const int64_t accum = o.target_examples_per_step / o.device_batch_size;
  const int64_t first_steps = std::min<int64_t>(num_iterations - 1, 64);
  const struct {
    std::string what;
    std::shared_ptr<const data::TaskMixture> rows;
    int64_t batches;
  } checks[] = {{absl::StrCat("the first ", first_steps, " training step(s)"), setup.train, first_steps * accum},
                {"the validation batches", setup.val, int64_t{eval_steps_per_rank} * o.world_size}};
  for (const auto& check : checks) {
    data::TaskSource source(check.rows, setup.tokenizer, 4 * (o.max_seq_len + 1));
    absl::StatusOr<bool> any = AnySupervisedTargetAhead(source, options, check.batches);
    if (!any.ok()) return any.status();
    if (*any) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_seq_len=", o.max_seq_len, " holds no supervised target: every conversation of ", check.what, " (",
        check.batches, " batch(es) of ", o.device_batch_size, " rows) is cut before its first assistant token; "
        "give a longer --max_seq_len (nanochat's is 2048)"));
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::trainer
