// The main of the kernels' Google Benchmark binaries: `--threads=N` (default 2, taken out of
// argv before Google Benchmark parses it) sets the kernels' pool, and the report's context
// records it with the binary's own entries (which kernel ran).
#ifndef GPT_SFT_RUNTIME_KERNELS_CPU_BENCHMARK_MAIN_H_
#define GPT_SFT_RUNTIME_KERNELS_CPU_BENCHMARK_MAIN_H_

#include <string>
#include <utility>
#include <vector>

namespace gpt_sft::runtime::kernels {

/// Runs the registered benchmarks; returns main's exit status (1 for an unknown flag).
int RunKernelBenchmarks(int argc, char** argv,
                        const std::vector<std::pair<std::string, std::string>>& context = {});

}  // namespace gpt_sft::runtime::kernels

#endif  // GPT_SFT_RUNTIME_KERNELS_CPU_BENCHMARK_MAIN_H_
