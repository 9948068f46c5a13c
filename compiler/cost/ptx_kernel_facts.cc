// Implements ReadPtxKernelFacts:
//   1. split the module into entries: `.entry name(` + `.param` lines + `)`, then the body
//      between the next `{` and its matching `}`;
//   2. split the body into statements (`;`), dropping labels, predicates and directives;
//   3. give each `ld.param` destination its parameter, then propagate parameter sets from
//      source registers to destination registers over every other instruction until nothing
//      changes (a register defined in a loop can be read above its definition);
//   4. mark the parameters behind each load/store/atomic address: ld -> read, st -> written,
//      atom/red -> both; shared, local, param and const spaces are not global memory.
#include "compiler/cost/ptx_kernel_facts.h"

#include <cstdint>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpt_sft::compiler::cost {
namespace {

struct Statement {
  std::string opcode;                 // "ld.global.f32"
  std::vector<std::string> operands;  // "%f1", "[%rd6+4]", "{%f1, %f2}", ...
};

struct Entry {
  std::vector<std::string> params;  // names, in order
  std::vector<Statement> body;
};

/// `text` cut at every `separator` (std::string_view pieces; this absl's splitter takes its own
/// string_view type).
std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  for (size_t begin = 0;;) {
    const size_t end = text.find(separator, begin);
    pieces.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return pieces;
    begin = end + 1;
  }
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && absl::ascii_isspace(text.front())) text.remove_prefix(1);
  while (!text.empty() && absl::ascii_isspace(text.back())) text.remove_suffix(1);
  return text;
}

using ParamSet = uint64_t;  // bit i: parameter i (kernels here take a handful of buffers)
constexpr size_t kMaxParams = 64;

/// "%rd6" from "[%rd6+4]", "-%f1", "{%f1", "%rd6": the register an operand names, or "".
std::string RegisterIn(std::string_view operand) {
  const size_t at = operand.find('%');
  if (at == std::string_view::npos) return "";
  size_t end = at + 1;
  while (end < operand.size() && (absl::ascii_isalnum(operand[end]) || operand[end] == '_')) ++end;
  return std::string(operand.substr(at, end - at));
}

/// The parameter name inside "[name_param_3+0]" or "[name_param_3]".
std::string ParamNameIn(std::string_view operand) {
  if (!operand.empty() && operand[0] == '[') operand.remove_prefix(1);
  const size_t end = operand.find_first_of("+]");
  return std::string(operand.substr(0, end));
}

Statement ParseStatement(std::string_view text) {
  Statement s;
  text = Trim(text);
  if (!text.empty() && text[0] == '@') text = text.substr(std::min(text.size(), text.find_first_of(" \t")));
  text = Trim(text);
  const size_t space = text.find_first_of(" \t");
  s.opcode = std::string(text.substr(0, space));
  if (space == std::string_view::npos) return s;
  for (std::string_view op : SplitOn(text.substr(space + 1), ',')) {
    s.operands.push_back(std::string(Trim(op)));
  }
  return s;
}

/// The statements of a body: `;`-separated, without labels (`$L__BB0_1:`), directives
/// (`.reg`, `.shared`, ...), comments and braces of nested scopes.
std::vector<Statement> ParseBody(std::string_view body) {
  std::vector<Statement> out;
  std::string cleaned;
  for (std::string_view line : SplitOn(body, '\n')) {
    if (const size_t comment = line.find("//"); comment != std::string_view::npos) line = line.substr(0, comment);
    line = Trim(line);
    if (const size_t colon = line.find(':'); colon != std::string_view::npos && line[0] == '$') {
      line = Trim(line.substr(colon + 1));
    }
    cleaned.append(line.data(), line.size());
    cleaned.push_back('\n');
  }
  for (std::string_view piece : SplitOn(cleaned, ';')) {
    piece = Trim(piece);
    while (!piece.empty() && (piece[0] == '{' || piece[0] == '}')) piece = Trim(piece.substr(1));
    if (piece.empty() || piece[0] == '.') continue;
    out.push_back(ParseStatement(piece));
  }
  return out;
}

/// The index just past the `}` that closes the `{` at `open`, or npos.
size_t MatchingBrace(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

absl::StatusOr<std::map<std::string, Entry>> SplitEntries(std::string_view ptx) {
  std::map<std::string, Entry> entries;
  size_t at = 0;
  while ((at = ptx.find(".entry ", at)) != std::string_view::npos) {
    const size_t name_begin = at + 7, paren = ptx.find('(', name_begin);
    const size_t close = paren == std::string_view::npos ? paren : ptx.find(')', paren);
    if (close == std::string_view::npos) return absl::InvalidArgumentError("PTX: an .entry without its parameter list");
    const std::string name(Trim(ptx.substr(name_begin, paren - name_begin)));
    Entry entry;
    for (std::string_view p : SplitOn(ptx.substr(paren + 1, close - paren - 1), ',')) {
      p = Trim(p);  // ".param .u64 name_param_0": the name is the last word
      if (!p.empty()) entry.params.push_back(std::string(p.substr(p.find_last_of(" \t\n") + 1)));
    }
    const size_t open = ptx.find('{', close);
    const size_t end = open == std::string_view::npos ? open : MatchingBrace(ptx, open);
    if (end == std::string_view::npos) return absl::InvalidArgumentError(absl::StrCat("PTX: .entry ", name, " has no body"));
    entry.body = ParseBody(ptx.substr(open + 1, end - open - 2));
    entries[name] = std::move(entry);
    at = end;
  }
  return entries;
}

/// Whether a memory opcode ("ld.global.nc.f32", "st.f32", "atom.shared.add") reaches global
/// memory: an explicit .global, or no state space at all (generic addressing).
bool ReachesGlobal(std::string_view opcode) {
  for (std::string_view space : {".shared", ".local", ".param", ".const"}) {
    if (opcode.find(space) != std::string_view::npos) return false;
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// Step 3: the parameters each register's value is derived from.
std::unordered_map<std::string, ParamSet> Provenance(const Entry& entry) {
  std::unordered_map<std::string, int> param_index;
  for (size_t i = 0; i < entry.params.size() && i < kMaxParams; ++i) param_index[entry.params[i]] = static_cast<int>(i);
  std::unordered_map<std::string, ParamSet> from;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Statement& s : entry.body) {
      if (s.operands.empty()) continue;
      const std::string dest = RegisterIn(s.operands[0]);
      if (dest.empty() || s.operands[0][0] == '[') continue;  // stores, branches
      ParamSet set = 0;
      if (StartsWith(s.opcode, "ld.param")) {
        if (s.operands.size() > 1) {
          auto it = param_index.find(ParamNameIn(s.operands[1]));
          if (it != param_index.end()) set = ParamSet{1} << it->second;
        }
      } else if (StartsWith(s.opcode, "ld.") || StartsWith(s.opcode, "atom.") || StartsWith(s.opcode, "call")) {
        continue;  // a loaded value is data, not an address into a parameter
      } else {
        for (size_t i = 1; i < s.operands.size(); ++i) {
          auto it = from.find(RegisterIn(s.operands[i]));
          if (it != from.end()) set |= it->second;
        }
      }
      ParamSet& current = from[dest];
      if ((current | set) != current) {
        current |= set;
        changed = true;
      }
    }
  }
  return from;
}

KernelFacts FactsOf(const Entry& entry) {
  KernelFacts facts;
  facts.params.resize(entry.params.size());
  const std::unordered_map<std::string, ParamSet> from = Provenance(entry);
  auto mark = [&](const std::string& address, bool read, bool written) {
    auto it = from.find(RegisterIn(address));
    if (it == from.end()) return;
    for (size_t i = 0; i < facts.params.size() && i < kMaxParams; ++i) {
      if (!(it->second & (ParamSet{1} << i))) continue;
      facts.params[i].read |= read;
      facts.params[i].written |= written;
    }
  };
  for (const Statement& s : entry.body) {
    const std::string& op = s.opcode;
    if (StartsWith(op, "mma.") || StartsWith(op, "wgmma.")) {
      if (op.find(".bf16") != std::string::npos) facts.mma_unit = ComputeUnit::kBf16TensorCore;
      if (op.find(".tf32") != std::string::npos) facts.mma_unit = ComputeUnit::kTf32TensorCore;
      continue;
    }
    const bool load = StartsWith(op, "ld.") && !StartsWith(op, "ld.param");
    const bool store = StartsWith(op, "st.") && !StartsWith(op, "st.param");
    const bool atomic = StartsWith(op, "atom.") || StartsWith(op, "red.");
    if (!(load || store || atomic) || !ReachesGlobal(op)) continue;
    for (const std::string& operand : s.operands) {
      if (!operand.empty() && operand[0] == '[') mark(operand, load || atomic, store || atomic);
    }
  }
  return facts;
}

}  // namespace

absl::StatusOr<std::map<std::string, KernelFacts>> ReadPtxKernelFacts(std::string_view ptx) {
  absl::StatusOr<std::map<std::string, Entry>> entries = SplitEntries(ptx);
  if (!entries.ok()) return entries.status();
  std::map<std::string, KernelFacts> facts;
  for (const auto& [name, entry] : *entries) facts[name] = FactsOf(entry);
  return facts;
}

}  // namespace gpt_sft::compiler::cost
