// UTF-8 validation shared by the data room: the tokenizer's byte fallback and the JSONL
// readers' "not valid UTF-8" errors.
#ifndef GPT_SFT_DATA_IO_UTF8_H_
#define GPT_SFT_DATA_IO_UTF8_H_

#include <cstddef>
#include <string_view>

namespace gpt_sft::data {

/// Length in bytes of the longest prefix of `s` that is valid UTF-8 (no overlong forms,
/// surrogates or code points past U+10FFFF, as PCRE2 requires).
size_t ValidUtf8PrefixLength(std::string_view s);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_IO_UTF8_H_
