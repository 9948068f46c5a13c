// A conversation rendered to token ids with its supervision mask: the hand-off between
// chat rendering (data/conversation/render) and batching (data/collate).
#ifndef GPT_SFT_DATA_CONVERSATION_RENDERED_CONVERSATION_H_
#define GPT_SFT_DATA_CONVERSATION_RENDERED_CONVERSATION_H_

#include <cstdint>
#include <vector>

namespace gpt_sft::data {

/// ids[i] is a token id; mask[i] is 1 when ids[i] is a token the model is trained to
/// predict (assistant text, python calls, <|assistant_end|>), 0 otherwise.
/// Invariant: ids.size() == mask.size().
struct RenderedConversation {
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;
};

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_RENDERED_CONVERSATION_H_
