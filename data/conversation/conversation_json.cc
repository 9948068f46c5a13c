// Implements ParseConversationJson with nlohmann/json.
#include "data/conversation/conversation_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

using nlohmann::json;

absl::Status Error(const std::string& where, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
}

// The JSON type of `j` in words, for "content must be ... (got a number)".
std::string TypeOf(const json& j) { return j.is_null() ? "null" : j.type_name(); }

absl::StatusOr<Role> ParseRole(const json& m, size_t i) {
  const auto it = m.find("role");
  if (it == m.end() || !it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("messages[", i, "] has no string \"role\""));
  }
  const std::string& role = it->get_ref<const std::string&>();
  if (role == "user") return Role::kUser;
  if (role == "assistant") return Role::kAssistant;
  if (role == "system") return Role::kSystem;
  return absl::InvalidArgumentError(
      absl::StrCat("messages[", i, "] has unknown role \"", role, "\" (allowed: system, user, assistant)"));
}

absl::StatusOr<Part> ParsePart(const json& p, size_t i, size_t k) {
  const std::string at = absl::StrCat("messages[", i, "].content[", k, "]");
  if (!p.is_object()) return absl::InvalidArgumentError(absl::StrCat(at, " must be an object, got ", TypeOf(p)));
  const auto type = p.find("type");
  const auto text = p.find("text");
  if (type == p.end() || !type->is_string() || text == p.end() || !text->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(at, " needs a string \"type\" and a string \"text\""));
  }
  Part part;
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "text") {
    part.kind = Part::Kind::kText;
  } else if (t == "python") {
    part.kind = Part::Kind::kPython;
  } else if (t == "python_output") {
    part.kind = Part::Kind::kPythonOutput;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(at, " has unknown part type \"", t, "\" (allowed: text, python, python_output)"));
  }
  part.text = text->get<std::string>();
  return part;
}

absl::StatusOr<Message> ParseMessage(const json& m, size_t i) {
  if (!m.is_object()) return absl::InvalidArgumentError(absl::StrCat("messages[", i, "] must be an object, got ", TypeOf(m)));
  absl::StatusOr<Role> role = ParseRole(m, i);
  if (!role.ok()) return role.status();
  const auto content = m.find("content");
  if (content != m.end() && content->is_string()) return Message{*role, content->get<std::string>()};
  if (content != m.end() && content->is_array()) {
    std::vector<Part> parts;
    for (size_t k = 0; k < content->size(); ++k) {
      absl::StatusOr<Part> part = ParsePart((*content)[k], i, k);
      if (!part.ok()) return part.status();
      parts.push_back(*std::move(part));
    }
    return Message{*role, std::move(parts)};
  }
  return absl::InvalidArgumentError(absl::StrCat("messages[", i, "] content must be a string or a list of parts, got ",
                                                 content == m.end() ? "nothing" : TypeOf(*content)));
}

}  // namespace

absl::StatusOr<Conversation> ParseConversationJson(const std::string& text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return Error(where, absl::StrCat("malformed JSON: ", e.what()));
  }
  if (!doc.is_array()) return Error(where, absl::StrCat("expected a JSON array of messages, got ", TypeOf(doc)));
  if (doc.empty()) return Error(where, "empty conversation");
  Conversation conv;
  for (size_t i = 0; i < doc.size(); ++i) {
    absl::StatusOr<Message> m = ParseMessage(doc[i], i);
    if (!m.ok()) return Error(where, std::string(m.status().message()));
    conv.messages.push_back(*std::move(m));
  }
  if (absl::Status s = ValidateConversation(conv); !s.ok()) return Error(where, std::string(s.message()));
  return conv;
}

}  // namespace gpt_sft::data
