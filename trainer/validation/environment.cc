#include "trainer/validation/environment.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/json_file.h"
#include "base/read_file.h"
#include "artifact/artifact_file.h"
#include "trainer/bench/subprocess.h"

namespace gpt_sft::trainer::validation {
namespace {

// The file's text, or "" when it cannot be read (the environment is best effort).
std::string ReadText(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadFile(path);
  return text.ok() ? *std::move(text) : "";
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t start = s.find_first_not_of(" \t");
  return start == std::string::npos ? "" : s.substr(start);
}

std::string DebianVersion(const std::string& package) {
  absl::StatusOr<bench::ProcessResult> r =
      bench::RunProcess({"/usr/bin/dpkg-query", "-W", "-f=${Status}|${Version}", package}, bench::CurrentEnvironment());
  if (!r.ok()) return "unknown (dpkg-query not runnable)";
  const std::string out = Trim(r->stdout_text);
  if (r->exit_code != 0 || out.rfind("install ok installed|", 0) != 0) return "not installed";
  return out.substr(out.find('|') + 1);
}

std::string Gpus() {
  std::vector<std::string> gpus;
  std::error_code ec;
  const std::filesystem::path dir = "/proc/driver/nvidia/gpus";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::istringstream info(ReadText((entry.path() / "information").string()));
    for (std::string line; std::getline(info, line);) {
      if (line.rfind("Model:", 0) == 0) gpus.push_back(Trim(line.substr(6)));
    }
  }
  if (!gpus.empty()) {
    return absl::StrCat(absl::StrJoin(gpus, ", "), " (not used: the trainer runs on the CPU)");
  }
  if (std::filesystem::exists("/dev/nvidia0", ec)) return "an NVIDIA device node, no driver information (not used)";
  return "none";
}

std::string OsName() {
  std::string name;
  std::istringstream release(ReadText("/etc/os-release"));
  for (std::string line; std::getline(release, line);) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      name = line.substr(12);
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    }
  }
  utsname u{};
  if (uname(&u) == 0) name = absl::StrCat(name.empty() ? "unknown" : name, ", ", u.sysname, " ", u.release, " ", u.machine);
  return name;
}

std::string CxxCompiler() {
#if defined(__clang__)
  return absl::StrCat("clang ", __clang_version__);
#elif defined(__GNUC__)
  return absl::StrCat("gcc ", __VERSION__, " (built every binary of this run: Bazel -c opt, C++17)");
#else
  return "unknown";
#endif
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ReportedPackages() {
  return {{"LLVM", "llvm-19-dev"},
          {"MLIR", "libmlir-19-dev"},
          {"OpenBLAS", "libopenblas0-pthread"},
          {"OpenMPI", "openmpi-bin"},
          {"OpenMPI headers", "libopenmpi-dev"},
          {"Abseil", "libabsl-dev"},
          {"matplotlib (plots)", "python3-matplotlib"},
          {"Bazel", "bazel-bootstrap"}};
}

std::string CpuModelFromCpuinfo(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return Trim(line.substr(colon + 1));
  }
  return "";
}

std::string CompilerVersionFromCache(const std::string& cache_dir, const std::string& key) {
  const std::string path = cache_dir + "/" + key + "/step.gptart";
  absl::StatusOr<std::string> bytes = base::ReadFile(path);
  if (!bytes.ok()) return "";
  absl::StatusOr<artifact::Artifact> a = artifact::ParseArtifact(*bytes, path);
  return a.ok() ? a->compiler_version : "";
}

Environment CollectEnvironment() {
  Environment e;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) e.hostname = host;
  e.cpu_model = CpuModelFromCpuinfo(ReadText("/proc/cpuinfo"));
  if (e.cpu_model.empty()) e.cpu_model = "unknown (/proc/cpuinfo has no model name)";
  e.cpu_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  CPU_ZERO(&set);
  e.cpus_usable = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : e.cpu_cores;
  e.gpu = Gpus();
  e.os = OsName();
  e.cxx_compiler = CxxCompiler();
  for (const auto& [label, package] : ReportedPackages()) {
    e.packages.push_back({absl::StrCat(label, " (", package, ")"), DebianVersion(package)});
  }
  return e;
}

}  // namespace gpt_sft::trainer::validation
