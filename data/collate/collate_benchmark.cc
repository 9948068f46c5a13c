// Builds [4, 2048] batches from synthetic conversations with a realistic length mix
// (synthetic_conversations.h: 80% of 100-600 tokens, 15% 601-1500, 5% 1501-3000), through
// the full loader (shard walk + Render copy + collate/pack), for both packings.
// Target: < 5 ms per batch. Counters, averaged per batch:
//   padding_frac   positions whose target is -1 (PaddingFraction)
//   pad_pos_frac   positions whose input is pad (PadPositionFraction)
//   supervised     targets != -1
//   convs          conversations placed
// Run: ./bazelw run //data/collate:collate_benchmark
#include <memory>

#include "benchmark/benchmark.h"
#include "data/collate/batch.h"
#include "data/collate/in_memory_source.h"
#include "data/collate/loader.h"
#include "data/collate/synthetic_conversations.h"

namespace gpt_sft::data {
namespace {

void BM_Batch(benchmark::State& state, Packing packing) {
  // 20,843 conversations: the size of nanochat's SFT mixture.
  static const InMemoryConversationSource* source =
      new InMemoryConversationSource(SyntheticConversations(20843, 2026));
  absl::StatusOr<std::unique_ptr<BatchLoader>> loader =
      BatchLoader::Create(source, {4, 2048, packing, 0, 1, kSyntheticAssistantEnd});
  if (!loader.ok()) {
    state.SkipWithError(std::string(loader.status().message()).c_str());
    return;
  }
  double padding = 0, pad_positions = 0, supervised = 0, convs = 0;
  for (auto _ : state) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (!batch.ok()) {
      state.SkipWithError(std::string(batch.status().message()).c_str());
      return;
    }
    padding += PaddingFraction(*batch);
    pad_positions += PadPositionFraction(*batch);
    supervised += static_cast<double>(batch->supervised_tokens);
    convs += static_cast<double>(batch->conversations);
    benchmark::DoNotOptimize(batch->inputs.data());
  }
  using C = benchmark::Counter;
  state.counters["padding_frac"] = C(padding, C::kAvgIterations);
  state.counters["pad_pos_frac"] = C(pad_positions, C::kAvgIterations);
  state.counters["supervised"] = C(supervised, C::kAvgIterations);
  state.counters["convs"] = C(convs, C::kAvgIterations);
}

BENCHMARK_CAPTURE(BM_Batch, pad, Packing::kPad)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Batch, bestfit, Packing::kBestFit)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpt_sft::data
