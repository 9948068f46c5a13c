// Synthetic rendered conversations with a realistic length mix, for the collate benchmark
// and the packing statistics. Not real text: ids are random, only lengths and the mask
// layout (a prompt with mask 0, then a supervised reply ending in <|assistant_end|>) imitate
// rendered chats.
#ifndef GPT_SFT_DATA_COLLATE_SYNTHETIC_CONVERSATIONS_H_
#define GPT_SFT_DATA_COLLATE_SYNTHETIC_CONVERSATIONS_H_

#include <cstdint>
#include <vector>

#include "data/conversation/rendered_conversation.h"

namespace gpt_sft::data {

/// Special ids as in NANOCHAT.md 5.1 for the 65,536 vocabulary (used only as labels here).
inline constexpr int32_t kSyntheticBos = 65527;
inline constexpr int32_t kSyntheticAssistantEnd = 65531;

/// `count` conversations drawn with a fixed seed (same seed, same conversations, on every
/// platform: the draws use our own arithmetic, not std distributions). Lengths:
///   80%  uniform in [100, 600]    (short chats, ARC/GSM8K-like)
///   15%  uniform in [601, 1500]
///    5%  uniform in [1501, 3000]  (long; those over T get cut by the collators)
/// Each is <|bos|> (mask 0), a prompt of 20-60% of the length (mask 0), then a reply
/// (mask 1) whose last token is <|assistant_end|> (mask 1).
std::vector<RenderedConversation> SyntheticConversations(int count, uint64_t seed);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_COLLATE_SYNTHETIC_CONVERSATIONS_H_
