#include "data/collate/loader.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::data {

absl::StatusOr<Packing> ParsePacking(absl::string_view flag_value) {
  if (flag_value == "pad") return Packing::kPad;
  if (flag_value == "bestfit") return Packing::kBestFit;
  return absl::InvalidArgumentError(
      absl::StrCat("--packing=", flag_value, ": expected \"pad\" or \"bestfit\""));
}

absl::string_view PackingName(Packing packing) {
  return packing == Packing::kPad ? "pad" : "bestfit";
}

absl::StatusOr<std::unique_ptr<BatchLoader>> BatchLoader::Create(const ConversationSource* source,
                                                                 const LoaderOptions& options) {
  absl::StatusOr<ShardedConversationStream> stream =
      ShardedConversationStream::Create(source, options.rank, options.world_size);
  if (!stream.ok()) return stream.status();
  std::optional<FixedPadCollator> pad;
  std::optional<BestFitPacker> bestfit;
  if (options.packing == Packing::kPad) {
    absl::StatusOr<FixedPadCollator> c =
        FixedPadCollator::Create({options.B, options.T, options.pad_id});
    if (!c.ok()) return c.status();
    pad = *std::move(c);
  } else {
    absl::StatusOr<BestFitPacker> p =
        BestFitPacker::Create({options.B, options.T, options.pad_id, options.buffer_size});
    if (!p.ok()) return p.status();
    bestfit = *std::move(p);
  }
  return std::unique_ptr<BatchLoader>(
      new BatchLoader(options, *std::move(stream), std::move(pad), std::move(bestfit)));
}

absl::StatusOr<Batch> BatchLoader::NextPadded() {
  std::vector<RenderedConversation> rows;
  rows.reserve(options_.B);
  for (int b = 0; b < options_.B; ++b) {
    absl::StatusOr<RenderedConversation> c = stream_.Next();
    if (!c.ok()) return c.status();
    rows.push_back(*std::move(c));
  }
  return pad_->Collate(rows);
}

absl::StatusOr<Batch> BatchLoader::Next() {
  absl::StatusOr<Batch> batch =
      pad_.has_value() ? NextPadded() : bestfit_->Pack([this] { return stream_.Next(); });
  if (!batch.ok()) return batch.status();
  ++counters_.batches;
  counters_.epochs_completed = stream_.epochs_completed();
  counters_.examples_consumed = stream_.consumed();
  counters_.examples_batched += batch->conversations;
  counters_.buffered = bestfit_.has_value() ? bestfit_->buffered() : 0;
  counters_.truncated += batch->truncated_rows;
  counters_.supervised_tokens += batch->supervised_tokens;
  counters_.positions += batch->NumPositions();
  return batch;
}

}  // namespace gpt_sft::data
