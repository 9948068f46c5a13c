// BatchLoader: the trainer's endless, deterministic supply of fixed [B, T] batches. It walks
// this rank's shard of a ConversationSource (sharded_stream.h: r, r+W, ..., wrapping over
// epochs) and forms batches with one of the two packings:
//   --packing=pad      FixedPadCollator: the next B conversations, one per row.
//   --packing=bestfit  BestFitPacker: whole conversations packed into rows by best fit.
// Same source, same options -> the same batches, in the same order, on every run.
#ifndef GPT_SFT_DATA_COLLATE_LOADER_H_
#define GPT_SFT_DATA_COLLATE_LOADER_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/collate/batch.h"
#include "data/collate/best_fit_packer.h"
#include "data/collate/conversation_source.h"
#include "data/collate/fixed_pad_collator.h"
#include "data/collate/sharded_stream.h"

namespace gpt_sft::data {

enum class Packing { kPad, kBestFit };

/// "pad" or "bestfit" (the values of --packing); InvalidArgument naming the flag otherwise.
absl::StatusOr<Packing> ParsePacking(absl::string_view flag_value);
absl::string_view PackingName(Packing packing);

struct LoaderOptions {
  int B = 4;
  int T = 2048;
  Packing packing = Packing::kPad;
  int rank = 0;
  int world_size = 1;
  int32_t pad_id = -1;    // required (>= 0): the id of <|assistant_end|>
  int buffer_size = 100;  // bestfit only
};

/// Running totals since the loader was created.
struct LoaderCounters {
  int64_t batches = 0;
  int64_t epochs_completed = 0;   // wraps of this rank's walk over the source
  int64_t examples_consumed = 0;  // conversations rendered from the source
  int64_t examples_batched = 0;   // conversations placed in batches
  int64_t buffered = 0;           // consumed, not yet batched (bestfit's buffer; pad: 0)
  int64_t truncated = 0;          // placed conversations cut to T tokens
  int64_t supervised_tokens = 0;  // targets != -1 over all batches
  int64_t positions = 0;          // B*T over all batches
};

class BatchLoader {
 public:
  /// `source` is borrowed and must outlive the loader. Errors name the option at fault.
  static absl::StatusOr<std::unique_ptr<BatchLoader>> Create(const ConversationSource* source,
                                                             const LoaderOptions& options);

  /// The next [B, T] batch. Never runs out: the walk wraps into the next epoch, and an
  /// epoch boundary may fall inside a batch.
  absl::StatusOr<Batch> Next();

  const LoaderCounters& counters() const { return counters_; }
  const LoaderOptions& options() const { return options_; }

 private:
  BatchLoader(const LoaderOptions& options, ShardedConversationStream stream,
              std::optional<FixedPadCollator> pad, std::optional<BestFitPacker> bestfit)
      : options_(options),
        stream_(std::move(stream)),
        pad_(std::move(pad)),
        bestfit_(std::move(bestfit)) {}
  absl::StatusOr<Batch> NextPadded();

  LoaderOptions options_;
  ShardedConversationStream stream_;
  std::optional<FixedPadCollator> pad_;   // set iff packing == kPad
  std::optional<BestFitPacker> bestfit_;  // set iff packing == kBestFit
  LoaderCounters counters_;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_LOADER_H_
