#include "trainer/bench/mixture_batches.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "data/collate/batch.h"
#include "data/pipeline/sft_mixture.h"
#include "data/pipeline/task_source.h"
#include "data/tokenizer/tokenizer.h"
#include "trainer/batch_tensors.h"
#include "base/runfiles.h"

namespace gpt_sft::bench {
namespace {

absl::StatusOr<std::string> ReadRunfile(const std::string& name) {
  absl::StatusOr<std::string> path = base::FindRunfile(name);
  if (!path.ok()) return path.status();
  std::ifstream in(*path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return absl::UnavailableError("cannot read " + *path);
  return ss.str();
}

// Trained once per vocabulary size: a second packing reuses it.
absl::StatusOr<std::shared_ptr<const data::Tokenizer>> BenchTokenizer(int vocab_size) {
  static std::shared_ptr<const data::Tokenizer> cached;
  if (cached != nullptr && cached->vocab_size() == vocab_size) return cached;
  std::vector<std::string> texts;
  for (const char* name : {"external/english_text/GPL-3", "external/english_text/Apache-2.0", "external/wordlist/words"}) {
    absl::StatusOr<std::string> text = ReadRunfile(name);
    if (!text.ok()) return text.status();
    texts.push_back(*std::move(text));
  }
  absl::StatusOr<data::Tokenizer> tok = data::Tokenizer::Train(texts, vocab_size);
  if (!tok.ok()) return tok.status();
  cached = std::make_shared<const data::Tokenizer>(*std::move(tok));
  return cached;
}

}  // namespace

absl::StatusOr<MixtureBatches> SftMixtureBatches(int vocab_size, int B, int T, data::Packing packing, int count) {
  absl::StatusOr<std::shared_ptr<const data::Tokenizer>> tok = BenchTokenizer(vocab_size);
  if (!tok.ok()) return tok.status();
  absl::StatusOr<std::string> words = base::FindRunfile("external/wordlist/words");
  if (!words.ok()) return words.status();
  data::SftMixtureOptions mixture_options;
  mixture_options.words_path = *words;
  absl::StatusOr<std::shared_ptr<const data::TaskMixture>> mixture = data::BuildSftMixture(mixture_options);
  if (!mixture.ok()) return mixture.status();
  data::TaskSource source(*mixture, *tok, 4 * (T + 1));
  data::LoaderOptions options;
  options.B = B;
  options.T = T;
  options.packing = packing;
  options.pad_id = (*tok)->SpecialId(data::SpecialToken::kAssistantEnd);
  absl::StatusOr<std::unique_ptr<data::BatchLoader>> loader = data::BatchLoader::Create(&source, options);
  if (!loader.ok()) return loader.status();
  MixtureBatches out;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<data::Batch> batch = (*loader)->Next();
    if (!batch.ok()) return batch.status();
    out.batches.push_back(trainer::ToStepBatch(*batch, packing == data::Packing::kBestFit));
    out.supervised_tokens.push_back(batch->supervised_tokens);
    out.padding_fraction += data::PaddingFraction(*batch) / count;
  }
  return out;
}

}  // namespace gpt_sft::bench
