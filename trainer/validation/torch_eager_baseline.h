// The validation report's second eager baseline: PyTorch eager running nanochat's model
// (trainer/bench/pytorch_peer.py, the bench's peer) at the configuration Test 2 trained with,
// so the ">= 1.3x over eager" target is stated against it as well as against our interpreter.
//
// Which python runs it (validate's --torch_eager):
//   auto   the bench's pinned-torch venv if it is already complete (never downloads), else
//          not measured, saying how to make it;
//   venv   that venv, made now if missing (downloads torch once);
//   none   not measured;
//   PATH   that interpreter.
#ifndef GPT_SFT_TRAINER_VALIDATION_TORCH_EAGER_BASELINE_H_
#define GPT_SFT_TRAINER_VALIDATION_TORCH_EAGER_BASELINE_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "base/json_file.h"
#include "trainer/bench/peer_venv.h"
#include "trainer/bench/pytorch_peer.h"
#include "trainer/validation/validation_report.h"

namespace gpt_sft::trainer::validation {

/// The peer's options for Test 2's configuration: the model config (the checkpoint meta's
/// model_config), its micro-batch shape, micro-batches per optimizer step (tokens per step /
/// B*T), threads and dtype ("bfloat16" runs nanochat's bf16 autocast; anything float32 runs
/// float32). FailedPrecondition saying which figure is missing or which config the peer cannot
/// run (n_kv_head != n_head).
absl::StatusOr<bench::PeerOptions> TorchEagerPeerOptions(const base::Json& model_config, const TestRun& compiled,
                                                         const std::string& dtype);

struct TorchEagerRequest {
  std::string python_flag = "auto";  ///< auto, venv, none, or a path
  bench::PeerVenvOptions venv;       ///< where the bench's venv is (auto and venv)
  std::string script;                ///< the peer script; empty: the runfile
  int warmup = 1, steps = 3;
};

/// Runs the baseline, or says why it was not measured (never an error: the criterion is
/// optional). Progress and the outcome go to `console`.
TorchEagerBaseline MeasureTorchEager(const TorchEagerRequest& request, const base::Json& model_config,
                                     const TestRun* compiled, const std::string& dtype, std::ostream& console);

}  // namespace gpt_sft::trainer::validation

#endif  // GPT_SFT_TRAINER_VALIDATION_TORCH_EAGER_BASELINE_H_
