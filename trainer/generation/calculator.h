// nanochat's calculator tool (engine.py use_calculator, NANOCHAT.md 9): the text of a
// python block in, Python's str() of its value out, or nothing.
//   * commas are removed first;
//   * arithmetic: only digits, + - * / . ( ) and spaces, no "**"; ints stay ints
//     ("2+3" -> "5"), "/" is true division ("10/4" -> "2.5", "8/2" -> "4.0"), "//" floors;
//     floats print as Python's repr (shortest round trip, exponent form below 1e-4 and
//     from 1e16);
//   * string counting: 'letters'.count('x') (either quote) -> the number of
//     non-overlapping occurrences, nanochat's SpellingBee check.
// Anything else (names, calls, division by zero, int64 overflow) gives nullopt, as any
// Python error does there.
#ifndef GPT_SFT_TRAINER_GENERATION_CALCULATOR_H_
#define GPT_SFT_TRAINER_GENERATION_CALCULATOR_H_

#include <optional>
#include <string>
#include <string_view>

#include "data/tokenizer/tokenizer.h"
#include "trainer/generation/generator.h"

namespace gpt_sft::trainer {

std::optional<std::string> UseCalculator(std::string_view expr);

/// The calculator as the Generator's tool: decodes the block, encodes the result.
/// `tokenizer` must outlive the returned value.
ToolUse CalculatorTool(const data::Tokenizer& tokenizer);

}  // namespace gpt_sft::trainer

#endif  // GPT_SFT_TRAINER_GENERATION_CALCULATOR_H_
