// Batches from the JSON lines //data:dump_batch --json writes (one object per line with
// "inputs", "targets", "segment_ids", "positions": [B][T] int rows, and "inputs_shape"),
// so //trainer:loss and the tests replay exactly the batches the data pipeline made.
#ifndef GPT_SFT_TRAINER_EVAL_BATCH_JSON_H_
#define GPT_SFT_TRAINER_EVAL_BATCH_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/collate/batch.h"

namespace gpt_sft::trainer {

/// One line's object. The result passes data::ValidateBatch; errors name `where` (e.g.
/// "f.json:3") and the key at fault.
absl::StatusOr<data::Batch> BatchFromJson(absl::string_view where, absl::string_view json_line);

/// Every non-blank line of `path`. NotFound naming the file when it cannot be read;
/// InvalidArgument naming file:line for a bad line, or the file when it holds no batch.
absl::StatusOr<std::vector<data::Batch>> ReadBatchesJson(const std::string& path);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_EVAL_BATCH_JSON_H_
