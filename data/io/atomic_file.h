// Writes a file so that readers see the old contents or the new, never a part: a temp
// file beside the target, fsync, rename, fsync of the directory.
#ifndef GPT_SFT_DATA_IO_ATOMIC_FILE_H_
#define GPT_SFT_DATA_IO_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace gpt_sft::data {

/// On any failure the temp file is removed and whatever was at `path` is untouched.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_IO_ATOMIC_FILE_H_
