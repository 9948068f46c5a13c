// Implements RenderConversation and RenderForCompletion (nanochat's mask rules).
#include "data/conversation/render.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

class Renderer {
 public:
  explicit Renderer(const Tokenizer& tok) : tok_(tok) {}
  void Special(SpecialToken t, uint8_t mask) { Add({tok_.SpecialId(t)}, mask); }
  void Text(const std::string& text, uint8_t mask) { Add(tok_.Encode(text), mask); }
  RenderedConversation Take(int max_tokens) && {
    if (static_cast<int>(out_.ids.size()) > max_tokens) {
      out_.ids.resize(max_tokens);
      out_.mask.resize(max_tokens);
    }
    return std::move(out_);
  }

 private:
  void Add(const std::vector<int32_t>& ids, uint8_t mask) {
    out_.ids.insert(out_.ids.end(), ids.begin(), ids.end());
    out_.mask.insert(out_.mask.end(), ids.size(), mask);
  }
  const Tokenizer& tok_;
  RenderedConversation out_;
};

void RenderAssistant(const Message& m, Renderer& r) {
  r.Special(SpecialToken::kAssistantStart, 0);
  if (m.parts.empty()) {
    r.Text(m.content, 1);
  }
  for (const Part& p : m.parts) {
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
  r.Special(SpecialToken::kAssistantEnd, 1);
}

}  // namespace

absl::StatusOr<RenderedConversation> RenderConversation(const Conversation& conv, const Tokenizer& tok,
                                                        int max_tokens) {
  std::vector<Message> messages = conv.messages;
  if (!messages.empty() && messages[0].role == Role::kSystem) {
    if (messages.size() < 2 || messages[1].role != Role::kUser) {
      return absl::InvalidArgumentError("a system message must be followed by a user message");
    }
    messages[1].content = absl::StrCat(messages[0].content, "\n\n", messages[1].content);
    messages.erase(messages.begin());
  }
  Renderer r(tok);
  r.Special(SpecialToken::kBos, 0);
  for (size_t i = 0; i < messages.size(); ++i) {
    const Message& m = messages[i];
    const Role expected = i % 2 == 0 ? Role::kUser : Role::kAssistant;
    if (m.role != expected) {
      return absl::InvalidArgumentError(
          absl::StrCat("message ", i, ": roles must alternate user, assistant, ... starting with user"));
    }
    if (m.role == Role::kUser) {
      if (!m.parts.empty()) return absl::InvalidArgumentError(absl::StrCat("message ", i, ": user content must be a string"));
      r.Special(SpecialToken::kUserStart, 0);
      r.Text(m.content, 0);
      r.Special(SpecialToken::kUserEnd, 0);
    } else {
      RenderAssistant(m, r);
    }
  }
  return std::move(r).Take(max_tokens);
}

absl::StatusOr<std::vector<int32_t>> RenderForCompletion(const Conversation& conv, const Tokenizer& tok,
                                                         int max_tokens) {
  if (conv.messages.empty() || conv.messages.back().role != Role::kAssistant) {
    return absl::InvalidArgumentError("render_for_completion needs a conversation ending in an assistant message");
  }
  Conversation prefix = conv;
  prefix.messages.pop_back();
  absl::StatusOr<RenderedConversation> rendered = RenderConversation(prefix, tok, max_tokens);
  if (!rendered.ok()) return rendered.status();
  rendered->ids.push_back(tok.SpecialId(SpecialToken::kAssistantStart));
  return std::move(rendered->ids);
}

}  // namespace gpt_sft::data
