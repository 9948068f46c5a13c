// The compiled path's front door: a StepConfig and a Target in, an artifact
// (artifact/) out, from the cache when one with the same key is there (a warm start
// compiles nothing), compiled and stored otherwise. "Compiled" means: built
// (compiler/builder), differentiated, checked static, fused, memory-planned with the
// target's buffer alignment, fusions lowered to linalg (compiler/transforms, stage linalg),
// then every op lowered to the target's kernels and launches (cpu_target.h, opencl_target.h).
//
//   auto outcome = CompileOrLoadStep(config, Target::kOpenCl, base_dir + "/compile_cache");
//   // outcome->artifact goes to runtime::Executable on a device of that target
#ifndef GPT_SFT_COMPILER_CODEGEN_STEP_COMPILER_H_
#define GPT_SFT_COMPILER_CODEGEN_STEP_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/builder/step_config.h"
#include "artifact/artifact.h"
#include "compiler/codegen/target.h"

namespace gpt_sft::compiler {

/// The device runtime's path: `config`'s step compiled for `target` into an artifact
/// (artifact/) whose launch lists the runtime runs as they are. Stages: build, the
/// passes to linalg (planned with the target's buffer alignment), then the target's lowering
/// and code (cpu: compiler/codegen/cpu_target.h; opencl: opencl_target.h).
absl::StatusOr<artifact::Artifact> CompileStep(const StepConfig& config, Target target,
                                               std::vector<std::string>* remarks = nullptr);

/// The key `config`'s step is cached under for `target`.
absl::StatusOr<std::string> StepKey(const StepConfig& config, Target target);

struct CompileOutcome {
  artifact::Artifact artifact;
  bool cache_hit = false;
  double seconds = 0;            // this call: the load on a hit, the whole compile on a miss
  std::string cache_entry;       // the entry's directory
  /// What the cache did, in the order it did it: looked the key up (and found it, found none,
  /// or found it damaged and why), compiled, stored the entry (or why not), loaded.
  std::vector<std::string> cache_log;
  std::vector<std::string> remarks;  // on a miss
};

/// The artifact of `config` for `target` from `cache_dir` (compiler/codegen/artifact_cache.h),
/// compiling and storing it on a miss; a damaged entry is recompiled and replaced, and
/// cache_log says what happened.
absl::StatusOr<CompileOutcome> CompileOrLoadStep(const StepConfig& config, Target target, const std::string& cache_dir);

/// How many times this process has compiled a step (CompileStep calls that succeeded):
/// the trainer's "recompilations" figure is this count minus the first compile.
int64_t StepCompilations();

}  // namespace gpt_sft::compiler

#endif  // GPT_SFT_COMPILER_CODEGEN_STEP_COMPILER_H_
