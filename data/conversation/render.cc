// Implements RenderConversation and RenderForCompletion (nanochat's mask table).
#include "data/conversation/render.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

// Appends ids and their mask bits side by side, so the two never differ in length.
class Renderer {
 public:
  explicit Renderer(const Tokenizer& tok) : tok_(tok) {}

  void Special(SpecialToken t, uint8_t mask) {
    out_.ids.push_back(tok_.SpecialId(t));
    out_.mask.push_back(mask);
  }
  // One encode call per piece: this is what keeps BPE from merging across pieces.
  void Text(const std::string& text, uint8_t mask) {
    tok_.EncodeAppend(text, &out_.ids);
    out_.mask.resize(out_.ids.size(), mask);
  }
  RenderedConversation Take(int max_tokens) && {
    if (out_.ids.size() > static_cast<size_t>(max_tokens)) {
      out_.ids.resize(max_tokens);
      out_.mask.resize(max_tokens);
    }
    return std::move(out_);
  }

 private:
  const Tokenizer& tok_;
  RenderedConversation out_;
};

void RenderAssistant(const Message& m, Renderer& r) {
  r.Special(SpecialToken::kAssistantStart, 0);
  if (!m.has_parts()) {
    r.Text(m.text(), 1);
  } else {
    for (const Part& p : m.parts()) {
      switch (p.kind) {
        case Part::Kind::kText:
          r.Text(p.text, 1);
          break;
        case Part::Kind::kPython:
          r.Special(SpecialToken::kPythonStart, 1);
          r.Text(p.text, 1);
          r.Special(SpecialToken::kPythonEnd, 1);
          break;
        case Part::Kind::kPythonOutput:
          r.Special(SpecialToken::kOutputStart, 0);
          r.Text(p.text, 0);
          r.Special(SpecialToken::kOutputEnd, 0);
          break;
      }
    }
  }
  r.Special(SpecialToken::kAssistantEnd, 1);
}

}  // namespace

absl::StatusOr<RenderedConversation> RenderConversation(const Conversation& conv, const Tokenizer& tok,
                                                        int max_tokens) {
  if (max_tokens < 1) return absl::InvalidArgumentError(absl::StrCat("max_tokens must be >= 1, got ", max_tokens));
  if (absl::Status s = ValidateConversation(conv); !s.ok()) return s;
  const std::vector<Message>& m = conv.messages;
  // Validated: m[0] is system or user, and a system message is followed by a user one.
  size_t i = 0;
  Renderer r(tok);
  r.Special(SpecialToken::kBos, 0);
  for (; i < m.size(); ++i) {
    switch (m[i].role) {
      case Role::kSystem:
        // Folded into the next (user) message, which is rendered here and skipped.
        r.Special(SpecialToken::kUserStart, 0);
        r.Text(absl::StrCat(m[i].text(), "\n\n", m[i + 1].text()), 0);
        r.Special(SpecialToken::kUserEnd, 0);
        ++i;
        break;
      case Role::kUser:
        r.Special(SpecialToken::kUserStart, 0);
        r.Text(m[i].text(), 0);
        r.Special(SpecialToken::kUserEnd, 0);
        break;
      case Role::kAssistant:
        RenderAssistant(m[i], r);
        break;
    }
  }
  return std::move(r).Take(max_tokens);
}

absl::StatusOr<std::vector<int32_t>> RenderForCompletion(const Conversation& conv, const Tokenizer& tok,
                                                         int max_tokens) {
  if (conv.messages.size() < 2 || conv.messages.back().role != Role::kAssistant) {
    return absl::InvalidArgumentError(
        "render_for_completion needs a conversation of at least 2 messages ending in an assistant message");
  }
  Conversation prompt;
  prompt.messages.assign(conv.messages.begin(), conv.messages.end() - 1);
  absl::StatusOr<RenderedConversation> rendered = RenderConversation(prompt, tok, max_tokens);
  if (!rendered.ok()) return rendered.status();
  rendered->ids.push_back(tok.SpecialId(SpecialToken::kAssistantStart));
  return std::move(rendered->ids);
}

}  // namespace gpt_sft::data
