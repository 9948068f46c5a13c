// //data:dump_batch: renders the first N batches of the SFT task mixture and shows what
// the model will see: shapes, supervised tokens, padding, one decoded row with its mask.
// --json prints one JSON object per batch (inputs, targets, segment_ids, positions, ...)
// so other tools and tests can replay exactly that batch. The data flags are the
// trainer's (--jsonl, --jsonl_repeat, --builtin_tasks, --val_jsonl, --seed; see
// data/pipeline/training_data.h), so with the trainer's flags it shows the trainer's
// batches; --split=val shows the validation batches.
//
//   ./bazelw run //data:dump_batch -- --tokenizer=tok.bpe --jsonl=mine.jsonl --builtin_tasks=false
//   bazel-bin/data/dump_batch ...   (the same, started directly: runfiles are found either way)
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/atomic_file.h"
#include "base/command_line.h"
#include "base/runfiles.h"
#include "data/collate/loader.h"
#include "data/pipeline/pad_token.h"
#include "data/pipeline/training_data.h"
#include "data/pipeline/task_source.h"
#include "data/tools/user_path.h"

ABSL_FLAG(std::string, tokenizer, "", "tokenizer file (data/tokenizer/FORMAT.md); empty: train one on --train_text");
ABSL_FLAG(std::string, train_text, "",
          "comma-separated text files to train a tokenizer on when --tokenizer is empty; empty: the machine's "
          "English prose (Debian's common licenses) and word list, bundled as runfiles");
ABSL_FLAG(int, vocab_size, 8192, "vocabulary size when training a tokenizer");
ABSL_FLAG(std::string, words, "", "word list for the spelling tasks; empty: Debian's, bundled as runfiles");
ABSL_FLAG(std::string, jsonl, "",
          "comma-separated files of your conversations (one JSON array of {role, content} messages per line; "
          "an optional first system message; assistant content a string or a list of text/python/python_output "
          "parts), trained on");
ABSL_FLAG(int, jsonl_repeat, 1, "each --jsonl file enters the training mixture this many times");
ABSL_FLAG(bool, builtin_tasks, true, "the built-in tasks (spelling, synthetic multiple choice) in the training mixture too");
ABSL_FLAG(std::string, val_jsonl, "",
          "comma-separated held-out conversation files: the validation data (--split=val); empty: the built-in "
          "tasks' held-out split");
ABSL_FLAG(std::string, split, "train", "train (the training mixture) or val (the validation data)");
ABSL_FLAG(int64_t, seed, 42, "the synthetic tasks' seed (the trainer's --seed)");
ABSL_FLAG(std::string, mc_jsonl, "", "comma-separated multiple-choice JSONL files to add to the training mixture");
ABSL_FLAG(int64_t, examples_per_task, 2000, "examples of each built-in task");
ABSL_FLAG(int, device_batch_size, 4, "B: rows per batch");
ABSL_FLAG(int, max_seq_len, 2048, "T: positions per row");
ABSL_FLAG(std::string, packing, "pad", "pad (one conversation per row) or bestfit (packed rows)");
ABSL_FLAG(int, rank, 0, "this rank (examples rank, rank+world, ...)");
ABSL_FLAG(int, world_size, 1, "number of ranks");
ABSL_FLAG(int, num_batches, 3, "batches to render");
ABSL_FLAG(bool, json, false, "one JSON object per batch instead of the human summary");
ABSL_FLAG(std::string, output, "", "write to this file (atomically) instead of stdout");

namespace gpt_sft::data {
namespace {

// Runfiles of the bundled defaults (found by base::FindRunfile under bazel run, bazel test
// or started directly from bazel-bin).
constexpr char kBundledWords[] = "external/wordlist/words";
const std::vector<std::string> kBundledText = {"external/english_text/GPL-3", "external/english_text/Apache-2.0",
                                               kBundledWords};

std::vector<std::string> Paths(const std::string& flag) { return UserPaths(flag); }

absl::StatusOr<Tokenizer> GetTokenizer() {
  if (!absl::GetFlag(FLAGS_tokenizer).empty()) return Tokenizer::Load(UserPath(absl::GetFlag(FLAGS_tokenizer)));
  std::vector<std::string> texts;
  const std::string flag = absl::GetFlag(FLAGS_train_text);
  std::vector<std::string> paths = Paths(flag);
  if (flag.empty()) {
    paths.clear();
    for (const std::string& bundled : kBundledText) {
      absl::StatusOr<std::string> path = base::FindRunfile(bundled);
      if (!path.ok()) return path.status();
      paths.push_back(*path);
    }
  }
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("--train_text: cannot read ", path));
    std::stringstream ss;
    ss << in.rdbuf();
    texts.push_back(ss.str());
  }
  std::cerr << "dump_batch: no --tokenizer; training " << absl::GetFlag(FLAGS_vocab_size) << " tokens on --train_text\n";
  return Tokenizer::Train(texts, absl::GetFlag(FLAGS_vocab_size));
}

nlohmann::json Rows(const std::vector<int32_t>& v, int B, int T) {
  nlohmann::json rows = nlohmann::json::array();
  for (int b = 0; b < B; ++b) rows.push_back(std::vector<int32_t>(v.begin() + b * T, v.begin() + (b + 1) * T));
  return rows;
}

nlohmann::json BatchJson(int index, const Batch& batch) {
  return {{"batch", index},
          {"inputs_shape", {batch.B, batch.T}},
          {"targets_shape", {batch.B, batch.T}},
          {"inputs", Rows(batch.inputs, batch.B, batch.T)},
          {"targets", Rows(batch.targets, batch.B, batch.T)},
          {"segment_ids", Rows(batch.segment_ids, batch.B, batch.T)},
          {"positions", Rows(batch.positions, batch.B, batch.T)},
          {"supervised_tokens", batch.supervised_tokens},
          {"padding_fraction", PaddingFraction(batch)},
          {"conversations", batch.conversations},
          {"truncated_rows", batch.truncated_rows}};
}

// Row 0 decoded up to its last supervised prediction, supervised tokens inside [[ ]].
std::string DecodedRow(const Batch& batch, const Tokenizer& tok) {
  int end = 0;  // one past the last input position whose token is predicted with loss
  for (int t = 0; t < batch.T; ++t) {
    if (batch.targets[t] >= 0) end = std::min(t + 2, batch.T);
  }
  std::string out;
  bool in_span = false;
  for (int t = 0; t < end; ++t) {
    const bool supervised = t > 0 && batch.targets[t - 1] >= 0;
    if (supervised != in_span) out += supervised ? "[[" : "]]";
    in_span = supervised;
    out += tok.Decode({batch.inputs[t]});
  }
  if (in_span) out += "]]";
  if (end < batch.T) absl::StrAppend(&out, " ... (", batch.T - end, " more positions without targets)");
  return out;
}

int Main() {
  auto fail = [](const absl::Status& s) {
    std::cerr << "dump_batch: error: " << s.message() << "\n";
    return 2;
  };
  // Flags are checked before any work, and each error names its flag.
  for (const auto& [flag, value] : {std::pair<const char*, int>{"--device_batch_size", absl::GetFlag(FLAGS_device_batch_size)},
                                    {"--max_seq_len", absl::GetFlag(FLAGS_max_seq_len)},
                                    {"--world_size", absl::GetFlag(FLAGS_world_size)},
                                    {"--num_batches", absl::GetFlag(FLAGS_num_batches)}}) {
    if (value <= 0) return fail(absl::InvalidArgumentError(absl::StrCat(flag, "=", value, " must be positive")));
  }
  if (absl::GetFlag(FLAGS_rank) < 0 || absl::GetFlag(FLAGS_rank) >= absl::GetFlag(FLAGS_world_size)) {
    return fail(absl::InvalidArgumentError(absl::StrCat("--rank=", absl::GetFlag(FLAGS_rank), " must be in [0, --world_size=",
                                                        absl::GetFlag(FLAGS_world_size), ")")));
  }
  absl::StatusOr<Packing> packing = ParsePacking(absl::GetFlag(FLAGS_packing));
  if (!packing.ok()) return fail(packing.status());
  const std::string split = absl::GetFlag(FLAGS_split);
  if (split != "train" && split != "val") {
    return fail(absl::InvalidArgumentError("--split=" + split + " is not one of: train, val"));
  }
  TrainingDataOptions data_options;
  data_options.jsonl = Paths(absl::GetFlag(FLAGS_jsonl));
  data_options.val_jsonl = Paths(absl::GetFlag(FLAGS_val_jsonl));
  data_options.builtin_tasks = absl::GetFlag(FLAGS_builtin_tasks);
  data_options.jsonl_repeat = absl::GetFlag(FLAGS_jsonl_repeat);
  data_options.examples_per_task = absl::GetFlag(FLAGS_examples_per_task);
  data_options.seed = absl::GetFlag(FLAGS_seed);
  data_options.multiple_choice_jsonl = Paths(absl::GetFlag(FLAGS_mc_jsonl));
  if (absl::Status s = ValidateTrainingDataFlags(data_options); !s.ok()) return fail(s);
  if (!absl::GetFlag(FLAGS_words).empty()) {
    data_options.words_path = UserPath(absl::GetFlag(FLAGS_words));
  } else if (absl::StatusOr<std::string> words = base::FindRunfile(kBundledWords); words.ok()) {
    data_options.words_path = *words;
  } else if (data_options.builtin_tasks || data_options.val_jsonl.empty()) {
    return fail(words.status());  // the built-in tasks need it
  }
  absl::StatusOr<Tokenizer> tok = GetTokenizer();
  if (!tok.ok()) return fail(tok.status());
  auto tokenizer = std::make_shared<const Tokenizer>(*std::move(tok));

  absl::StatusOr<TrainingData> data = BuildTrainingData(data_options);
  if (!data.ok()) {  // a bad line in a file the flags named: exit 1, as the trainer's (2 is for flags)
    fail(data.status());
    return 1;
  }
  std::cerr << data->description;
  const std::shared_ptr<const TaskMixture> mixture = split == "val" ? data->val : data->train;

  const int T = absl::GetFlag(FLAGS_max_seq_len);
  TaskSource source(mixture, tokenizer, 4 * (T + 1));
  LoaderOptions options;
  options.B = absl::GetFlag(FLAGS_device_batch_size);
  options.T = T;
  options.packing = *packing;
  options.rank = absl::GetFlag(FLAGS_rank);
  options.world_size = absl::GetFlag(FLAGS_world_size);
  options.pad_id = PadTokenId(*packing, *tokenizer);
  auto loader = BatchLoader::Create(&source, options);
  if (!loader.ok()) return fail(loader.status());

  std::ostringstream out;
  double padding = 0;
  int64_t supervised = 0;
  const int n = absl::GetFlag(FLAGS_num_batches);
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (!batch.ok()) return fail(batch.status());
    padding += PaddingFraction(*batch);
    supervised += batch->supervised_tokens;
    if (absl::GetFlag(FLAGS_json)) {
      out << BatchJson(i, *batch).dump() << "\n";
      continue;
    }
    out << "batch " << i << ": inputs [" << batch->B << ", " << batch->T << "] targets [" << batch->B << ", "
        << batch->T << "] | conversations " << batch->conversations << " | supervised tokens "
        << batch->supervised_tokens << " | padding " << 100.0 * PaddingFraction(*batch) << "% | truncated "
        << batch->truncated_rows << "\n";
    if (i == 0) out << "row 0 (supervised predictions in [[ ]]):\n" << DecodedRow(*batch, *tokenizer) << "\n";
  }
  if (!absl::GetFlag(FLAGS_json)) {
    out << "summary: " << n << " batches, packing=" << PackingName(*packing) << ", mean padding fraction "
        << padding / std::max(n, 1) << ", supervised tokens per batch " << static_cast<double>(supervised) / std::max(n, 1)
         << ", " << split << " rows " << mixture->size() << ", rank " << options.rank << "/" << options.world_size << "\n";
  }
  if (const std::string path = absl::GetFlag(FLAGS_output); !path.empty()) {
    if (absl::Status s = base::WriteFileAtomically(UserPath(path), out.str()); !s.ok()) return fail(s);
  } else {
    std::cout << out.str();
  }
  return 0;
}

}  // namespace
}  // namespace gpt_sft::data

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "dump_batch [--jsonl=a.jsonl[,b.jsonl]] [--builtin_tasks=false] [--val_jsonl=c.jsonl --split=val] "
      "[--packing=pad|bestfit] [--num_batches=N] [--json] ...");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::data::Main();
}
