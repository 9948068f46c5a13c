// The CPU the step's kernels are compiled for: this host, as LLVM sees it (triple, CPU name,
// features such as +avx512f), or under GPT_SFT_CPU_ISA the x86-64 level of the cap
// (base/cpu_isa.h). Part of the artifact key, so a cache shared between machines
// never hands one CPU's code to another.
#ifndef GPT_SFT_COMPILER_CODEGEN_HOST_TARGET_H_
#define GPT_SFT_COMPILER_CODEGEN_HOST_TARGET_H_

#include <string>

namespace gpt_sft::compiler {

struct HostTarget {
  std::string triple;    // x86_64-pc-linux-gnu
  std::string cpu;       // e.g. sapphirerapids
  std::string features;  // LLVM's feature string, sorted: "+avx2,-avx512f,..."

  /// "triple cpu features", as it goes into the key.
  std::string Description() const;
};

HostTarget DetectHostTarget();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_HOST_TARGET_H_
