// Implements the artifact file format (FORMAT.md): header, JSON manifest, checked blobs.
#include "artifact/artifact_file.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/fnv1a.h"
#include "nlohmann/json.hpp"

namespace gpt_sft::artifact {
namespace {

using nlohmann::json;

constexpr size_t kHeaderBytes = sizeof(kFileMagic) + 8;  // magic, manifest length (u64 LE)

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

const char* SpaceName(BufferRef::Space s) {
  switch (s) {
    case BufferRef::Space::kArena: return "arena";
    case BufferRef::Space::kSlot: return "slot";
    case BufferRef::Space::kConstants: return "constants";
  }
  return "?";
}

const char* ScalarTypeName(Scalar::Type t) {
  switch (t) {
    case Scalar::Type::kI64: return "i64";
    case Scalar::Type::kF64: return "f64";
    case Scalar::Type::kI32: return "i32";
    case Scalar::Type::kF32: return "f32";
  }
  return "?";
}

bool IsFloat(Scalar::Type t) { return t == Scalar::Type::kF64 || t == Scalar::Type::kF32; }

json SpecJson(const TensorSpec& s) {
  json j = {{"name", s.name}, {"type", ElementTypeName(s.type)}, {"shape", s.shape}};
  if (s.valid_range) j["valid_range"] = {s.valid_range->first, s.valid_range->second};
  return j;
}

json RefJson(const BufferRef& r) {
  json j = {{"space", SpaceName(r.space)}, {"offset", r.offset}, {"bytes", r.bytes}};
  if (r.space == BufferRef::Space::kSlot) j["slot"] = r.slot;
  return j;
}

json ArgJson(const Arg& a) {
  if (a.is_buffer) return json{{"buffer", RefJson(a.buffer)}};
  json s = {{"type", ScalarTypeName(a.scalar.type)}};
  if (IsFloat(a.scalar.type)) {
    s["value"] = a.scalar.f;
  } else {
    s["value"] = a.scalar.i;
  }
  return json{{"scalar", s}};
}

json LaunchJson(const Launch& l) {
  json j = {{"kind", LaunchKindName(l.kind)}, {"op", l.op}, {"where", l.where}, {"name", l.name}};
  if (l.kind == LaunchKind::kKernel) {
    j["module"] = l.module;
    j["grid"] = l.grid;
    j["block"] = l.block;
    j["workgroup_bytes"] = l.workgroup_bytes;
  }
  if (l.kind == LaunchKind::kCollective) {
    j["reduction"] = l.reduction;
    j["element_type"] = ElementTypeName(l.element_type);
  }
  json args = json::array();
  for (const Arg& a : l.args) args.push_back(ArgJson(a));
  j["args"] = args;
  return j;
}

/// The manifest without blob placement (ManifestJson and the serializer share it).
json ManifestBody(const Artifact& a) {
  json m;
  m["format_version"] = kFormatVersion;
  m["key"] = a.key;
  m["compiler_version"] = a.compiler_version;
  m["target"] = a.target;
  m["target_description"] = a.target_description;
  m["compile_seconds"] = a.compile_seconds;
  m["step_config"] = a.step_config;
  json slots = json::array();
  for (const TensorSpec& s : a.slots) slots.push_back(SpecJson(s));
  m["slots"] = slots;
  json modules = json::array();
  for (const KernelModule& mod : a.modules) {
    json jm = {{"name", mod.name}, {"format", ModuleFormatName(mod.format)}, {"symbols", mod.symbols}};
    if (!mod.source.empty()) jm["source"] = mod.source;
    if (!mod.assembler_report.empty()) jm["assembler_report"] = mod.assembler_report;
    modules.push_back(jm);
  }
  m["modules"] = modules;
  json functions = json::array();
  for (const Function& f : a.functions) {
    json jf = {{"name", f.name}, {"arena_bytes", f.arena_bytes}, {"argument_slots", f.argument_slots}};
    json results = json::array();
    for (size_t i = 0; i < f.results.size(); ++i) {
      json r = SpecJson(f.results[i]);
      r["place"] = RefJson(f.result_refs[i]);
      results.push_back(r);
    }
    jf["results"] = results;
    json launches = json::array();
    for (const Launch& l : f.launches) launches.push_back(LaunchJson(l));
    jf["launches"] = launches;
    functions.push_back(jf);
  }
  m["functions"] = functions;
  return m;
}

// ---- reading ----

/// A parse failure: the field's JSON path and what was wrong.
struct Bad {
  std::string message;
};

template <typename T>
T Get(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) throw Bad{absl::StrCat(path, ".", key, " is missing")};
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    throw Bad{absl::StrCat(path, ".", key, ": ", e.what())};
  }
}

template <typename T>
T Unwrap(absl::StatusOr<T> v, const std::string& path) {
  if (!v.ok()) throw Bad{absl::StrCat(path, ": ", v.status().message())};
  return *std::move(v);
}

TensorSpec ReadSpec(const json& j, const std::string& path) {
  TensorSpec s;
  s.name = Get<std::string>(j, "name", path);
  s.type = Unwrap(ParseElementType(Get<std::string>(j, "type", path)), path + ".type");
  s.shape = Get<std::vector<int64_t>>(j, "shape", path);
  if (j.contains("valid_range")) {
    auto r = Get<std::vector<int64_t>>(j, "valid_range", path);
    if (r.size() != 2) throw Bad{path + ".valid_range must be [first, end)"};
    s.valid_range = std::make_pair(r[0], r[1]);
  }
  return s;
}

BufferRef ReadRef(const json& j, const std::string& path) {
  BufferRef r;
  const std::string space = Get<std::string>(j, "space", path);
  if (space == "arena") {
    r.space = BufferRef::Space::kArena;
  } else if (space == "slot") {
    r.space = BufferRef::Space::kSlot;
    r.slot = Get<int>(j, "slot", path);
  } else if (space == "constants") {
    r.space = BufferRef::Space::kConstants;
  } else {
    throw Bad{absl::StrCat(path, ".space: '", space, "' is not arena, slot or constants")};
  }
  r.offset = Get<int64_t>(j, "offset", path);
  r.bytes = Get<int64_t>(j, "bytes", path);
  return r;
}

Arg ReadArg(const json& j, const std::string& path) {
  if (j.contains("buffer")) return Arg::Buffer(ReadRef(j["buffer"], path + ".buffer"));
  if (!j.contains("scalar")) throw Bad{path + " is neither a buffer nor a scalar"};
  const json& s = j["scalar"];
  const std::string type = Get<std::string>(s, "type", path + ".scalar");
  Scalar out;
  bool known = false;
  for (Scalar::Type t : {Scalar::Type::kI64, Scalar::Type::kF64, Scalar::Type::kI32, Scalar::Type::kF32}) {
    if (type == ScalarTypeName(t)) {
      out.type = t;
      known = true;
    }
  }
  if (!known) throw Bad{absl::StrCat(path, ".scalar.type: '", type, "' is not i64, f64, i32 or f32")};
  if (IsFloat(out.type)) {
    out.f = Get<double>(s, "value", path + ".scalar");
  } else {
    out.i = Get<int64_t>(s, "value", path + ".scalar");
  }
  return Arg::Of(out);
}

Launch ReadLaunch(const json& j, const std::string& path) {
  Launch l;
  const std::string kind = Get<std::string>(j, "kind", path);
  bool known = false;
  for (LaunchKind k : {LaunchKind::kKernel, LaunchKind::kBuiltin, LaunchKind::kCopy, LaunchKind::kFill,
                       LaunchKind::kCollective}) {
    if (kind == LaunchKindName(k)) {
      l.kind = k;
      known = true;
    }
  }
  if (!known) throw Bad{absl::StrCat(path, ".kind: '", kind, "' is not a launch kind")};
  l.op = Get<std::string>(j, "op", path);
  l.where = Get<std::string>(j, "where", path);
  l.name = Get<std::string>(j, "name", path);
  if (l.kind == LaunchKind::kKernel) {
    l.module = Get<int>(j, "module", path);
    l.grid = Get<std::array<int64_t, 3>>(j, "grid", path);
    l.block = Get<std::array<int64_t, 3>>(j, "block", path);
    l.workgroup_bytes = Get<int64_t>(j, "workgroup_bytes", path);
  }
  if (l.kind == LaunchKind::kCollective) {
    l.reduction = Get<std::string>(j, "reduction", path);
    l.element_type = Unwrap(ParseElementType(Get<std::string>(j, "element_type", path)), path + ".element_type");
  }
  const json args = Get<json>(j, "args", path);
  for (size_t i = 0; i < args.size(); ++i) l.args.push_back(ReadArg(args[i], absl::StrCat(path, ".args[", i, "]")));
  return l;
}

/// The blob at `entry` ({offset, bytes, fnv1a64}) of the data after the manifest.
std::string ReadBlob(const json& entry, std::string_view data, const std::string& path) {
  const uint64_t offset = Get<uint64_t>(entry, "offset", path);
  const uint64_t bytes = Get<uint64_t>(entry, "bytes", path);
  const std::string hash = Get<std::string>(entry, "fnv1a64", path);
  if (offset > data.size() || bytes > data.size() - offset) {
    throw Bad{absl::StrCat(path, ": bytes [", offset, ", ", offset + bytes, ") lie past the end of the file (",
                           data.size(), " bytes of blobs): truncated")};
  }
  std::string_view blob = data.substr(offset, bytes);
  const std::string got = absl::StrCat(absl::Hex(base::Fnv1a64(blob), absl::kZeroPad16));
  if (got != hash) throw Bad{absl::StrCat(path, ": hash ", got, " differs from the manifest's ", hash, ": damaged")};
  return std::string(blob);
}

json BlobEntry(std::string& blobs, const std::string& bytes) {
  json e = {{"offset", blobs.size()}, {"bytes", bytes.size()},
            {"fnv1a64", absl::StrCat(absl::Hex(base::Fnv1a64(bytes), absl::kZeroPad16))}};
  blobs += bytes;
  return e;
}

std::string RefText(const Artifact& a, const BufferRef& r) {
  switch (r.space) {
    case BufferRef::Space::kArena: return absl::StrCat("arena+", r.offset, ":", r.bytes);
    case BufferRef::Space::kConstants: return absl::StrCat("const+", r.offset, ":", r.bytes);
    case BufferRef::Space::kSlot: {
      const std::string name = r.slot >= 0 && r.slot < static_cast<int>(a.slots.size()) ? a.slots[r.slot].name : "?";
      return absl::StrCat("slot", r.slot, "(", name, ")+", r.offset, ":", r.bytes);
    }
  }
  return "?";
}

}  // namespace

std::string SerializeArtifact(const Artifact& artifact) {
  json manifest = ManifestBody(artifact);
  std::string blobs;
  for (size_t i = 0; i < artifact.modules.size(); ++i) {
    manifest["modules"][i]["blob"] = BlobEntry(blobs, artifact.modules[i].bytes);
  }
  manifest["constants"] = BlobEntry(blobs, artifact.constants);
  const std::string text = manifest.dump();
  std::string out(kFileMagic, sizeof(kFileMagic));
  PutU64(out, text.size());
  out += text;
  out += blobs;
  return out;
}

absl::StatusOr<Artifact> ParseArtifact(std::string_view bytes, std::string_view what) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kFileMagic, sizeof(kFileMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(std::string(what), ": not a step artifact (no GPTART header)"));
  }
  const uint64_t manifest_bytes = GetU64(bytes.substr(sizeof(kFileMagic), 8));
  if (manifest_bytes > bytes.size() - kHeaderBytes) {
    return absl::DataLossError(absl::StrCat(std::string(what), ": truncated (the manifest says ", manifest_bytes,
                                            " bytes; the file has ", bytes.size() - kHeaderBytes, " after the header)"));
  }
  const std::string_view text = bytes.substr(kHeaderBytes, manifest_bytes);
  const std::string_view data = bytes.substr(kHeaderBytes + manifest_bytes);
  json m = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) {
    return absl::DataLossError(absl::StrCat(std::string(what), ": the manifest is not a JSON object"));
  }
  Artifact a;
  try {
    const int version = Get<int>(m, "format_version", "manifest");
    if (version != kFormatVersion) {
      return absl::FailedPreconditionError(absl::StrCat(std::string(what), ": artifact format version ", version,
                                                        "; this runtime reads version ", kFormatVersion,
                                                        " (recompile the step)"));
    }
    a.key = Get<std::string>(m, "key", "manifest");
    a.compiler_version = Get<std::string>(m, "compiler_version", "manifest");
    a.target = Get<std::string>(m, "target", "manifest");
    a.target_description = Get<std::string>(m, "target_description", "manifest");
    a.compile_seconds = Get<double>(m, "compile_seconds", "manifest");
    a.step_config = Get<std::string>(m, "step_config", "manifest");
    const json slots = Get<json>(m, "slots", "manifest");
    for (size_t i = 0; i < slots.size(); ++i) a.slots.push_back(ReadSpec(slots[i], absl::StrCat("slots[", i, "]")));
    const json modules = Get<json>(m, "modules", "manifest");
    for (size_t i = 0; i < modules.size(); ++i) {
      const std::string path = absl::StrCat("modules[", i, "]");
      KernelModule mod;
      mod.name = Get<std::string>(modules[i], "name", path);
      mod.format = Unwrap(ParseModuleFormat(Get<std::string>(modules[i], "format", path)), path + ".format");
      mod.symbols = Get<std::vector<std::string>>(modules[i], "symbols", path);
      if (modules[i].contains("source")) mod.source = Get<std::string>(modules[i], "source", path);
      if (modules[i].contains("assembler_report")) {
        mod.assembler_report = Get<std::string>(modules[i], "assembler_report", path);
      }
      mod.bytes = ReadBlob(Get<json>(modules[i], "blob", path), data, path + ".blob");
      a.modules.push_back(std::move(mod));
    }
    a.constants = ReadBlob(Get<json>(m, "constants", "manifest"), data, "constants");
    const json functions = Get<json>(m, "functions", "manifest");
    for (size_t i = 0; i < functions.size(); ++i) {
      const json& jf = functions[i];
      const std::string path = absl::StrCat("functions[", i, "]");
      Function f;
      f.name = Get<std::string>(jf, "name", path);
      f.arena_bytes = Get<int64_t>(jf, "arena_bytes", path);
      f.argument_slots = Get<std::vector<int>>(jf, "argument_slots", path);
      const json results = Get<json>(jf, "results", path);
      for (size_t r = 0; r < results.size(); ++r) {
        const std::string rpath = absl::StrCat(path, ".results[", r, "]");
        f.results.push_back(ReadSpec(results[r], rpath));
        f.result_refs.push_back(ReadRef(Get<json>(results[r], "place", rpath), rpath + ".place"));
      }
      const json launches = Get<json>(jf, "launches", path);
      for (size_t l = 0; l < launches.size(); ++l) {
        f.launches.push_back(ReadLaunch(launches[l], absl::StrCat(path, ".launches[", l, "]")));
      }
      a.functions.push_back(std::move(f));
    }
  } catch (const Bad& bad) {
    return absl::DataLossError(absl::StrCat(std::string(what), ": ", bad.message));
  }
  if (absl::Status s = Validate(a); !s.ok()) {
    return absl::DataLossError(absl::StrCat(std::string(what), ": ", s.message()));
  }
  return a;
}

std::string ManifestJson(const Artifact& artifact) { return ManifestBody(artifact).dump(1); }

std::string LaunchListText(const Artifact& a) {
  std::string out = absl::StrCat("artifact ", a.key, " target ", a.target, " (", a.target_description, "), ",
                                 a.slots.size(), " slots, ", a.modules.size(), " modules, ", a.constants.size(),
                                 " constant bytes\n");
  for (const KernelModule& m : a.modules) {
    absl::StrAppend(&out, "module ", m.name, " ", ModuleFormatName(m.format), " ", m.bytes.size(), " bytes, ",
                    m.symbols.size(), " kernels\n");
  }
  for (const Function& f : a.functions) {
    absl::StrAppend(&out, "func @", f.name, " arena ", f.arena_bytes, " bytes, ", f.launches.size(), " launches\n");
    for (size_t i = 0; i < f.launches.size(); ++i) {
      const Launch& l = f.launches[i];
      absl::StrAppend(&out, "  ", i, " ", LaunchKindName(l.kind), " ", l.name);
      if (l.kind == LaunchKind::kKernel) {
        absl::StrAppend(&out, " grid [", absl::StrJoin(l.grid, ","), "] block [", absl::StrJoin(l.block, ","), "]");
        if (l.workgroup_bytes > 0) absl::StrAppend(&out, " wg ", l.workgroup_bytes);
      }
      if (l.kind == LaunchKind::kCollective) absl::StrAppend(&out, " ", l.reduction);
      absl::StrAppend(&out, " (");
      for (size_t k = 0; k < l.args.size(); ++k) {
        const Arg& arg = l.args[k];
        if (k) absl::StrAppend(&out, ", ");
        if (arg.is_buffer) {
          absl::StrAppend(&out, RefText(a, arg.buffer));
        } else if (IsFloat(arg.scalar.type)) {
          absl::StrAppend(&out, ScalarTypeName(arg.scalar.type), " ", arg.scalar.f);
        } else {
          absl::StrAppend(&out, ScalarTypeName(arg.scalar.type), " ", arg.scalar.i);
        }
      }
      absl::StrAppend(&out, ") <- ", l.where, "\n");
    }
    for (size_t r = 0; r < f.results.size(); ++r) {
      absl::StrAppend(&out, "  result ", r, " ", f.results[r].name, " at ", RefText(a, f.result_refs[r]), "\n");
    }
  }
  return out;
}

}  // namespace gpt_sft::artifact
