// //data:tok_train: trains a byte-level BPE tokenizer on text files and prints what it
// learned.  Usage: tok_train --input=a.txt,b.txt --vocab_size=8192 --output=tok.bpe
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "data/io/utf8.h"
#include "data/tokenizer/tokenizer.h"
#include "data/tools/user_path.h"

ABSL_FLAG(std::string, input, "", "comma-separated text files to train on");
ABSL_FLAG(int, vocab_size, 8192, "vocabulary size including the 9 special tokens (nanochat: 65536)");
ABSL_FLAG(std::string, output, "", "where to write the tokenizer (format: data/tokenizer/FORMAT.md)");

namespace gpt_sft::data {
namespace {

int Fail(const std::string& message) {
  std::cerr << "tok_train: error: " << message << "\n";
  return 2;
}

std::string Printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n') out += "\\n";
    else if (c < 0x20 || c == 0x7f) out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    else out += static_cast<char>(c);
  }
  return out;
}

// Bytes of `text` outside valid UTF-8 (each becomes a chunk of its own when training).
size_t InvalidUtf8Bytes(std::string_view text) {
  size_t invalid = 0;
  while (!text.empty()) {
    const size_t valid = ValidUtf8PrefixLength(text);
    text.remove_prefix(valid);
    if (!text.empty()) ++invalid, text.remove_prefix(1);
  }
  return invalid;
}

// Reads every --input file; the error names the file.
absl::StatusOr<std::vector<std::string>> ReadInputs(const std::string& input) {
  std::vector<std::string> texts;
  for (absl::string_view path : absl::StrSplit(input, ',', absl::SkipEmpty())) {
    const std::string user_path = UserPath(std::string(path));
    std::error_code ec;  // a path that cannot be inspected is reported by the open below
    if (std::filesystem::is_directory(user_path, ec)) {
      return absl::InvalidArgumentError(absl::StrCat("--input: ", path, " is a directory, not a text file"));
    }
    std::ifstream in{user_path, std::ios::binary};
    if (!in) return absl::NotFoundError(absl::StrCat("--input: cannot open ", path));
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return absl::DataLossError(absl::StrCat("--input: cannot read ", path));
    texts.push_back(ss.str());
    std::cerr << "tok_train: read " << path << " (" << texts.back().size() << " bytes)\n";
    if (texts.back().empty()) std::cerr << "tok_train: note: " << path << " is empty\n";
    if (size_t bad = InvalidUtf8Bytes(texts.back()); bad > 0) {
      std::cerr << "tok_train: note: " << path << " is not valid UTF-8 (" << bad
                << " bytes); each such byte is trained as a chunk of its own\n";
    }
  }
  if (texts.empty()) return absl::InvalidArgumentError("--input names no file");
  return texts;
}

int Main() {
  const std::string input = absl::GetFlag(FLAGS_input), output = absl::GetFlag(FLAGS_output);
  if (input.empty()) return Fail("--input is required: comma-separated text files");
  if (output.empty()) return Fail("--output is required: the tokenizer file to write");
  const int vocab_size = absl::GetFlag(FLAGS_vocab_size);
  if (vocab_size < Tokenizer::kMinVocabSize || vocab_size > Tokenizer::kMaxVocabSize) {
    return Fail(absl::StrCat("--vocab_size=", vocab_size, " is out of range: ",
                             Tokenizer::kMinVocabSize, "..", Tokenizer::kMaxVocabSize,
                             " (256 bytes + merges + 9 special tokens)"));
  }
  absl::StatusOr<std::vector<std::string>> inputs = ReadInputs(input);
  if (!inputs.ok()) return Fail(std::string(inputs.status().message()));
  const std::vector<std::string>& texts = *inputs;
  size_t bytes = 0;
  for (const std::string& t : texts) bytes += t.size();
  std::cerr << "tok_train: training " << vocab_size << " tokens on " << bytes
            << " bytes...\n";
  const absl::Time start = absl::Now();
  absl::StatusOr<Tokenizer> tok = Tokenizer::Train(texts, vocab_size);
  if (!tok.ok()) return Fail(std::string(tok.status().message()));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (absl::Status s = tok->Save(UserPath(output)); !s.ok()) return Fail(std::string(s.message()));

  size_t tokens = 0;
  for (const std::string& t : texts) tokens += tok->Encode(t).size();
  std::cout << "merges: " << tok->num_merges() << " (trained in " << seconds << " s)\n"
            << "vocab_size: " << tok->vocab_size();
  if (tok->vocab_size() < vocab_size) {
    std::cout << " (the text ran out of pairs before --vocab_size=" << vocab_size << ")";
  }
  std::cout << "\nspecial ids:";
  for (int i = 0; i < kNumSpecialTokens; ++i) {
    const auto t = static_cast<SpecialToken>(i);
    std::cout << " " << SpecialTokenText(t) << "=" << tok->SpecialId(t);
  }
  std::cout << "\nbytes/token on the input: " << static_cast<double>(bytes) / std::max<size_t>(tokens, 1)
            << " (" << bytes << " bytes, " << tokens << " tokens)\n";
  std::vector<int32_t> ids(tok->num_mergeable());
  for (int32_t i = 0; i < tok->num_mergeable(); ++i) ids[i] = i;
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return tok->TokenBytes(a).size() > tok->TokenBytes(b).size();
  });
  std::cout << "longest tokens:";
  for (int i = 0; i < std::min(10, tok->num_mergeable()); ++i) {
    std::cout << " [" << Printable(tok->TokenBytes(ids[i])) << "]";
  }
  std::cout << "\nwrote " << output << "\n";
  return 0;
}

}  // namespace
}  // namespace gpt_sft::data

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("tok_train --input=FILES --vocab_size=N --output=PATH");
  std::vector<char*> args = gpt_sft::base::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::cerr << "tok_train: error: unexpected argument '" << args[1] << "' (did you mean --input=?)\n";
    return 2;
  }
  return gpt_sft::data::Main();
}
