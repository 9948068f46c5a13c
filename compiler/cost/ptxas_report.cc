// Implements ParsePtxasReport and RunPtxas. A ptxas -v report, per entry point:
//   ptxas info    : Compiling entry function 'attention' for 'sm_90'
//   ptxas info    : Function properties for attention
//       1120 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 128 registers, used 1 barriers, 1120 bytes cumulative stack size, 24576 bytes smem
// "Function properties for" a device function (not the entry being compiled) also appears;
// its frame belongs to that function, and the entry's cumulative stack covers it.
#include "compiler/cost/ptxas_report.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/external_tool.h"

namespace gpt_sft::compiler::cost {
namespace {

/// The integer before `unit` in `line` ("1120 bytes stack frame" -> 1120), or -1.
int64_t NumberBefore(const std::string& line, const std::string& unit) {
  const std::regex pattern("([0-9]+) " + unit);
  std::smatch m;
  if (!std::regex_search(line, m, pattern)) return -1;
  int64_t value = 0;
  return absl::SimpleAtoi(m[1].str(), &value) ? value : -1;
}

/// The name between the first pair of single quotes after `marker`, or "".
std::string QuotedAfter(const std::string& line, const std::string& marker) {
  const size_t at = line.find(marker);
  if (at == std::string::npos) return "";
  const size_t open = line.find('\'', at);
  const size_t close = open == std::string::npos ? open : line.find('\'', open + 1);
  return close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

}  // namespace

absl::StatusOr<std::map<std::string, KernelResources>> ParsePtxasReport(std::string_view text) {
  std::map<std::string, KernelResources> kernels;
  std::map<std::string, bool> has_registers;
  std::string entry;            // the entry being compiled
  bool properties_of_entry = false;  // the last "Function properties for" named it
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (std::string name = QuotedAfter(line, "Compiling entry function"); !name.empty()) {
      entry = name;
      kernels[entry];
      has_registers[entry] = false;
      properties_of_entry = false;
    } else if (const size_t at = line.find("Function properties for "); at != std::string::npos) {
      properties_of_entry = !entry.empty() && line.substr(at + 24) == entry;
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (!properties_of_entry) continue;
      KernelResources& k = kernels[entry];
      k.stack_frame_bytes = NumberBefore(line, "bytes stack frame");
      k.spill_store_bytes = NumberBefore(line, "bytes spill stores");
      k.spill_load_bytes = NumberBefore(line, "bytes spill loads");
    } else if (const int64_t registers = NumberBefore(line, "registers"); registers >= 0 && !entry.empty()) {
      KernelResources& k = kernels[entry];
      k.registers = static_cast<int>(registers);
      k.shared_bytes = std::max<int64_t>(0, NumberBefore(line, "bytes smem"));
      has_registers[entry] = true;
    }
  }
  for (const auto& [name, seen] : has_registers) {
    if (!seen) return absl::InvalidArgumentError(absl::StrCat("ptxas report: entry '", name, "' has no 'Used N registers' line"));
  }
  return kernels;
}

absl::StatusOr<ArtifactResources> RunPtxas(const artifact::Artifact& artifact, const std::string& ptxas,
                                          const std::string& arch) {
  absl::StatusOr<ScratchDir> dir = ScratchDir::Make("gpt-cost-ptxas");
  if (!dir.ok()) return dir.status();
  ArtifactResources resources;
  for (size_t m = 0; m < artifact.modules.size(); ++m) {
    const artifact::KernelModule& module = artifact.modules[m];
    // A module the compiler assembled carries what ptxas said then; PTX is assembled here.
    std::string report = module.assembler_report;
    if (report.empty()) {
      if (module.format != artifact::ModuleFormat::kPtx) continue;
      const std::string ptx = dir->File(absl::StrCat("module", m, ".ptx"));
      const std::string cubin = dir->File(absl::StrCat("module", m, ".cubin"));
      if (absl::Status s = WriteWholeFile(ptx, module.bytes); !s.ok()) return s;
      if (absl::Status s = RunTool({ptxas, "-arch=" + arch, "-v", ptx, "-o", cubin}, "ptxas (CUDA toolkit)", &report);
          !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<std::map<std::string, KernelResources>> kernels = ParsePtxasReport(report);
    if (!kernels.ok()) return absl::InternalError(absl::StrCat("module ", module.name, ": ", kernels.status().message()));
    for (auto& [symbol, k] : *kernels) resources[{static_cast<int>(m), symbol}] = k;
  }
  return resources;
}

}  // namespace gpt_sft::compiler::cost
