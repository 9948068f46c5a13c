#include "trainer/bench/peer_interpreter.h"

#include "absl/strings/str_cat.h"
#include "trainer/bench/pytorch_peer.h"

namespace gpt_sft::bench {

absl::StatusOr<PeerInterpreter> ChoosePeerInterpreter(const std::string& peer, const std::string& peer_python,
                                                      const PeerVenvOptions& venv) {
  if (peer == "torch-debian") {
    return PeerInterpreter{kDebianPython, "Debian's torch (--peer=torch-debian)", ""};
  }
  if (peer != "torch") {
    return absl::InvalidArgumentError(absl::StrCat("--peer must be torch, torch-debian or none, got '", peer, "'"));
  }
  if (!peer_python.empty()) return PeerInterpreter{peer_python, "--peer_python=" + peer_python, ""};
  absl::StatusOr<std::string> python = EnsurePeerVenv(venv);
  if (python.ok()) {
    return PeerInterpreter{*python, absl::StrCat("torch ", venv.torch_version, " from PyPI (", *python, ")"), ""};
  }
  const std::string reason =
      absl::StrCat("the pinned torch ", venv.torch_version, " could not be installed: ", python.status().message());
  return PeerInterpreter{kDebianPython, "FALLBACK: Debian's torch, not the pinned torch " + venv.torch_version, reason};
}

}  // namespace gpt_sft::bench
