"""mpi_test: runs a test binary as N real MPI ranks through run_ranks.sh (one test per N)."""

def mpi_test(name, binary, ranks = [2, 4], size = "small", **kwargs):
    """Creates `<name>_<n>_ranks_test` for each n in `ranks`.

    Args:
      name: prefix of the tests' names.
      binary: a cc_binary (testonly) that every rank runs; each rank's exit status counts.
      ranks: world sizes; more ranks than cores is fine (run_ranks.sh oversubscribes).
      size: the tests' size.
      **kwargs: passed to each sh_test.
    """
    for n in ranks:
        native.sh_test(
            name = "%s_%d_ranks_test" % (name, n),
            size = size,
            srcs = ["//runtime/collectives:run_ranks.sh"],
            args = [
                "--mpirun",
                "$(rootpath @mpi//:mpirun)",
                "-np",
                str(n),
                "$(rootpath %s)" % binary,
            ],
            data = [binary, "@mpi//:mpirun"],
            **kwargs
        )
