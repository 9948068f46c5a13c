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

/// The token sequence, each token with its mask bit in brackets:
///   <|bos|>[0]
///   user:      <|user_start|>[0] encode(text)[0] <|user_end|>[0]
///   assistant: <|assistant_start|>[0], then
///              a string:  encode(text)[1]
///              or parts, each encoded on its own (BPE never spans a part boundary):
///                text           encode(text)[1]
///                python         <|python_start|>[1] encode(code)[1] <|python_end|>[1]
///                python_output  <|output_start|>[0] encode(output)[0] <|output_end|>[0]
///              then <|assistant_end|>[1]
/// A leading system message is folded into the first user message as one string,
/// system + "\n\n" + user. Then ids and mask are both cut to their first `max_tokens`.
/// Errors (InvalidArgument): what ValidateConversation rejects; max_tokens < 1.
absl::StatusOr<RenderedConversation> RenderConversation(const Conversation& conv, const Tokenizer& tok,
                                                        int max_tokens = 2048);

/// The prompt for completing the conversation's last message, which must be the
/// assistant's: every message but that one, rendered (and cut to `max_tokens`) as above,
/// then <|assistant_start|>. So the result has at most max_tokens + 1 ids.
/// Errors: a conversation with fewer than 2 messages or not ending in an assistant
/// message, and what RenderConversation rejects.
absl::StatusOr<std::vector<int32_t>> RenderForCompletion(const Conversation& conv, const Tokenizer& tok,
                                                         int max_tokens = 2048);

}  // namespace gpt_sft::data

#endif  // GPT_SFT_DATA_CONVERSATION_RENDER_H_
