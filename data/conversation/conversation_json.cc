// Implements ParseConversationJson with nlohmann/json.
#include "data/conversation/conversation_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace gpt_sft::data {
namespace {

absl::Status Error(const std::string& where, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
}

absl::StatusOr<Role> ParseRole(const nlohmann::json& m, const std::string& where, size_t i) {
  if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
    return Error(where, absl::StrCat("message ", i, " has no string \"role\""));
  }
  const std::string role = m["role"].get<std::string>();
  if (role == "user") return Role::kUser;
  if (role == "assistant") return Role::kAssistant;
  if (role == "system") return Role::kSystem;
  return Error(where, absl::StrCat("message ", i, " has unknown role \"", role,
                                   "\" (allowed: system, user, assistant)"));
}

absl::StatusOr<std::vector<Part>> ParseParts(const nlohmann::json& content, const std::string& where,
                                             size_t i) {
  std::vector<Part> parts;
  for (const nlohmann::json& p : content) {
    if (!p.is_object() || !p.contains("type") || !p["type"].is_string() || !p.contains("text") ||
        !p["text"].is_string()) {
      return Error(where, absl::StrCat("message ", i, ": each part needs string \"type\" and \"text\""));
    }
    const std::string type = p["type"].get<std::string>();
    Part part;
    part.text = p["text"].get<std::string>();
    if (type == "text") part.kind = Part::Kind::kText;
    else if (type == "python") part.kind = Part::Kind::kPython;
    else if (type == "python_output") part.kind = Part::Kind::kPythonOutput;
    else return Error(where, absl::StrCat("message ", i, ": unknown part type \"", type,
                                          "\" (allowed: text, python, python_output)"));
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

absl::StatusOr<Conversation> ParseConversationJson(const std::string& json, const std::string& where) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    return Error(where, absl::StrCat("malformed JSON: ", e.what()));
  }
  if (!doc.is_array()) return Error(where, "expected a JSON array of messages");
  if (doc.empty()) return Error(where, "empty conversation");
  Conversation conv;
  for (size_t i = 0; i < doc.size(); ++i) {
    absl::StatusOr<Role> role = ParseRole(doc[i], where, i);
    if (!role.ok()) return role.status();
    Message msg;
    msg.role = *role;
    const nlohmann::json& content = doc[i].contains("content") ? doc[i]["content"] : nlohmann::json();
    if (content.is_string()) {
      msg.content = content.get<std::string>();
    } else if (content.is_array() && msg.role == Role::kAssistant) {
      absl::StatusOr<std::vector<Part>> parts = ParseParts(content, where, i);
      if (!parts.ok()) return parts.status();
      msg.parts = *std::move(parts);
    } else {
      return Error(where, absl::StrCat("message ", i, " content must be a string",
                                       msg.role == Role::kAssistant ? " or a list of parts" : ""));
    }
    conv.messages.push_back(std::move(msg));
  }
  // Alternation: [system] user assistant user ...
  size_t first = conv.messages[0].role == Role::kSystem ? 1 : 0;
  if (first == conv.messages.size()) return Error(where, "a system message must be followed by a user message");
  for (size_t i = first; i < conv.messages.size(); ++i) {
    const Role expected = (i - first) % 2 == 0 ? Role::kUser : Role::kAssistant;
    if (conv.messages[i].role != expected) {
      return Error(where, absl::StrCat("message ", i, ": roles must alternate user, assistant, ... starting with user"));
    }
  }
  return conv;
}

}  // namespace gpt_sft::data
