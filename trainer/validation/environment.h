// The machine and software a validation ran on, for the report: CPU model and cores
// (/proc/cpuinfo, the affinity mask), GPUs (the NVIDIA driver's /proc entries), the OS, the
// C++ compiler that built the binaries, and the installed versions of the Debian packages
// behind LLVM/MLIR, OpenBLAS, OpenMPI and the plots (dpkg-query). What cannot be read says so.
#ifndef GPT_SFT_TRAINER_VALIDATION_ENVIRONMENT_H_
#define GPT_SFT_TRAINER_VALIDATION_ENVIRONMENT_H_

#include <string>
#include <utility>
#include <vector>

#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// Label -> Debian package, in report order.
std::vector<std::pair<std::string, std::string>> ReportedPackages();

/// Everything but gptc_version (the driver reads it from the compile cache's manifest).
Environment CollectEnvironment();

/// The "model name" of the first processor in /proc/cpuinfo text; "" when none.
std::string CpuModelFromCpuinfo(const std::string& cpuinfo);

/// The compiler version of the artifact <cache_dir>/<key>/step.gptart; "" when it cannot be read.
std::string CompilerVersionFromCache(const std::string& cache_dir, const std::string& key);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_ENVIRONMENT_H_
