// Implements Tokenizer::Save and Tokenizer::Load (format: data/tokenizer/FORMAT.md).
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "data/io/atomic_file.h"
#include "data/tokenizer/tokenizer.h"

namespace gpt_sft::data {
namespace {

constexpr absl::string_view kMagic = "gpt-sft-bpe 1";

class LineReader {
 public:
  LineReader(std::string path, std::string contents)
      : path_(std::move(path)), lines_(absl::StrSplit(std::move(contents), '\n')) {}
  // The next line, or an error naming the file and line when the file ends early.
  absl::StatusOr<std::string> Next(absl::string_view what) {
    if (index_ >= lines_.size() || (index_ + 1 == lines_.size() && lines_[index_].empty())) {
      return Error(absl::StrCat("file ends early; expected ", what));
    }
    return lines_[index_++];
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", index_ + (index_ < lines_.size() ? 1 : 0),
                                                   ": ", message));
  }
  absl::Status ErrorAtLast(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ":", index_, ": ", message));
  }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  size_t index_ = 0;
};

// "name <integer>" -> the integer.
absl::StatusOr<int64_t> ParseCount(LineReader& r, absl::string_view name) {
  auto line = r.Next(name);
  if (!line.ok()) return line.status();
  int64_t n;
  absl::string_view rest = *line;
  if (!absl::ConsumePrefix(&rest, absl::StrCat(name, " ")) || !absl::SimpleAtoi(rest, &n) || n < 0) {
    return r.ErrorAtLast(absl::StrCat("expected '", name, " <count>', got '", *line, "'"));
  }
  return n;
}

}  // namespace

absl::Status Tokenizer::Save(const std::string& path) const {
  std::string out = absl::StrCat(kMagic, "\npattern ", pattern(), "\nmerges ", merges_.size(), "\n");
  for (const auto& [left, right] : merges_) absl::StrAppend(&out, left, " ", right, "\n");
  absl::StrAppend(&out, "specials ", kNumSpecialTokens, "\n");
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    absl::StrAppend(&out, std::string(kSpecialTokenTexts[i]), " ", num_mergeable() + i, "\n");
  }
  absl::StrAppend(&out, "end\n");
  return WriteFileAtomically(path, out);
}

absl::StatusOr<Tokenizer> Tokenizer::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open tokenizer file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  LineReader r(path, buffer.str());

  auto magic = r.Next("the magic line");
  if (!magic.ok()) return magic.status();
  if (*magic != kMagic) {
    return r.ErrorAtLast(absl::StrCat("not a tokenizer file of this version: expected '", kMagic,
                                      "', got '", magic->substr(0, 40), "'"));
  }
  auto pattern_line = r.Next("the pattern");
  if (!pattern_line.ok()) return pattern_line.status();
  absl::string_view pattern = *pattern_line;
  if (!absl::ConsumePrefix(&pattern, "pattern ")) return r.ErrorAtLast("expected 'pattern <regex>'");

  auto num_merges = ParseCount(r, "merges");
  if (!num_merges.ok()) return num_merges.status();
  std::vector<BpeMerge> merges;
  merges.reserve(*num_merges);
  for (int64_t i = 0; i < *num_merges; ++i) {
    auto line = r.Next("a merge");
    if (!line.ok()) return line.status();
    std::vector<absl::string_view> parts = absl::StrSplit(*line, ' ');
    int32_t left, right;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &left) || !absl::SimpleAtoi(parts[1], &right)) {
      return r.ErrorAtLast(absl::StrCat("expected '<left> <right>', got '", *line, "'"));
    }
    merges.emplace_back(left, right);
  }
  auto num_specials = ParseCount(r, "specials");
  if (!num_specials.ok()) return num_specials.status();
  if (*num_specials != kNumSpecialTokens) {
    return r.ErrorAtLast(absl::StrCat("expected ", kNumSpecialTokens, " special tokens"));
  }
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    auto line = r.Next("a special token");
    if (!line.ok()) return line.status();
    const std::string expected = absl::StrCat(std::string(kSpecialTokenTexts[i]), " ", 256 + *num_merges + i);
    if (*line != expected) {
      return r.ErrorAtLast(absl::StrCat("expected '", expected, "', got '", *line, "'"));
    }
  }
  auto end = r.Next("'end'");
  if (!end.ok()) return end.status();
  if (*end != "end") return r.ErrorAtLast("expected 'end'");

  absl::StatusOr<Tokenizer> tok = FromMerges(std::string(pattern), std::move(merges));
  if (!tok.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", tok.status().message()));
  return tok;
}

}  // namespace gpt_sft::data
