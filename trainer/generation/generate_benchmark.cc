// Decoding speed of the KV-cache Generator on random weights: a 32-token prompt, then
// greedy decoding of 128 tokens with no stop token. Reports decoded tokens per second
// (items_per_second; one @decode call per token) and, as a counter, the prefill time.
//   ./bazelw run //trainer/generation:generate_benchmark -- --benchmark_filter=Decode
// Args: depth, width, heads, vocabulary (the CPU benchmark model is depth 4, width 256).
#include <vector>

#include "benchmark/benchmark.h"
#include "trainer/generation/generator.h"

namespace gpt_sft::trainer {
namespace {

void BM_Decode(benchmark::State& state) {
  auto config = compiler::ModelConfig::FromDepth(state.range(0), state.range(3), 2048, state.range(1), state.range(2));
  if (!config.ok()) return state.SkipWithError(std::string(config.status().message()).c_str());
  auto store = runtime::ParamStore::Create(*config);
  if (!store.ok()) return state.SkipWithError("cannot allocate the model");
  store->InitNanochat(1, /*zero_output_projections=*/false);
  auto gen = Generator::Create(*store);
  if (!gen.ok()) return state.SkipWithError(std::string(gen.status().message()).c_str());
  std::vector<int32_t> prompt;
  for (int i = 0; i < 32; ++i) prompt.push_back((i * 7919) % config->vocab_size);
  GenerateOptions options;
  options.max_tokens = 129;  // 128 @decode calls after the prefill's token
  int64_t decoded = 0;
  double prefill = 0, decode = 0;
  for (auto _ : state) {
    auto tokens = (*gen)->Generate(prompt, options);
    if (!tokens.ok()) return state.SkipWithError(std::string(tokens.status().message()).c_str());
    decoded += (*gen)->last_stats().decoded_tokens;
    prefill += (*gen)->last_stats().prefill_seconds;
    decode += (*gen)->last_stats().decode_seconds;
  }
  state.SetItemsProcessed(decoded);
  state.counters["decode_tok_per_s"] = decode > 0 ? decoded / decode : 0;
  state.counters["prefill_ms"] = 1e3 * prefill / state.iterations();
  state.counters["params_M"] = config->NumParams() / 1e6;
}

BENCHMARK(BM_Decode)
    ->Args({2, 128, 1, 8192})
    ->Args({4, 256, 2, 8192})
    ->Args({4, 256, 2, 65536})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gpt_sft::trainer

BENCHMARK_MAIN();
