#include "trainer/bench/peer_modes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpt_sft::bench {
namespace {

std::string ModeName(const PeerMode& m) { return m.mode + (m.dtype == "bfloat16" ? "-bf16" : "-fp32"); }

std::string RowLabel(const PeerResult& r, const PeerMode& m, const MallocConfig& malloc) {
  return absl::StrCat("  torch ", r.torch_version, " ", m.mode == "compile" ? "compile" : "eager", " ",
                      m.dtype == "bfloat16" ? "bf16" : "fp32", ", ", malloc.name);
}

}  // namespace

absl::StatusOr<std::vector<PeerMode>> ParsePeerModes(const std::string& flag) {
  const std::vector<PeerMode> all = {
      {"eager", "float32"}, {"compile", "float32"}, {"eager", "bfloat16"}, {"compile", "bfloat16"}};
  if (flag == "all") return all;
  std::vector<PeerMode> modes;
  for (absl::string_view name : absl::StrSplit(flag, ',', absl::SkipEmpty())) {
    bool found = false;
    for (const PeerMode& m : all) {
      if (ModeName(m) == name) {
        modes.push_back(m);
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("--peer_modes: unknown mode '", name,
                       "'; want all or a list of eager-fp32, compile-fp32, eager-bf16, compile-bf16"));
    }
  }
  if (modes.empty()) return absl::InvalidArgumentError("--peer_modes is empty; want all or a list of modes");
  return modes;
}

absl::StatusOr<std::vector<MallocConfig>> ParsePeerMalloc(const std::string& flag) {
  if (flag == "both") return PeerMallocConfigs();
  if (flag == "glibc-default") return std::vector<MallocConfig>{GlibcDefaultMalloc()};
  if (flag == "no-mmap-trim") return std::vector<MallocConfig>{NoMmapNoTrimMalloc()};
  return absl::InvalidArgumentError(
      absl::StrCat("--peer_malloc must be both, glibc-default or no-mmap-trim, got '", flag, "'"));
}

PeerModesResult RunPeerModes(const PeerOptions& base, const PeerInterpreter& interpreter,
                             const std::vector<PeerMode>& modes, const std::vector<MallocConfig>& mallocs,
                             int64_t flops_per_token, std::ostream& out) {
  PeerModesResult result;
  result.json["python"] = interpreter.python;
  result.json["source"] = interpreter.source;
  if (!interpreter.fallback_reason.empty()) {
    result.json["fallback_reason"] = interpreter.fallback_reason;
    out << "\n*** PEER FALLBACK: " << interpreter.fallback_reason << "\n*** The peer below is Debian's torch, "
        << "which has no torch.compile: these are NOT current PyTorch's figures.\n";
  }
  out << "\npeer: nanochat's model in PyTorch, same config and batch, each mode its own process (" << interpreter.source
      << "):\n";
  result.json["runs"] = nlohmann::ordered_json::array();
  const double tokens = double(base.batch) * base.seq;
  for (const PeerMode& m : modes) {
    for (const MallocConfig& malloc : mallocs) {
      PeerOptions o = base;
      o.python = interpreter.python;
      o.mode = m.mode;
      o.dtype = m.dtype;
      o.malloc = malloc;
      nlohmann::ordered_json run = {{"mode", m.mode}, {"dtype", m.dtype}, {"malloc", malloc.name}};
      absl::StatusOr<PeerResult> r = RunPytorchPeer(o);
      if (!r.ok()) {
        out << absl::StrFormat("  torch %s %s, %s: not run: %s\n", m.mode, m.dtype, malloc.name,
                               absl::StripTrailingAsciiWhitespace(r.status().message()));
        run["not_run"] = std::string(absl::StripTrailingAsciiWhitespace(r.status().message()));
        result.json["runs"].push_back(run);
        continue;
      }
      const double median = r->step_seconds_median;
      std::string note = absl::StrFormat("RSS; %s", r->attention.empty() ? "explicit attention" : r->attention);
      if (r->compile_seconds) absl::StrAppendFormat(&note, "; compile %.1f s (cold)", *r->compile_seconds);
      out << absl::StrFormat("%-40s %9.3f s %10.0f tok/s %8.1f GFLOP/s %8.2f GB  %s\n", RowLabel(*r, m, malloc), median,
                             tokens / median, double(flops_per_token) * tokens / median / 1e9, r->peak_rss_bytes / 1e9,
                             note);
      if (!r->kernels.empty()) out << "      " << r->kernels << "\n";
      run.update({{"step_seconds", median},
                  {"step_seconds_all", r->step_seconds},
                  {"tokens_per_second", tokens / median},
                  {"gflops_per_second", double(flops_per_token) * tokens / median / 1e9},
                  {"peak_rss_bytes", r->peak_rss_bytes},
                  {"compile_seconds", r->compile_seconds ? nlohmann::json(*r->compile_seconds) : nlohmann::json()},
                  {"torch_version", r->torch_version},
                  {"attention", r->attention},
                  {"kernels", r->kernels},
                  {"sgemm_library", r->sgemm_library}});
      result.json["torch_version"] = r->torch_version;
      result.json["runs"].push_back(run);
      result.seconds.push_back({m.mode, m.dtype, median});
    }
  }
  return result;
}

}  // namespace gpt_sft::bench
