// nanochat's render_conversation and render_for_completion: a conversation to token ids
// and a supervision mask.
#ifndef GPT_SFT_DATA_CONVERSATION_RENDER_H_
#define GPT_SFT_DATA_CONVERSATION_RENDER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "data/conversation/conversation.h"
#include "data/conversation/rendered_conversation.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {

/// Token (mask) sequence:
///   <|bos|>(0)
///   user:      <|user_start|>(0) text(0) <|user_end|>(0)
///   assistant: <|assistant_start|>(0) then a string text(1), or per part (each encoded
///              on its own, so BPE never spans a part boundary): text(1);
///              <|python_start|>(1) code(1) <|python_end|>(1);
///              <|output_start|>(0) output(0) <|output_end|>(0); then <|assistant_end|>(1)
/// A leading system message is folded into the first user message as
/// system + "\n\n" + user. Both lists are truncated to `max_tokens`.
absl::StatusOr<RenderedConversation> RenderConversation(const Conversation& conv,
                                                        const Tokenizer& tok, int max_tokens = 2048);

/// The prompt for completing the conversation's final assistant message: everything but
/// that message, rendered (and truncated) as above, then <|assistant_start|>.
absl::StatusOr<std::vector<int32_t>> RenderForCompletion(const Conversation& conv, const Tokenizer& tok,
                                                         int max_tokens = 2048);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_RENDER_H_
