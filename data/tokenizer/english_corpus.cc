// Implements the test corpus readers.
#include "data/tokenizer/english_corpus.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpt_sft::data {
namespace {

std::string ReadOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in || ss.str().empty()) {
    std::fprintf(stderr, "english_corpus: cannot read %s (is it in the target's data?)\n",
                 path.c_str());
    std::abort();
  }
  return ss.str();
}

}  // namespace

const std::vector<std::string>& LicenseFileNames() {
  static const auto* names = new std::vector<std::string>{
      "Apache-2.0", "Artistic", "BSD",      "CC0-1.0", "GFDL-1.2", "GFDL-1.3", "GPL-1",
      "GPL-2",      "GPL-3",    "LGPL-2",   "LGPL-2.1", "LGPL-3",  "MPL-1.1",  "MPL-2.0"};
  return *names;
}

const std::vector<std::string>& LicenseTexts() {
  static const auto* texts = [] {
    auto* out = new std::vector<std::string>;
    for (const std::string& name : LicenseFileNames()) {
      out->push_back(ReadOrDie("external/english_text/" + name));
    }
    return out;
  }();
  return *texts;
}

const std::string& WordListText() {
  static const auto* words = new std::string(ReadOrDie("external/wordlist/words"));
  return *words;
}

}  // namespace gpt_sft::data
