// Real SFT batches for the benchmark: the offline task mixture the trainer trains on,
// tokenized by a BPE tokenizer trained on this machine's English text (as the demo does),
// collated at the bench's [B, T] with --packing=pad or bestfit. What users pay for is the
// supervised tokens (targets that carry loss) a step delivers, and that depends on packing.
#ifndef GPT_SFT_TRAINER_BENCH_MIXTURE_BATCHES_H_
#define GPT_SFT_TRAINER_BENCH_MIXTURE_BATCHES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "data/collate/loader.h"
#include "trainer/eager_step.h"

namespace gpt_sft::bench {

struct MixtureBatches {
  std::vector<trainer::StepBatch> batches;
  std::vector<int64_t> supervised_tokens;  // per batch
  double padding_fraction = 0;             // mean over the batches: positions with no target
};

/// The first `count` batches of the SFT mixture at [B, T], for a step built with
/// StepConfig::packed == (packing == kBestFit). The tokenizer has `vocab_size` tokens and is
/// trained once per process.
absl::StatusOr<MixtureBatches> SftMixtureBatches(int vocab_size, int B, int T, data::Packing packing, int count);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_MIXTURE_BATCHES_H_
