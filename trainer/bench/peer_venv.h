// The PyTorch peer's Python: a virtual environment with a pinned torch from PyPI, created on
// first use outside the checkout (~/.cache/gpt-sft/torch-peer-<version>/) and reused after.
//
// Creation is atomic: the venv is built in "<final>.partial-<pid>", checked (its python imports
// torch and reports the pinned version), marked complete, and only then renamed to its final
// name. An interrupted or failed install therefore never looks like a good one: a final
// directory exists only if it is complete, and a partial one whose process is gone is removed
// by the next run. MLIR-free and torch-free at build time.
#ifndef GPT_SFT_TRAINER_BENCH_PEER_VENV_H_
#define GPT_SFT_TRAINER_BENCH_PEER_VENV_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpt_sft::bench {

/// The torch the bench's peer pins. PyPI's Linux wheel is built for CUDA and needs its nvidia-*
/// libraries to import at all, even on a CPU (libtorch_cuda is a link dependency), so the
/// install is the ordinary `pip install torch==<version>`: about 5 GB on disk, once.
inline constexpr char kPinnedTorchVersion[] = "2.15.0";
/// numpy beside it only so torch does not warn that it is missing.
inline constexpr char kPinnedNumpyVersion[] = "2.4.6";

struct PeerVenvOptions {
  /// Where venvs live; empty: $XDG_CACHE_HOME/gpt-sft, else $HOME/.cache/gpt-sft.
  std::string root_dir;
  /// The interpreter `-m venv` runs with; empty: DefaultBasePython().
  std::string base_python;
  std::string torch_version = kPinnedTorchVersion;
  /// The install step's argv; "{python}" in an element is replaced by the new venv's python.
  /// Empty: {python} -m pip install --progress-bar on torch==<torch_version> numpy==<pinned>.
  std::vector<std::string> install_command;
  /// The check's argv, with "{python}" replaced; it must exit 0 and print the torch version
  /// first on its stdout. Empty: {python} -c "import torch; print(torch.__version__)".
  std::vector<std::string> check_command;
  /// Messages and the progress lines, and the installer's own output (pip's download bars).
  std::ostream* progress = nullptr;
};

/// The first executable `python3` on $PATH, else /usr/bin/python3. PATH first because a python
/// whose LIBDIR holds Debian's python3-torch (/usr/lib/x86_64-linux-gnu: Debian's own python3)
/// breaks torch 2's inductor, which links with -L<LIBDIR> first (pytorch_peer.py, exit 6).
std::string DefaultBasePython();

/// The root in effect for `options` (the default when root_dir is empty).
std::string PeerVenvRoot(const PeerVenvOptions& options);
/// <root>/torch-peer-<torch_version>: the complete venv, when it exists.
std::string PeerVenvDir(const PeerVenvOptions& options);

/// The python of a complete peer venv, creating the venv first if there is none (minutes: it
/// downloads torch). A final directory without the completion marker (made by hand, or by an
/// older tool) is not trusted: FailedPrecondition naming it and the command that removes it.
/// A failed step is an error naming the command that failed, its exit status, and where its
/// output went; nothing half-made is left behind under the final name.
absl::StatusOr<std::string> EnsurePeerVenv(const PeerVenvOptions& options);

/// The name of the marker file a complete venv holds (its content: the torch version).
inline constexpr char kPeerVenvCompleteMarker[] = "gpt-sft-torch-peer-complete";

}  // namespace gpt_sft::bench

#endif  // GPT_SFT_TRAINER_BENCH_PEER_VENV_H_
