// //data:dump_batch: renders the first N batches of the SFT task mixture and shows what
// the model will see: shapes, supervised tokens, padding, one decoded row with its mask.
// --json prints one JSON object per batch (inputs, targets, segment_ids, positions, ...)
// so other tools and tests can replay exactly that batch.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/flags/flag.h"
#include "base/command_line.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/atomic_file.h"
#include "data/collate/loader.h"
#include "data/pipeline/sft_mixture.h"
#include "data/pipeline/task_source.h"
#include "data/tools/user_path.h"

ABSL_FLAG(std::string, tokenizer, "", "tokenizer file (data/tokenizer/FORMAT.md); empty: train one on --train_text");
ABSL_FLAG(std::string, train_text, "",
          "comma-separated text files to train a tokenizer on when --tokenizer is empty; empty: the machine's "
          "English prose (Debian's common licenses) and word list, bundled as runfiles");
ABSL_FLAG(int, vocab_size, 8192, "vocabulary size when training a tokenizer");
ABSL_FLAG(std::string, words, "", "word list for the spelling tasks; empty: Debian's, bundled as runfiles");
ABSL_FLAG(std::string, jsonl, "", "comma-separated CustomJSON conversation files to add to the mixture");
ABSL_FLAG(std::string, mc_jsonl, "", "comma-separated multiple-choice JSONL files to add to the mixture");
ABSL_FLAG(int64_t, examples_per_task, 2000, "examples of each synthetic task");
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

// Runfiles paths of the bundled defaults (relative to the binary's working directory).
constexpr char kBundledWords[] = "external/wordlist/words";
const std::vector<std::string> kBundledText = {"external/english_text/GPL-3", "external/english_text/Apache-2.0",
                                               kBundledWords};

std::vector<std::string> Paths(const std::string& flag) {
  std::vector<std::string> out;
  for (absl::string_view p : absl::StrSplit(flag, ',', absl::SkipEmpty())) out.push_back(UserPath(std::string(p)));
  return out;
}

absl::StatusOr<Tokenizer> GetTokenizer() {
  if (!absl::GetFlag(FLAGS_tokenizer).empty()) return Tokenizer::Load(UserPath(absl::GetFlag(FLAGS_tokenizer)));
  std::vector<std::string> texts;
  const std::string flag = absl::GetFlag(FLAGS_train_text);
  for (const std::string& path : flag.empty() ? kBundledText : Paths(flag)) {
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
  absl::StatusOr<Tokenizer> tok = GetTokenizer();
  if (!tok.ok()) return fail(tok.status());
  auto tokenizer = std::make_shared<const Tokenizer>(*std::move(tok));

  SftMixtureOptions mix;
  mix.words_path = absl::GetFlag(FLAGS_words).empty() ? kBundledWords : UserPath(absl::GetFlag(FLAGS_words));
  mix.spelling_bee = mix.simple_spelling = mix.synthetic_mc = absl::GetFlag(FLAGS_examples_per_task);
  mix.conversation_jsonl = Paths(absl::GetFlag(FLAGS_jsonl));
  mix.multiple_choice_jsonl = Paths(absl::GetFlag(FLAGS_mc_jsonl));
  auto mixture = BuildSftMixture(mix);
  if (!mixture.ok()) return fail(mixture.status());

  const int T = absl::GetFlag(FLAGS_max_seq_len);
  TaskSource source(*mixture, tokenizer, 4 * (T + 1));
  LoaderOptions options;
  options.B = absl::GetFlag(FLAGS_device_batch_size);
  options.T = T;
  options.packing = *packing;
  options.rank = absl::GetFlag(FLAGS_rank);
  options.world_size = absl::GetFlag(FLAGS_world_size);
  options.pad_id = tokenizer->SpecialId(SpecialToken::kAssistantEnd);
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
        << ", mixture rows " << (*mixture)->size() << ", rank " << options.rank << "/" << options.world_size << "\n";
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
  absl::SetProgramUsageMessage("dump_batch [--packing=pad|bestfit] [--num_batches=N] [--json] ...");
  gpt_sft::base::ParseCommandLine(argc, argv);
  return gpt_sft::data::Main();
}
