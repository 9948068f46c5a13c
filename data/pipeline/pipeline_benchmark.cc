// Time to build one [4, 2048] batch from the SFT mixture, rendering included (tokenize,
// render, collate), with an 8192-token vocabulary; and what each packing delivers:
// supervised tokens per batch and the padding fraction.
#include <fstream>
#include <sstream>

#include "benchmark/benchmark.h"
#include "data/collate/loader.h"
#include "data/pipeline/sft_mixture.h"
#include "data/pipeline/task_source.h"

namespace gpt_sft::data {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const TaskSource& Source() {
  static const TaskSource* source = [] {
    auto tok = std::make_shared<const Tokenizer>(*Tokenizer::Train(
        {Read("external/english_text/GPL-3"), Read("external/english_text/Apache-2.0"), Read("external/wordlist/words")},
        8192));
    SftMixtureOptions options;
    options.words_path = "external/wordlist/words";
    return new TaskSource(*BuildSftMixture(options), tok, 4 * 2049);
  }();
  return *source;
}

void BM_NextBatch(benchmark::State& state) {
  LoaderOptions options;
  options.packing = state.range(0) == 0 ? Packing::kPad : Packing::kBestFit;
  options.pad_id = 8192 - 5;  // <|assistant_end|> of an 8192 vocabulary
  auto loader = *BatchLoader::Create(&Source(), options);
  double padding = 0;
  int64_t supervised = 0, batches = 0;
  for (auto _ : state) {
    Batch batch = *loader->Next();
    padding += PaddingFraction(batch);
    supervised += batch.supervised_tokens;
    ++batches;
  }
  state.SetLabel(options.packing == Packing::kPad ? "pad" : "bestfit");
  state.counters["supervised_tokens_per_batch"] = static_cast<double>(supervised) / batches;
  state.counters["padding_fraction"] = padding / batches;
}
BENCHMARK(BM_NextBatch)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpt_sft::data
