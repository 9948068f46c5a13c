// Implements CompileDeviceStep.
#include "trainer/step_compile.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/step_compiler.h"
#include "compiler/codegen/target.h"

namespace gpt_sft::trainer {

absl::StatusOr<std::unique_ptr<DeviceStep>> CompileDeviceStep(const compiler::StepConfig& config,
                                                              runtime::ParamStore* params, const std::string& cache_dir,
                                                              DeviceStepOptions options) {
  // "opencl:1" -> the opencl target.
  absl::StatusOr<compiler::Target> target = compiler::ParseTarget(options.device.substr(0, options.device.find(':')));
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("--device=", options.device, ": ", target.status().message()));
  runtime::collectives::Communicator* comm = options.communicator;
  const int world = comm ? comm->world_size() : 1;
  ArtifactOrigin origin;
  artifact::Artifact artifact;
  if (cache_dir.empty()) {
    absl::StatusOr<artifact::Artifact> compiled = compiler::CompileStep(config, *target);
    if (!compiled.ok()) return compiled.status();
    artifact = *std::move(compiled);
    origin.source = ArtifactOrigin::Source::kCompiled;
    origin.seconds = artifact.compile_seconds;
  } else {
    const bool first = comm == nullptr || comm->rank() == 0;
    absl::StatusOr<compiler::CompileOutcome> outcome;
    if (first) outcome = compiler::CompileOrLoadStep(config, *target, cache_dir);
    if (world > 1) {
      if (absl::Status s = comm->Barrier(); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("waiting for rank 0 to compile the step: ", s.message()));
      }
    }
    if (!first) outcome = compiler::CompileOrLoadStep(config, *target, cache_dir);
    if (!outcome.ok()) return outcome.status();
    origin.cache_hit = outcome->cache_hit;
    origin.source = outcome->cache_hit ? ArtifactOrigin::Source::kCache : ArtifactOrigin::Source::kCompiled;
    origin.seconds = outcome->seconds;
    origin.cache_entry = outcome->cache_entry;
    origin.cache_log = absl::StrJoin(outcome->cache_log, "; then ");
    artifact = std::move(outcome->artifact);
  }
  options.compilations = [] { return compiler::StepCompilations(); };
  return DeviceStep::Create(artifact, params, options, origin);
}

}  // namespace gpt_sft::trainer
