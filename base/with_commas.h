// 1234567 -> "1,234,567": counts as nanochat's logs print them (Python's "{:,}").
#ifndef GPT_SFT_BASE_WITH_COMMAS_H_
#define GPT_SFT_BASE_WITH_COMMAS_H_

#include <cstdint>
#include <string>

namespace gpt_sft::base {

inline std::string WithCommas(int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_WITH_COMMAS_H_
