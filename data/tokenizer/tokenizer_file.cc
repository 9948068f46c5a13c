// Implements Tokenizer::Save and Tokenizer::Load (format: data/tokenizer/FORMAT.md).
//
// Load is strict: a file is accepted only if it is exactly what Save would write for some
// pattern and merge list (a missing final newline aside), so that a foreign, truncated or
// hand-damaged file fails with the line at fault rather than loading as a different vocabulary.
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/atomic_file.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {
namespace {

constexpr absl::string_view kMagicName = "gpt-sft-bpe";
constexpr absl::string_view kVersion = "1";

// The file's lines with 1-based numbers for errors. A file ending in '\n' has no empty
// last line.
class LineReader {
 public:
  LineReader(std::string path, const std::string& contents) : path_(std::move(path)) {
    lines_ = absl::StrSplit(contents, '\n');
    if (!lines_.empty() && lines_.back().empty()) lines_.pop_back();
  }

  // The next line, or an error naming the line where the file ended.
  absl::StatusOr<absl::string_view> Next(absl::string_view what) {
    if (index_ >= lines_.size()) {
      ++index_;
      return Error(absl::StrCat("file ends early; expected ", what));
    }
    return absl::string_view(lines_[index_++]);
  }
  size_t Remaining() const { return index_ < lines_.size() ? lines_.size() - index_ : 0; }

  // An error at the line most recently returned by Next.
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", index_, ": ", message));
  }
  absl::Status ErrorAtLine(int64_t line, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", line, ": ", message));
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  size_t index_ = 0;
};

// Lines are quoted in errors, cut short and with control bytes escaped.
std::string Quote(absl::string_view line) {
  return absl::StrCat("'", absl::CEscape(line.substr(0, 60)), line.size() > 60 ? "...'" : "'");
}

// A decimal number with digits only (no sign, space or '+', which SimpleAtoi would allow).
bool ParseDecimal(absl::string_view s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t n = 0;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + (c - '0');
  }
  if (n > max) return false;
  *out = n;
  return true;
}

// "<name> <count>" -> count.
absl::StatusOr<int64_t> ParseCount(LineReader& r, absl::string_view name, int64_t max) {
  absl::StatusOr<absl::string_view> line = r.Next(absl::StrCat("'", name, " <count>'"));
  if (!line.ok()) return line.status();
  absl::string_view rest = *line;
  int64_t n;
  if (!absl::ConsumePrefix(&rest, absl::StrCat(name, " ")) || !ParseDecimal(rest, max, &n)) {
    return r.Error(absl::StrCat("expected '", name, " <count>' with a count in 0..", max,
                                ", got ", Quote(*line)));
  }
  return n;
}

absl::Status CheckMagic(LineReader& r) {
  absl::StatusOr<absl::string_view> magic = r.Next(absl::StrCat("the magic line '", kMagicName,
                                                                " ", kVersion, "'"));
  if (!magic.ok()) return magic.status();
  absl::string_view version = *magic;
  if (!absl::ConsumePrefix(&version, absl::StrCat(kMagicName, " "))) {
    return r.Error(absl::StrCat("not a tokenizer file: expected '", kMagicName, " ", kVersion,
                                "', got ", Quote(*magic)));
  }
  if (version != kVersion) {
    return r.Error(absl::StrCat("tokenizer file version ", Quote(version),
                                " is not supported (this build reads version ", kVersion, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ParsePattern(LineReader& r) {
  absl::StatusOr<absl::string_view> line = r.Next("'pattern <regex>'");
  if (!line.ok()) return line.status();
  absl::string_view pattern = *line;
  if (!absl::ConsumePrefix(&pattern, "pattern ") || pattern.empty()) {
    return r.Error(absl::StrCat("expected 'pattern <regex>', got ", Quote(*line)));
  }
  absl::StatusOr<SplitPattern> compiled =
      SplitPattern::Compile(std::string_view(pattern.data(), pattern.size()));
  if (!compiled.ok()) return r.Error(compiled.status().message());
  return std::string(pattern);
}

// "<left> <right>"; Build checks that both tokens exist and the merge makes new bytes.
absl::StatusOr<BpeMerge> ParseMerge(LineReader& r) {
  absl::StatusOr<absl::string_view> line = r.Next("a merge '<left> <right>'");
  if (!line.ok()) return line.status();
  std::vector<absl::string_view> parts = absl::StrSplit(*line, ' ');
  int64_t left, right;
  if (parts.size() != 2 || !ParseDecimal(parts[0], kMaxMerges + 256, &left) ||
      !ParseDecimal(parts[1], kMaxMerges + 256, &right)) {
    return r.Error(absl::StrCat("expected a merge '<left> <right>' (two token ids), got ",
                                Quote(*line)));
  }
  return BpeMerge(static_cast<int32_t>(left), static_cast<int32_t>(right));
}

absl::Status CheckSpecials(LineReader& r, int64_t num_mergeable) {
  absl::StatusOr<int64_t> n = ParseCount(r, "specials", kNumSpecialTokens);
  if (!n.ok()) return n.status();
  if (*n != kNumSpecialTokens) {
    return r.Error(absl::StrCat("expected 'specials ", kNumSpecialTokens, "', got 'specials ",
                                *n, "'"));
  }
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    const std::string expected = absl::StrCat(std::string(kSpecialTokenTexts[i]), " ",
                                              num_mergeable + i);
    absl::StatusOr<absl::string_view> line = r.Next(absl::StrCat("'", expected, "'"));
    if (!line.ok()) return line.status();
    if (*line != expected) {
      return r.Error(absl::StrCat("expected special token '", expected, "' (nanochat's order, ids ",
                                  "from 256 + merges), got ", Quote(*line)));
    }
  }
  absl::StatusOr<absl::string_view> end = r.Next("'end'");
  if (!end.ok()) return end.status();
  if (*end != "end") return r.Error(absl::StrCat("expected 'end', got ", Quote(*end)));
  if (r.Remaining() > 0) {
    (void)r.Next("");
    return r.Error("unexpected content after 'end'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Tokenizer::Save(const std::string& path) const {
  std::string out = absl::StrCat(kMagicName, " ", kVersion, "\npattern ", pattern(), "\nmerges ",
                                 merges_.size(), "\n");
  for (const auto& [left, right] : merges_) absl::StrAppend(&out, left, " ", right, "\n");
  absl::StrAppend(&out, "specials ", kNumSpecialTokens, "\n");
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    absl::StrAppend(&out, std::string(kSpecialTokenTexts[i]), " ", num_mergeable() + i, "\n");
  }
  absl::StrAppend(&out, "end\n");
  return base::WriteFileAtomically(path, out);
}

// Lines: 1 magic, 2 pattern, 3 "merges N", 4..3+N merges, then "specials 9", 9 specials,
// "end".
absl::StatusOr<Tokenizer> Tokenizer::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open tokenizer file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read tokenizer file ", path));
  LineReader r(path, buffer.str());

  if (absl::Status s = CheckMagic(r); !s.ok()) return s;
  absl::StatusOr<std::string> pattern = ParsePattern(r);
  if (!pattern.ok()) return pattern.status();
  absl::StatusOr<int64_t> num_merges = ParseCount(r, "merges", kMaxMerges);
  if (!num_merges.ok()) return num_merges.status();
  if (static_cast<size_t>(*num_merges) > r.Remaining()) {
    return r.Error(absl::StrCat("promises ", *num_merges, " merges but only ", r.Remaining(),
                                " lines follow: the file is truncated or corrupt"));
  }
  std::vector<BpeMerge> merges;
  merges.reserve(*num_merges);
  for (int64_t i = 0; i < *num_merges; ++i) {
    absl::StatusOr<BpeMerge> merge = ParseMerge(r);
    if (!merge.ok()) return merge.status();
    merges.push_back(*merge);
  }
  if (absl::Status s = CheckSpecials(r, 256 + *num_merges); !s.ok()) return s;

  constexpr int64_t kFirstMergeLine = 4;
  int64_t bad_merge = -1;
  absl::StatusOr<Tokenizer> tok = Build(*pattern, std::move(merges), &bad_merge);
  if (!tok.ok()) {
    return r.ErrorAtLine(bad_merge >= 0 ? kFirstMergeLine + bad_merge : 2, tok.status().message());
  }
  return tok;
}

}  // namespace gpt_sft::data
