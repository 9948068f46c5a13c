// Implements tokenizer.pkl reading (rank table -> merges) and writing.
#include "data/tokenizer/tiktoken_pickle.h"

#include <fstream>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_file.h"
#include "base/pickle_reader.h"
#include "base/pickle_value.h"
#include "base/pickle_writer.h"
#include "base/read_file.h"

namespace gpt_sft::data {
namespace {

using base::PickleValue;
using Kind = PickleValue::Kind;

// "b'\\xff ab'"-like text of a token's bytes for messages.
std::string Printable(const std::string& bytes) {
  std::string out = "b'";
  for (unsigned char c : bytes.substr(0, 32)) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    }
  }
  return out + (bytes.size() > 32 ? "...'" : "'");
}

// The two earlier tokens that make `bytes` (rank r): byte-level BPE over ranks below r, as
// tiktoken would encode it with only those tokens; a BPE-trained table ends in exactly two
// parts, the pair that was merged. Otherwise any split into two earlier tokens will do
// (encoding depends only on which byte strings are tokens); none is an error.
std::optional<BpeMerge> MergeOf(const std::string& bytes, int32_t r,
                                const absl::flat_hash_map<std::string, int32_t>& rank) {
  auto rank_below_r = [&](const std::string& s) {
    auto it = rank.find(s);
    return it != rank.end() && it->second < r ? it->second : std::numeric_limits<int32_t>::max();
  };
  std::vector<std::string> parts;
  for (char c : bytes) parts.push_back(std::string(1, c));
  while (parts.size() > 2) {
    int32_t best = std::numeric_limits<int32_t>::max();
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (const int32_t k = rank_below_r(parts[i] + parts[i + 1]); k < best) best = k, at = i;
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + at + 1);
  }
  if (parts.size() == 2 && rank_below_r(parts[0]) < r && rank_below_r(parts[1]) < r) {
    return BpeMerge{rank.at(parts[0]), rank.at(parts[1])};
  }
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    const int32_t left = rank_below_r(bytes.substr(0, cut)), right = rank_below_r(bytes.substr(cut));
    if (left < r && right < r) return BpeMerge{left, right};
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<BpeMerge>> MergesOf(const std::string& path, const PickleValue& ranks) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": mergeable_ranks: ", what));
  };
  if (!ranks.is(Kind::kDict)) return bad(absl::StrCat("is a ", ranks.Describe(), ", not a dict bytes -> int"));
  const int64_t n = static_cast<int64_t>(ranks.entries.size());
  if (n < 256 || n > 256 + int64_t{kMaxMerges}) {
    return bad(absl::StrCat(n, " tokens; between 256 and ", 256 + int64_t{kMaxMerges}, " are readable"));
  }
  std::vector<const std::string*> bytes_of(n, nullptr);
  absl::flat_hash_map<std::string, int32_t> rank;
  for (const auto& [k, v] : ranks.entries) {
    if (!k->is(Kind::kBytes) || !v->is(Kind::kInt)) {
      return bad(absl::StrCat("an entry ", k->Describe(), " -> ", v->Describe(), " is not bytes -> int"));
    }
    if (v->integer < 0 || v->integer >= n || bytes_of[v->integer] != nullptr) {
      return bad(absl::StrCat("rank ", v->integer, " of ", Printable(k->text), " is out of 0..", n - 1,
                              " or repeated; ranks must be 0..N-1, each once"));
    }
    bytes_of[v->integer] = &k->text;
    rank.emplace(k->text, static_cast<int32_t>(v->integer));
  }
  for (int b = 0; b < 256; ++b) {
    if (*bytes_of[b] != std::string(1, static_cast<char>(b))) {
      return bad(absl::StrCat("rank ", b, " is ", Printable(*bytes_of[b]), ", not the single byte ", b,
                              "; nanochat's ranks 0..255 are the bytes in byte order (GPT-2's shuffled order is "
                              "not supported)"));
    }
  }
  std::vector<BpeMerge> merges;
  merges.reserve(n - 256);
  for (int32_t r = 256; r < n; ++r) {
    std::optional<BpeMerge> m = MergeOf(*bytes_of[r], r, rank);
    if (!m) {
      return bad(absl::StrCat("token ", r, " ", Printable(*bytes_of[r]), " is not two earlier tokens joined; "
                              "not a byte-pair vocabulary"));
    }
    merges.push_back(*m);
  }
  return merges;
}

absl::Status CheckSpecials(const std::string& path, const PickleValue& specials, int32_t num_mergeable) {
  if (!specials.is(Kind::kDict) || specials.entries.size() != kNumSpecialTokens) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": special_tokens is a ", specials.Describe(), "; nanochat's ",
                                                   kNumSpecialTokens, " special tokens are expected"));
  }
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    const std::string name(kSpecialTokenTexts[i]);
    const PickleValue* id = specials.Find(name);
    if (id == nullptr || !id->is(Kind::kInt) || id->integer != num_mergeable + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": special token ", name, " is ", id == nullptr ? "missing" : id->Describe(), "; nanochat gives it id ",
          num_mergeable + i, " (the number of mergeable tokens + its position)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tokenizer> LoadTiktokenPickle(const std::string& path) {
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<base::PickleRef> root = base::ReadPickle(*bytes, path, {"tiktoken.core.Encoding"});
  if (!root.ok()) return root.status();
  const PickleValue& enc = **root;
  if (!enc.is(Kind::kObject) || enc.global != "tiktoken.core.Encoding" || enc.state == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": holds a ", enc.Describe(), ", not a pickled tiktoken.core.Encoding"));
  }
  if (enc.state->is(Kind::kString)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": pickles tiktoken's registered encoding '", enc.state->text,
                                                   "' by name, not its tokens; only a full encoding can be read"));
  }
  const PickleValue* pattern = enc.state->Find("pat_str");
  const PickleValue* ranks = enc.state->Find("mergeable_ranks");
  const PickleValue* specials = enc.state->Find("special_tokens");
  if (pattern == nullptr || !pattern->is(Kind::kString) || ranks == nullptr || specials == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the Encoding's state lacks pat_str (a str), mergeable_ranks or special_tokens"));
  }
  absl::StatusOr<std::vector<BpeMerge>> merges = MergesOf(path, *ranks);
  if (!merges.ok()) return merges.status();
  if (absl::Status s = CheckSpecials(path, *specials, 256 + static_cast<int32_t>(merges->size())); !s.ok()) return s;
  absl::StatusOr<Tokenizer> tok = Tokenizer::FromMerges(pattern->text, *std::move(merges));
  if (!tok.ok()) return absl::Status(tok.status().code(), absl::StrCat(path, ": ", tok.status().message()));
  return tok;
}

absl::StatusOr<Tokenizer> LoadTokenizerOfAnyKind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  in.get(first);
  if (in && static_cast<unsigned char>(first) == 0x80) return LoadTiktokenPickle(path);
  return Tokenizer::Load(path);
}

absl::Status SaveTiktokenPickle(const Tokenizer& tok, const std::string& path) {
  base::PickleWriter p(4);  // pickle.dump's default protocol in the Pythons nanochat runs
  p.Global("tiktoken.core", "Encoding");
  p.EmptyTuple();
  p.NewObj();
  p.EmptyDict();
  p.Mark();
  p.Str("name");
  p.Str("rustbpe");
  p.Str("pat_str");
  p.Str(tok.pattern());
  p.Str("mergeable_ranks");
  p.EmptyDict();
  p.Mark();
  for (int32_t id = 0; id < tok.num_mergeable(); ++id) {
    p.Bytes(tok.TokenBytes(id));
    p.Int(id);
  }
  p.SetItems();
  p.Str("special_tokens");
  p.EmptyDict();
  p.Mark();
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    p.Str(std::string(kSpecialTokenTexts[i]));
    p.Int(tok.num_mergeable() + i);
  }
  p.SetItems();
  p.SetItems();
  p.Build();
  return base::WriteFileAtomically(path, std::move(p).Finish());
}

}  // namespace gpt_sft::data
