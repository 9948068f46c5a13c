// The pad token of each packing, as nanochat pads: its init collate (one conversation per
// row) pads inputs with <|assistant_end|>; HEAD's best-fit loader pads rows with <|bos|>.
// Padding never carries a target, so the choice changes no loss; it keeps our batches equal
// to nanochat's token for token (nanochat_batches_test).
#ifndef GPT_SFT_DATA_PIPELINE_PAD_TOKEN_H_
#define GPT_SFT_DATA_PIPELINE_PAD_TOKEN_H_

#include <cstdint>

#include "data/collate/loader.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {

inline int32_t PadTokenId(Packing packing, const Tokenizer& tokenizer) {
  return tokenizer.SpecialId(packing == Packing::kPad ? SpecialToken::kAssistantEnd : SpecialToken::kBos);
}

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_PIPELINE_PAD_TOKEN_H_
