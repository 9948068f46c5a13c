// ReadFile: the whole of a file as bytes, with errors that name it. The one reader of
// whole files behind base/json_file.h and the runtime's checkpoint meta.
#ifndef GPT_SFT_BASE_READ_FILE_H_
#define GPT_SFT_BASE_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace gpt_sft::base {

/// The bytes of the file at `path`. Errors: NotFound "<path>: cannot open" when it cannot
/// be opened (missing, unreadable), DataLoss "<path>: read error" when reading
/// fails part way.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_READ_FILE_H_
