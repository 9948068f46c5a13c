// Implements RunKernelBenchmarks.
#include "runtime/kernels/cpu/benchmark_main.h"

#include <cstdlib>
#include <cstring>

#include "benchmark/benchmark.h"
#include "runtime/kernels/cpu/parallel.h"

namespace gpt_sft::runtime::kernels {

int RunKernelBenchmarks(int argc, char** argv, const std::vector<std::pair<std::string, std::string>>& context) {
  int threads = 2, kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  SetNumThreads(threads);
  benchmark::AddCustomContext("kernel_threads", std::to_string(threads));
  for (const auto& [key, value] : context) benchmark::AddCustomContext(key, value);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace gpt_sft::runtime::kernels
