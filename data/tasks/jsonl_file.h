// Reads a JSONL file line by line with the checks every JSONL task shares: the file must
// exist and be UTF-8; blank lines are skipped; each error names the file and line.
#ifndef GPT_SFT_DATA_TASKS_JSONL_FILE_H_
#define GPT_SFT_DATA_TASKS_JSONL_FILE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace gpt_sft::data {

/// Calls `fn(line, where)` for each line that is not blank (only spaces, tabs, \r), with
/// where = "path:lineno" (1-based) for fn's own errors. Stops at the first error:
///   NotFound         "<path>: cannot open ..." (missing, unreadable or not a regular file)
///   InvalidArgument  "<path>:<line>: not valid UTF-8 (byte <b> of the line)"
///   DataLoss         "<path>: read error after line <n>"
///   or what fn returns.
absl::Status ForEachJsonlLine(const std::string& path,
                              const std::function<absl::Status(const std::string& line,
                                                               const std::string& where)>& fn);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TASKS_JSONL_FILE_H_
