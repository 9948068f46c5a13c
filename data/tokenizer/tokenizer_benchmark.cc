// Encode throughput (MB/s, one thread) of an 8192-token vocabulary on English prose: the
// 14 distinct files of @english_text//:licenses (Debian's common licenses, 237 KB).
//
// The licenses alone run out of pairs at 6,169 merges (vocab 6,434), so the vocabulary is
// trained on them plus the word list (@wordlist//:english_words, 985 KB), which fills all
// 7,927 merges. BM_Encode encodes the licenses, which the vocabulary was trained on;
// BM_EncodeHeldOut trains without the GPL family (GPL-*, LGPL-*) and encodes only it, as
// a tokenizer meets new text. BM_Split times the regex split alone.
#include "benchmark/benchmark.h"
#include "data/tokenizer/english_corpus.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {
namespace {

// The texts to train on and the texts to encode, for one benchmark.
struct Setup {
  std::vector<std::string> train, encode;
  size_t encode_bytes = 0;
};

Setup MakeSetup(bool held_out) {
  Setup s;
  s.train.push_back(WordListText());
  for (size_t i = 0; i < LicenseTexts().size(); ++i) {
    const bool gpl = LicenseFileNames()[i].find("GPL") != std::string::npos;
    const std::string& text = LicenseTexts()[i];
    if (!held_out || !gpl) s.train.push_back(text);
    if (!held_out || gpl) s.encode.push_back(text), s.encode_bytes += text.size();
  }
  return s;
}

void RunEncode(benchmark::State& state, const Setup& setup, const Tokenizer& tok) {
  size_t tokens = 0;
  std::vector<int32_t> ids;
  for (auto _ : state) {
    ids.clear();
    for (const std::string& text : setup.encode) tok.EncodeAppend(text, &ids);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * setup.encode_bytes));
  state.counters["bytes_per_token"] = static_cast<double>(setup.encode_bytes) / tokens;
  state.counters["vocab"] = tok.vocab_size();
}

void BM_Encode(benchmark::State& state) {
  static const Setup* setup = new Setup(MakeSetup(/*held_out=*/false));
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(setup->train, 8192));
  RunEncode(state, *setup, *tok);
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMillisecond);

void BM_EncodeHeldOut(benchmark::State& state) {
  static const Setup* setup = new Setup(MakeSetup(/*held_out=*/true));
  static const Tokenizer* tok = new Tokenizer(*Tokenizer::Train(setup->train, 8192));
  RunEncode(state, *setup, *tok);
}
BENCHMARK(BM_EncodeHeldOut)->Unit(benchmark::kMillisecond);

void BM_Split(benchmark::State& state) {
  const SplitPattern pattern = *SplitPattern::Compile(kSplitPattern);
  size_t bytes = 0, chunks = 0;
  for (const std::string& text : LicenseTexts()) bytes += text.size();
  for (auto _ : state) {
    chunks = 0;
    for (const std::string& text : LicenseTexts()) {
      pattern.ForEachChunk(text, [&](std::string_view) { ++chunks; });
    }
    benchmark::DoNotOptimize(chunks);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["bytes_per_chunk"] = static_cast<double>(bytes) / chunks;
}
BENCHMARK(BM_Split)->Unit(benchmark::kMillisecond);

void BM_Train8192(benchmark::State& state) {
  const Setup setup = MakeSetup(/*held_out=*/false);
  size_t bytes = 0;
  for (const std::string& t : setup.train) bytes += t.size();
  for (auto _ : state) benchmark::DoNotOptimize(Tokenizer::Train(setup.train, 8192)->num_merges());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Train8192)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace gpt_sft::data
