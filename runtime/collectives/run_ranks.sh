#!/usr/bin/env bash
# run_ranks.sh: starts N ranks of a program on this machine with OpenMPI's mpirun, with the
# settings that work here (the one place that knows them; tests and the trainer use it).
#
#   run_ranks.sh [--mpirun PATH] -np N PROGRAM [ARGS...]
#
# mpirun: --mpirun PATH, else $MPIRUN, else `mpirun` on PATH. Settings, and why:
#   * running as root (containers, CI) is refused unless both OMPI_ALLOW_RUN_AS_ROOT* are set;
#   * --oversubscribe: more ranks than cores (4 ranks on 2 cores) is allowed;
#   * --bind-to none: ranks float, so oversubscribed ranks are not pinned onto one core;
#   * --mca btl self,vader,tcp: shared memory between local ranks (self: a rank to itself);
#   * a writable TMPDIR (Bazel's TEST_TMPDIR in tests) for OpenMPI's session directory;
#   * OMPI_MCA_mpi_yield_when_idle=1: a waiting rank yields its core, which oversubscribed
#     ranks need to make progress.
#   * --stdin none: no rank reads mpirun's stdin, so mpirun never reads the terminal (the
#     trainer runs mpirun in a process group of its own, where reading it would stop mpirun).
#   * OMPI_MCA_odls_base_sigkill_timeout=1 (unless set): when a rank dies, mpirun sends the
#     others SIGCONT, then SIGTERM after this many seconds, then SIGKILL as long again. The
#     trainer takes mpirun's own SIGTERM as the job's end (it stops at once, naming the rank it
#     waited for), so a dead rank ends the job within about this bound. A clean stop does not
#     go through mpirun's SIGTERM: the trainer sends mpirun SIGUSR2, which mpirun forwards.
# Exit status: mpirun's. When a rank exits non-zero (or without MPI_Finalize) mpirun stops the
# other ranks and exits non-zero itself.
set -euo pipefail

mpirun="${MPIRUN:-mpirun}"
if [[ "${1:-}" == "--mpirun" ]]; then
  mpirun="$2"
  shift 2
fi
if [[ "${1:-}" != "-np" || -z "${2:-}" || -z "${3:-}" ]]; then
  echo "usage: $0 [--mpirun PATH] -np N PROGRAM [ARGS...]" >&2
  exit 2
fi
ranks="$2"
shift 2

export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_odls_base_sigkill_timeout="${OMPI_MCA_odls_base_sigkill_timeout:-1}"
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"

exec "$mpirun" -np "$ranks" --oversubscribe --bind-to none --stdin none --mca btl self,vader,tcp "$@"
