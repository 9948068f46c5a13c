// Implements the artifact's names, sizes, lookups, Summary and Validate.
#include "artifact/artifact.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpt_sft::artifact {

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kF32: return "f32";
    case ElementType::kF64: return "f64";
    case ElementType::kI32: return "i32";
    case ElementType::kI64: return "i64";
    case ElementType::kBF16: return "bf16";
  }
  return "?";
}

absl::StatusOr<ElementType> ParseElementType(std::string_view name) {
  for (ElementType t : {ElementType::kF32, ElementType::kF64, ElementType::kI32, ElementType::kI64, ElementType::kBF16}) {
    if (name == ElementTypeName(t)) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown element type '", std::string(name), "' (f32, f64, i32, i64, bf16)"));
}

int64_t ElementBytes(ElementType type) {
  switch (type) {
    case ElementType::kF32: case ElementType::kI32: return 4;
    case ElementType::kF64: case ElementType::kI64: return 8;
    case ElementType::kBF16: return 2;
  }
  return 0;
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const char* LaunchKindName(LaunchKind kind) {
  switch (kind) {
    case LaunchKind::kKernel: return "kernel";
    case LaunchKind::kBuiltin: return "builtin";
    case LaunchKind::kCopy: return "copy";
    case LaunchKind::kFill: return "fill";
    case LaunchKind::kCollective: return "collective";
  }
  return "?";
}

const char* ModuleFormatName(ModuleFormat format) {
  switch (format) {
    case ModuleFormat::kHostSharedObject: return "host-shared-object";
    case ModuleFormat::kSpir: return "spir";
    case ModuleFormat::kPtx: return "ptx";
    case ModuleFormat::kCudaFatbin: return "cuda-fatbin";
  }
  return "?";
}

absl::StatusOr<ModuleFormat> ParseModuleFormat(std::string_view name) {
  for (ModuleFormat f :
       {ModuleFormat::kHostSharedObject, ModuleFormat::kSpir, ModuleFormat::kPtx, ModuleFormat::kCudaFatbin}) {
    if (name == ModuleFormatName(f)) return f;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown kernel module format '", std::string(name), "' (host-shared-object, spir, ptx, cuda-fatbin)"));
}

int64_t Artifact::MaxArenaBytes() const {
  int64_t bytes = 0;
  for (const Function& f : functions) bytes = std::max(bytes, f.arena_bytes);
  return bytes;
}

const Function* Artifact::FindFunction(std::string_view name) const {
  for (const Function& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

int Artifact::FindSlot(std::string_view name) const {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Artifact::Summary() const {
  std::vector<std::string> parts;
  for (const Function& f : functions) {
    std::map<std::string, int> per_kind;
    std::set<std::pair<int, std::string>> kernels;
    for (const Launch& l : f.launches) {
      ++per_kind[LaunchKindName(l.kind)];
      if (l.kind == LaunchKind::kKernel) kernels.insert({l.module, l.name});
    }
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : per_kind) kinds.push_back(absl::StrCat(n, " ", kind));
    parts.push_back(absl::StrCat(f.name, ": ", f.launches.size(), " launches (", absl::StrJoin(kinds, ", "), "), ",
                                 kernels.size(), " distinct kernels"));
  }
  return absl::StrJoin(parts, "; ");
}

namespace {

absl::Status CheckRef(const Artifact& a, const Function& f, const BufferRef& ref, const std::string& where) {
  int64_t size = 0;
  std::string buffer;
  switch (ref.space) {
    case BufferRef::Space::kArena:
      size = f.arena_bytes;
      buffer = "the arena";
      break;
    case BufferRef::Space::kConstants:
      size = static_cast<int64_t>(a.constants.size());
      buffer = "the constants";
      break;
    case BufferRef::Space::kSlot:
      if (ref.slot < 0 || ref.slot >= static_cast<int>(a.slots.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": slot ", ref.slot, " does not exist (", a.slots.size(), " slots)"));
      }
      size = a.slots[ref.slot].bytes();
      buffer = absl::StrCat("slot ", ref.slot, " (", a.slots[ref.slot].name, ")");
      break;
  }
  if (ref.offset < 0 || ref.bytes < 0 || ref.offset + ref.bytes > size) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": bytes [", ref.offset, ", ", ref.offset + ref.bytes,
                                                   ") lie outside ", buffer, " of ", size, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckLaunch(const Artifact& a, const Function& f, size_t index, const Launch& l) {
  const std::string where = absl::StrCat("@", f.name, " launch ", index, " (", LaunchKindName(l.kind), " ",
                                         l.name, ", from ", l.where, ")");
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (!l.args[i].is_buffer) continue;
    if (absl::Status s = CheckRef(a, f, l.args[i].buffer, absl::StrCat(where, " argument ", i)); !s.ok()) return s;
  }
  auto buffers = [&] {
    int n = 0;
    for (const Arg& arg : l.args) n += arg.is_buffer;
    return n;
  };
  switch (l.kind) {
    case LaunchKind::kKernel: {
      if (l.module < 0 || l.module >= static_cast<int>(a.modules.size())) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": module ", l.module, " does not exist"));
      }
      const std::vector<std::string>& symbols = a.modules[l.module].symbols;
      if (std::find(symbols.begin(), symbols.end(), l.name) == symbols.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": module '", a.modules[l.module].name, "' defines no kernel '", l.name, "'"));
      }
      for (int d = 0; d < 3; ++d) {
        if (l.grid[d] < 1 || l.block[d] < 1) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": grid and block sizes must be >= 1"));
        }
      }
      if (l.workgroup_bytes < 0) return absl::InvalidArgumentError(where + ": negative workgroup memory");
      break;
    }
    case LaunchKind::kCopy:
      if (l.args.size() != 2 || buffers() != 2 || l.args[0].buffer.bytes != l.args[1].buffer.bytes) {
        return absl::InvalidArgumentError(where + ": a copy takes two buffers of equal size");
      }
      break;
    case LaunchKind::kFill:
      if (l.args.size() != 2 || !l.args[0].is_buffer || l.args[1].is_buffer || l.args[0].buffer.bytes % 4 != 0) {
        return absl::InvalidArgumentError(where + ": a fill takes a buffer of whole 32-bit words and a pattern");
      }
      break;
    case LaunchKind::kCollective:
      if (l.args.size() != 1 || buffers() != 1) {
        return absl::InvalidArgumentError(where + ": a collective takes one buffer");
      }
      break;
    case LaunchKind::kBuiltin:
      if (l.name.empty()) return absl::InvalidArgumentError(where + ": a builtin needs a name");
      break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Validate(const Artifact& a) {
  std::set<std::string> names;
  for (const TensorSpec& s : a.slots) {
    if (!names.insert(s.name).second) return absl::InvalidArgumentError(absl::StrCat("two slots are named '", s.name, "'"));
    for (int64_t d : s.shape) {
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat("slot '", s.name, "' has a negative dimension"));
    }
  }
  std::set<std::string> functions;
  for (const Function& f : a.functions) {
    if (!functions.insert(f.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("two functions are named '", f.name, "'"));
    }
    for (int slot : f.argument_slots) {
      if (slot < 0 || slot >= static_cast<int>(a.slots.size())) {
        return absl::InvalidArgumentError(absl::StrCat("@", f.name, ": argument slot ", slot, " does not exist"));
      }
    }
    if (f.results.size() != f.result_refs.size()) {
      return absl::InvalidArgumentError(absl::StrCat("@", f.name, ": ", f.results.size(), " results but ",
                                                     f.result_refs.size(), " result places"));
    }
    for (size_t i = 0; i < f.result_refs.size(); ++i) {
      if (absl::Status s = CheckRef(a, f, f.result_refs[i], absl::StrCat("@", f.name, " result ", i)); !s.ok()) {
        return s;
      }
      if (f.result_refs[i].bytes != f.results[i].bytes()) {
        return absl::InvalidArgumentError(absl::StrCat("@", f.name, " result ", i, " (", f.results[i].name, ") has ",
                                                       f.results[i].bytes(), " bytes but its place has ",
                                                       f.result_refs[i].bytes));
      }
    }
    for (size_t i = 0; i < f.launches.size(); ++i) {
      if (absl::Status s = CheckLaunch(a, f, i, f.launches[i]); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace gpt_sft::artifact
