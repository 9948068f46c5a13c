// Encode throughput (MB/s) of an 8192-token vocabulary trained on the machine's English
// prose (Debian's common licenses) plus its word list, on one thread.
#include <fstream>
#include <sstream>

#include "benchmark/benchmark.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {
namespace {

const std::string& Corpus() {
  static const std::string* text = [] {
    auto* s = new std::string;
    for (const char* name : {"GPL-3", "GPL-2", "LGPL-3", "Apache-2.0", "MPL-2.0", "GFDL-1.3", "Artistic"}) {
      std::ifstream in(std::string("external/english_text/") + name);
      std::stringstream ss;
      ss << in.rdbuf();
      *s += ss.str();
    }
    return s;
  }();
  return *text;
}

// The prose alone runs out of pairs near 5k merges; the word list adds enough to reach 8192.
const std::vector<std::string>& TrainingTexts() {
  static const auto* texts = [] {
    std::ifstream in("external/wordlist/words");
    std::stringstream ss;
    ss << in.rdbuf();
    return new std::vector<std::string>{Corpus(), ss.str()};
  }();
  return *texts;
}

const Tokenizer& Vocab8192() {
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(TrainingTexts(), 8192));
  return *tok;
}

void BM_Encode(benchmark::State& state) {
  const Tokenizer& tok = Vocab8192();
  const std::string& text = Corpus();
  size_t tokens = 0;
  for (auto _ : state) {
    std::vector<int32_t> ids = tok.Encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["bytes_per_token"] = static_cast<double>(text.size()) / tokens;
  state.counters["vocab"] = tok.vocab_size();
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMillisecond);

void BM_Train8192(benchmark::State& state) {
  size_t bytes = 0;
  for (const std::string& t : TrainingTexts()) bytes += t.size();
  for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::Train(TrainingTexts(), 8192)->num_merges());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Train8192)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace gpt_sft::data
