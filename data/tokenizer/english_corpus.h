// Test and benchmark corpus: the English prose of @english_text//:licenses and the word
// list @wordlist//:english_words, read from the runfiles of a target that lists them as data.
#ifndef GPT_SFT_DATA_TOKENIZER_ENGLISH_CORPUS_H_
#define GPT_SFT_DATA_TOKENIZER_ENGLISH_CORPUS_H_

#include <string>
#include <vector>

namespace gpt_sft::data {

/// The 14 distinct license files (the GPL, LGPL and GFDL aliases are left out), by name,
/// 237,320 bytes in all.
const std::vector<std::string>& LicenseFileNames();

/// One text per file of LicenseFileNames(), in that order. Dies with a message naming the
/// file if one cannot be read (test code only).
const std::vector<std::string>& LicenseTexts();

/// /usr/share/dict/words: one word a line, 985,084 bytes.
const std::string& WordListText();

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_TOKENIZER_ENGLISH_CORPUS_H_
