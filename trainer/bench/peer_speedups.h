// The bench's ratios of ours to the PyTorch peer: each peer mode's median step time over ours.
// A pure function of the measured figures, so the names and the arithmetic are tested apart
// from any run.
#ifndef GPT_SFT_TRAINER_BENCH_PEER_SPEEDUPS_H_
#define GPT_SFT_TRAINER_BENCH_PEER_SPEEDUPS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpt_sft::bench {

/// One peer mode's figure: "eager" or "compile", "float32" or "bfloat16", its median step time
/// (the best over the malloc configurations it ran under).
struct PeerModeSeconds {
  std::string mode, dtype;
  double step_seconds = 0;
};

/// Our median step times at the bench's --dtype; nullopt: that path did not run.
struct OurSeconds {
  std::optional<double> interpreter, compiled;
};

/// Every ratio the figures allow, in this order, each "how many times faster ours is" (the
/// other's seconds / ours):
///   speedup_compiled_vs_interpreter
///   speedup_compiled_vs_torch_eager          (torch eager fp32)
///   speedup_compiled_vs_torch_compile        (torch.compile fp32)
///   speedup_compiled_vs_torch_eager_bf16     (torch eager under bf16 autocast)
///   speedup_compiled_vs_torch_compile_bf16   (torch.compile under bf16 autocast)
///   speedup_interpreter_vs_torch_eager, ..._compile, ..._eager_bf16, ..._compile_bf16
/// A ratio whose two figures are not both present (or not positive) is left out: never 0.
std::vector<std::pair<std::string, double>> PeerSpeedups(const OurSeconds& ours,
                                                         const std::vector<PeerModeSeconds>& peer);

/// The name suffix of a peer mode: "torch_eager", "torch_compile_bf16", ...
std::string PeerModeKey(const std::string& mode, const std::string& dtype);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_PEER_SPEEDUPS_H_
