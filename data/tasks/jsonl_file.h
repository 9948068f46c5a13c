// Reads a JSONL file line by line with checks shared by every JSONL task: the file must
// exist and be UTF-8; blank lines are skipped; each error names the file and line.
#ifndef GPT_SFT_DATA_TASKS_JSONL_FILE_H_
#define GPT_SFT_DATA_TASKS_JSONL_FILE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace gpt_sft::data {

/// Calls `fn(line, where)` for each non-blank line, where = "path:lineno". Stops at the
/// first error, from the file or from `fn`.
absl::Status ForEachJsonlLine(const std::string& path,
                              const std::function<absl::Status(const std::string& line,
                                                               const std::string& where)>& fn);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_JSONL_FILE_H_
