// Reading JSON files with nlohmann::json: the file read and parsed in one call, and errors
// that name the file and, for a syntax error, the line and column where parsing stopped
// (compiler style, "meta_000650.json:3:14: not JSON: ..."), so a user can open the file there.
// Code that builds JSON uses nlohmann::json directly; field access with errors that name the
// field is base/json_fields.h.
#ifndef GPT_SFT_BASE_JSON_FILE_H_
#define GPT_SFT_BASE_JSON_FILE_H_

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/read_file.h"

namespace gpt_sft::base {

/// Our JSON value: objects keep their keys in file order, so what is read and written back
/// (reports, checkpoint metas) keeps the order a person wrote or a tool printed.
using Json = nlohmann::ordered_json;

namespace json_internal {
/// InvalidArgument "<where>:<line>:<column>: not JSON: <reason>", the position of the byte
/// `byte` (nlohmann's 1-based offset of the last byte read) in `text`.
absl::Status SyntaxError(absl::string_view text, absl::string_view where, size_t byte, absl::string_view what);
/// InvalidArgument "<where>: not JSON: <what>", for an error nlohmann gives no offset for.
absl::Status OtherError(absl::string_view where, absl::string_view what);
}  // namespace json_internal

/// Parses `text`, the contents of `where` (a file name, or a label for text from elsewhere).
/// A syntax error is InvalidArgument with json_internal::SyntaxError's message. JsonT is
/// Json or nlohmann::json (sorted keys), whichever the caller keeps.
template <typename JsonT = Json>
absl::StatusOr<JsonT> ParseJson(absl::string_view text, absl::string_view where) {
  try {
    return JsonT::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return json_internal::SyntaxError(text, where, e.byte, e.what());
  } catch (const nlohmann::json::exception& e) {
    return json_internal::OtherError(where, e.what());
  }
}

/// ReadFile + ParseJson. Errors: NotFound "<path>: cannot open", DataLoss "<path>: read
/// error", and a file that is not JSON is DataLoss (the file is damaged) with ParseJson's
/// message.
template <typename JsonT = Json>
absl::StatusOr<JsonT> ReadJsonFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<JsonT> json = ParseJson<JsonT>(*text, path);
  if (!json.ok()) return absl::DataLossError(json.status().message());
  return json;
}

}  // namespace gpt_sft::base

#endif  // GPT_SFT_BASE_JSON_FILE_H_
