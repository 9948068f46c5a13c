// Implements PickleValue's description and lookup.
#include "base/pickle_value.h"

#include "absl/strings/str_cat.h"

namespace gpt_sft::base {

std::string PickleValue::Describe() const {
  // Long strings are cut, so a message about a 65k-entry dict stays one line.
  auto quoted = [](const std::string& s) {
    return absl::StrCat("'", s.size() > 40 ? s.substr(0, 40) + "..." : s, "'");
  };
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return boolean ? "True" : "False";
    case Kind::kInt: return absl::StrCat("int ", integer);
    case Kind::kFloat: return absl::StrCat("float ", real);
    case Kind::kString: return absl::StrCat("str ", quoted(text));
    case Kind::kBytes: return absl::StrCat("bytes of length ", text.size());
    case Kind::kTuple: return absl::StrCat("tuple of ", items.size());
    case Kind::kList: return absl::StrCat("list of ", items.size());
    case Kind::kDict: return absl::StrCat(global.empty() ? "dict" : global, " of ", entries.size());
    case Kind::kGlobal: return global;
    case Kind::kObject: return absl::StrCat(global, "(...)");
    case Kind::kPersistentId: return "persistent id";
  }
  return "?";
}

const PickleValue* PickleValue::Find(const std::string& key) const {
  if (kind != Kind::kDict) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k->kind == Kind::kString && k->text == key) return v.get();
  }
  return nullptr;
}

}  // namespace gpt_sft::base
