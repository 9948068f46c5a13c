#include "trainer/bench/peer_speedups.h"

namespace gpt_sft::bench {
namespace {

// The fastest figure of one mode (a mode may have run under several malloc configurations).
std::optional<double> Best(const std::vector<PeerModeSeconds>& peer, const std::string& mode,
                           const std::string& dtype) {
  std::optional<double> best;
  for (const PeerModeSeconds& p : peer) {
    if (p.mode != mode || p.dtype != dtype || !(p.step_seconds > 0)) continue;
    if (!best || p.step_seconds < *best) best = p.step_seconds;
  }
  return best;
}

}  // namespace

std::string PeerModeKey(const std::string& mode, const std::string& dtype) {
  return "torch_" + mode + (dtype == "bfloat16" ? "_bf16" : "");
}

std::vector<std::pair<std::string, double>> PeerSpeedups(const OurSeconds& ours,
                                                         const std::vector<PeerModeSeconds>& peer) {
  std::vector<std::pair<std::string, double>> out;
  auto add = [&](const std::string& name, std::optional<double> other, std::optional<double> mine) {
    if (other && mine && *other > 0 && *mine > 0) out.emplace_back(name, *other / *mine);
  };
  add("speedup_compiled_vs_interpreter", ours.interpreter, ours.compiled);
  const std::pair<const char*, const char*> modes[] = {
      {"eager", "float32"}, {"compile", "float32"}, {"eager", "bfloat16"}, {"compile", "bfloat16"}};
  for (const auto& [ours_name, mine] :
       {std::pair{"compiled", ours.compiled}, std::pair{"interpreter", ours.interpreter}}) {
    for (const auto& [mode, dtype] : modes) {
      add(std::string("speedup_") + ours_name + "_vs_" + PeerModeKey(mode, dtype), Best(peer, mode, dtype), mine);
    }
  }
  return out;
}

}  // namespace gpt_sft::bench
