// Which Python runs the bench's PyTorch peer, and how the choice is labelled:
//   --peer=torch          the pinned torch from PyPI in the bench's own venv (peer_venv.h), made
//                         on first use; if it cannot be made, Debian's torch 1.13 as a fallback
//                         that the output and the JSON say loudly;
//   --peer=torch-debian   Debian's /usr/bin/python3 with python3-torch 1.13 (labelled);
//   --peer_python=PATH    an interpreter the user already has (with --peer=torch).
#ifndef GPT_SFT_TRAINER_BENCH_PEER_INTERPRETER_H_
#define GPT_SFT_TRAINER_BENCH_PEER_INTERPRETER_H_

#include <string>

#include "absl/status/statusor.h"
#include "trainer/bench/peer_venv.h"

namespace gpt_sft::bench {

struct PeerInterpreter {
  std::string python;
  /// How it was chosen, for the table and the JSON: "venv torch 2.15.0 (PyPI)", "--peer_python",
  /// "Debian torch 1.13 (--peer=torch-debian)", "Debian torch 1.13 (FALLBACK: ...)".
  std::string source;
  /// Empty unless the pinned torch was wanted and could not be had: why, in words.
  std::string fallback_reason;
};

/// `peer` is "torch" or "torch-debian"; `peer_python` may be empty. InvalidArgument for another
/// `peer`. With --peer=torch and no --peer_python, a failure to make the venv is not an error:
/// it selects Debian's python, with the failure as fallback_reason.
absl::StatusOr<PeerInterpreter> ChoosePeerInterpreter(const std::string& peer, const std::string& peer_python,
                                                      const PeerVenvOptions& venv);

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_PEER_INTERPRETER_H_
