#include "trainer/bench/pytorch_peer.h"

#include "base/runfiles.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_fields.h"
#include "trainer/bench/subprocess.h"

namespace gpt_sft::bench {
namespace {

constexpr size_t kStderrTailChars = 2000;

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The last line of `text` that starts with '{', or "".
std::string LastJsonLine(const std::string& text) {
  size_t end = text.size();
  while (end > 0) {
    const size_t start = text.rfind('\n', end - 1);
    const size_t begin = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line[0] == '{') return line;
    if (start == std::string::npos) break;
    end = start;
  }
  return "";
}

std::vector<std::string> BaseArgv(const PeerOptions& o, const std::string& script) {
  auto flag = [](const char* name, int v) { return absl::StrCat("--", name, "=", v); };
  return {o.python,
          script,
          flag("depth", o.depth),
          flag("n_embd", o.n_embd),
          flag("n_head", o.n_head),
          flag("vocab", o.vocab),
          flag("batch", o.batch),
          flag("seq", o.seq),
          flag("threads", o.threads),
          flag("warmup", o.warmup),
          flag("steps", o.steps)};
}

}  // namespace

std::vector<std::string> PeerArgv(const PeerOptions& o, const std::string& script) {
  std::vector<std::string> argv = BaseArgv(o, script);
  argv.push_back("--mode=" + o.mode);
  argv.push_back("--dtype=" + o.dtype);
  if (!o.batch_file.empty()) argv.push_back("--batch_file=" + o.batch_file);
  if (o.grad_accum != 1) argv.push_back(absl::StrCat("--grad_accum=", o.grad_accum));
  return argv;
}

namespace {

// One line from the script's "kernels" object.
std::string KernelsLine(const nlohmann::json& k) {
  if (!k.is_object()) return "";
  auto text = [&](const char* key) { return k.contains(key) && k[key].is_string() ? k[key].get<std::string>() : "?"; };
  std::string flags;
  if (k.contains("cpu_flags") && k["cpu_flags"].is_object()) {
    for (const auto& [name, on] : k["cpu_flags"].items()) {
      absl::StrAppend(&flags, flags.empty() ? "" : " ", name, on.is_boolean() && on.get<bool>() ? "+" : "-");
    }
  }
  std::string line = absl::StrCat("matmul: ", text("matmul"), "; CPU capability ", text("cpu_capability"), " (",
                                  flags, "); BLAS_INFO=", text("blas_info"));
  if (k.contains("inductor_vec_isa")) absl::StrAppend(&line, "; inductor C++ for ", text("inductor_vec_isa"));
  return line;
}

// This process's environment with the malloc configuration applied (GLIBC_TUNABLES set to the
// configuration's, or removed so that "glibc default" is stock even if our caller tuned glibc)
// and OMP_WAIT_POLICY when one is asked for.
std::map<std::string, std::string> PeerEnvironment(const PeerOptions& o) {
  std::map<std::string, std::string> env = CurrentEnvironment();
  env.erase("GLIBC_TUNABLES");
  if (!o.malloc.glibc_tunables.empty()) env["GLIBC_TUNABLES"] = o.malloc.glibc_tunables;
  if (!o.omp_wait_policy.empty()) env["OMP_WAIT_POLICY"] = o.omp_wait_policy;
  return env;
}

absl::Status ExitError(const ProcessResult& r, const std::string& python, const std::string& script) {
  const std::string tail = Tail(r.stderr_text, kStderrTailChars);
  if (r.term_signal != 0) {
    return absl::InternalError(
        absl::StrCat(python, " ", script, " was killed by signal ", r.term_signal, "; stderr tail:\n", tail));
  }
  if (r.exit_code == kPeerExitNoTorch) {
    return absl::FailedPreconditionError(absl::StrCat(
        script, ": torch is not importable by ", python,
        " (apt-get install -y python3-torch python3-numpy); stderr tail:\n", tail));
  }
  if (r.exit_code == kPeerExitInductorScalar) {
    return absl::FailedPreconditionError(
        absl::StrCat(script, ": torch.compile would generate scalar code here, refusing to measure it: ", tail));
  }
  if (r.exit_code == kPeerExitModeUnsupported) {
    return absl::FailedPreconditionError(absl::StrCat(script, ": not available with ", python, ": ", tail));
  }
  if (r.exit_code == kPeerExitReferenceBlas) {
    return absl::FailedPreconditionError(absl::StrCat(
        script, ": torch runs on the reference BLAS, not OpenBLAS; refusing to measure. stderr tail:\n", tail));
  }
  return absl::InternalError(
      absl::StrCat(python, " ", script, " exited with status ", r.exit_code, "; stderr tail:\n", tail));
}

}  // namespace

MallocConfig GlibcDefaultMalloc() { return {"glibc default", ""}; }

MallocConfig NoMmapNoTrimMalloc() {
  return {"no mmap/trim", "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=34359738368"};
}

std::vector<MallocConfig> PeerMallocConfigs() { return {GlibcDefaultMalloc(), NoMmapNoTrimMalloc()}; }

absl::StatusOr<PeerResult> ParsePeerJson(const std::string& stdout_text, const std::string& script) {
  const std::string line = LastJsonLine(stdout_text);
  if (line.empty()) {
    return absl::DataLossError(
        absl::StrCat(script, ": printed no JSON line; stdout tail:\n", Tail(stdout_text, kStderrTailChars)));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat(script, ": bad JSON line (", e.what(), "): ", Tail(line, 500)));
  }
  if (!j.is_object()) return absl::DataLossError(absl::StrCat(script, ": JSON line is not an object"));
  PeerResult r;
  nlohmann::json config;
  const std::string where = absl::StrCat(script, ": JSON line");
  std::vector<absl::Status> statuses = {
      base::ReadField(j, "config", config, where),
      base::ReadField(j, "threads", r.threads, where),
      base::ReadField(j, "warmup", r.warmup, where),
      base::ReadField(j, "steps", r.steps, where),
      base::ReadField(j, "step_seconds_median", r.step_seconds_median, where),
      base::ReadField(j, "step_seconds", r.step_seconds, where),
      base::ReadField(j, "step_user_seconds", r.step_user_seconds, where),
      base::ReadField(j, "step_system_seconds", r.step_system_seconds, where),
      base::ReadField(j, "step_minor_faults", r.step_minor_faults, where),
      base::ReadField(j, "tokens_per_second", r.tokens_per_second, where),
      base::ReadField(j, "num_params", r.num_params, where),
      base::ReadField(j, "flops_per_token", r.flops_per_token, where),
      base::ReadField(j, "gflops_per_second", r.gflops_per_second, where),
      base::ReadField(j, "peak_rss_bytes", r.peak_rss_bytes, where),
      base::ReadField(j, "torch_version", r.torch_version, where),
      base::ReadField(j, "sgemm_library", r.sgemm_library, where),
      base::ReadField(j, "blas", r.blas, where),
      base::ReadField(j, "glibc_tunables", r.glibc_tunables, where),
  };
  for (const absl::Status& s : statuses) {
    if (!s.ok()) return s;
  }
  // Fields of the torch 2 script; absent ones keep their defaults (eager float32).
  if (j.contains("mode") && j["mode"].is_string()) r.mode = j["mode"].get<std::string>();
  if (j.contains("dtype") && j["dtype"].is_string()) r.dtype = j["dtype"].get<std::string>();
  if (j.contains("compile_seconds") && j["compile_seconds"].is_number()) {
    r.compile_seconds = j["compile_seconds"].get<double>();
  }
  if (j.contains("attention") && j["attention"].is_string()) r.attention = j["attention"].get<std::string>();
  if (j.contains("kernels")) r.kernels = KernelsLine(j["kernels"]);
  const std::string config_where = absl::StrCat(script, ": JSON line config");
  for (absl::Status s : {base::ReadField(config, "depth", r.depth, config_where),
                         base::ReadField(config, "n_embd", r.n_embd, config_where),
                         base::ReadField(config, "n_head", r.n_head, config_where),
                         base::ReadField(config, "vocab", r.vocab, config_where),
                         base::ReadField(config, "batch", r.batch, config_where),
                         base::ReadField(config, "seq", r.seq, config_where)}) {
    if (!s.ok()) return s;
  }
  const std::pair<const char*, size_t> per_step[] = {{"step_seconds", r.step_seconds.size()},
                                                      {"step_user_seconds", r.step_user_seconds.size()},
                                                      {"step_system_seconds", r.step_system_seconds.size()},
                                                      {"step_minor_faults", r.step_minor_faults.size()}};
  for (const auto& [key, size] : per_step) {
    if (r.steps < 1 || static_cast<int>(size) != r.steps) {
      return absl::DataLossError(
          absl::StrCat(script, ": \"", key, "\" holds ", size, " values but \"steps\" is ", r.steps));
    }
  }
  return r;
}

absl::Status WritePeerBatch(const std::string& path, const PeerBatch& b) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the batch file is little-endian");
  const size_t n = static_cast<size_t>(b.batch) * static_cast<size_t>(b.seq);
  const std::pair<const char*, const std::vector<int32_t>*> arrays[] = {
      {"inputs", &b.inputs}, {"targets", &b.targets}, {"segment_ids", &b.segment_ids}, {"positions", &b.positions}};
  for (const auto& [name, values] : arrays) {
    if (values->size() != n || n == 0) {
      return absl::InvalidArgumentError(absl::StrCat("peer batch: ", name, " holds ", values->size(),
                                                     " values, want batch*seq = ", b.batch, "*", b.seq));
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& [name, values] : arrays) {
    out.write(reinterpret_cast<const char*>(values->data()), static_cast<std::streamsize>(n * sizeof(int32_t)));
  }
  if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write the peer's batch file ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> FindPeerScript() { return base::FindRunfile("trainer/bench/pytorch_peer.py"); }

absl::StatusOr<PeerResult> RunPytorchPeer(const PeerOptions& options) {
  std::string script = options.script;
  if (script.empty()) {
    absl::StatusOr<std::string> found = FindPeerScript();
    if (!found.ok()) return found.status();
    script = *found;
  }
  if (!IsRegularFile(script)) return absl::NotFoundError(absl::StrCat("PyTorch peer script ", script, " does not exist"));
  if (access(options.python.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("no executable ", options.python, " to run ", script,
                                            " (the bench makes its own with --peer=torch; Debian: apt-get install -y "
                                            "python3 python3-torch)"));
  }
  absl::StatusOr<ProcessResult> run = RunProcess(PeerArgv(options, script), PeerEnvironment(options));
  if (!run.ok()) return absl::Status(run.status().code(), absl::StrCat(script, ": ", run.status().message()));
  if (run->exit_code != 0) return ExitError(*run, options.python, script);
  return ParsePeerJson(run->stdout_text, script);
}

}  // namespace gpt_sft::bench
