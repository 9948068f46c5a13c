// Runs the PyTorch peer in each of its modes (eager / torch.compile, fp32 / bf16 autocast), each
// in its own process (so each has its own peak memory), under each malloc configuration asked
// for, on the same batch; prints one row per run and gathers the figures for the JSON report.
#ifndef GPT_SFT_TRAINER_BENCH_PEER_MODES_H_
#define GPT_SFT_TRAINER_BENCH_PEER_MODES_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/bench/peer_interpreter.h"
#include "trainer/bench/peer_speedups.h"
#include "trainer/bench/pytorch_peer.h"

namespace gpt_sft::bench {

struct PeerMode {
  std::string mode;   ///< "eager" or "compile"
  std::string dtype;  ///< "float32" or "bfloat16"
  bool operator==(const PeerMode& o) const { return mode == o.mode && dtype == o.dtype; }
};

/// --peer_modes: "all" (eager-fp32, compile-fp32, eager-bf16, compile-bf16, in that order) or a
/// comma-separated list of those names. InvalidArgument naming a bad entry.
absl::StatusOr<std::vector<PeerMode>> ParsePeerModes(const std::string& flag);
/// --peer_malloc: "both", "glibc-default" or "no-mmap-trim".
absl::StatusOr<std::vector<MallocConfig>> ParsePeerMalloc(const std::string& flag);

struct PeerModesResult {
  /// {"python", "source", "fallback_reason"?, "runs": [one object per run: mode, dtype, malloc
  /// and its figures, or "not_run" with the reason]}.
  nlohmann::ordered_json json;
  std::vector<PeerModeSeconds> seconds;  ///< the runs that produced a figure
};

/// Runs every mode under every malloc configuration with `base`'s config and batch, through
/// `interpreter`. A run that fails is a row saying why (and a "not_run" entry), never a figure.
/// `flops_per_token` is ours (nanochat's formula), for the GFLOP/s column.
PeerModesResult RunPeerModes(const PeerOptions& base, const PeerInterpreter& interpreter,
                             const std::vector<PeerMode>& modes, const std::vector<MallocConfig>& mallocs,
                             int64_t flops_per_token, std::ostream& out);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_PEER_MODES_H_
