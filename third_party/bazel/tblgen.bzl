"""gentbl: runs the system mlir-tblgen over an ODS file (a thin genrule; no logic)."""

def gentbl(name, td_file, outs, td_srcs = [], includes = []):
    """Generates one output per (flags, file) pair in `outs`.

    Args:
      name: target name; a filegroup of all outputs.
      td_file: the main .td file.
      outs: list of (flags, output file), e.g. [("-gen-op-decls", "Ops.h.inc")].
      td_srcs: other .td files it includes.
      includes: extra include directories, relative to the workspace root.
    """
    inc = " ".join(["-I $$(dirname $(location %s))" % td_file] +
                   ["-I " + i for i in includes] +
                   ["-I external/llvm/include"])
    for flags, out in outs:
        native.genrule(
            name = "%s_%s" % (name, out.replace(".", "_").replace("/", "_")),
            srcs = [td_file] + td_srcs + ["@llvm//:mlir_td_files"],
            outs = [out],
            tools = ["@llvm//:mlir_tblgen"],
            cmd = "$(location @llvm//:mlir_tblgen) %s %s $(location %s) -o $@" % (flags, inc, td_file),
        )
    native.filegroup(name = name, srcs = [out for _, out in outs])
