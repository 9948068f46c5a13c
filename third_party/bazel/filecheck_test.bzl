"""mlir_filecheck_tests: one sh_test per .mlir file, running its `// RUN:` lines (no lit)."""

def mlir_filecheck_tests(srcs, tools, name = None, **kwargs):
    """Creates `<file>_test` for each file in `srcs` (test/foo.mlir -> foo_test).

    Args:
      srcs: the .mlir test files.
      tools: executables the RUN lines name by basename (gptc-opt, FileCheck, not).
      name: optional test_suite over all the tests.
      **kwargs: passed to each sh_test (size, tags, ...).
    """
    tests = []
    for src in srcs:
        test_name = src.split("/")[-1].rsplit(".", 1)[0] + "_test"
        native.sh_test(
            name = test_name,
            srcs = ["//third_party/bazel:run_lit_lines.sh"],
            args = ["$(rootpath %s)" % src] + ["$(rootpath %s)" % t for t in tools],
            data = [src] + tools,
            **kwargs
        )
        tests.append(test_name)
    if name:
        native.test_suite(name = name, tests = tests)
