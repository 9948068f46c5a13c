// Time to build one [4, 2048] batch from already-rendered conversations with a realistic
// length mix (synthetic_conversations.h), per packing, with the padding fraction and the
// supervised tokens each packing delivers.
#include "benchmark/benchmark.h"
#include "data/collate/in_memory_source.h"
#include "data/collate/loader.h"
#include "data/collate/synthetic_conversations.h"

namespace gpt_sft::data {
namespace {

void BM_Collate(benchmark::State& state) {
  static const InMemoryConversationSource* source =
      new InMemoryConversationSource(SyntheticConversations(5000, 42));
  LoaderOptions o;
  o.packing = state.range(0) == 0 ? Packing::kPad : Packing::kBestFit;
  o.pad_id = kSyntheticAssistantEnd;
  auto loader = *BatchLoader::Create(source, o);
  double padding = 0;
  int64_t supervised = 0, n = 0;
  for (auto _ : state) {
    Batch b = *loader->Next();
    padding += PaddingFraction(b);
    supervised += b.supervised_tokens;
    ++n;
  }
  state.SetLabel(std::string(PackingName(o.packing)));
  state.counters["padding_fraction"] = padding / n;
  state.counters["supervised_tokens_per_batch"] = static_cast<double>(supervised) / n;
}
BENCHMARK(BM_Collate)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpt_sft::data
