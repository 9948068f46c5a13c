"""assert_no_dependency: a test that fails when `target` reaches a forbidden room.

DESIGN.md's layering (data depends on nothing of ours; compiler never on runtime or
trainer; ...) is checked by Bazel itself: a genquery lists the forbidden labels in the
target's transitive deps, and the test fails, printing them, when the list is not empty.
"""

def assert_no_dependency(name, target, forbidden, why):
    """Args:
      name: test name.
      target: the label whose transitive deps are checked.
      forbidden: a regex over labels, e.g. "^//(compiler|runtime|trainer)[/:]".
      why: one line printed on failure: the rule that was broken.
    """
    if target.startswith(":"):
        target = "//%s%s" % (native.package_name(), target)
    native.genquery(
        name = name + "_query",
        expression = "filter('%s', deps(%s))" % (forbidden, target),
        scope = [target],
        testonly = True,
    )
    native.sh_test(
        name = name,
        srcs = ["//third_party/bazel:expect_empty.sh"],
        args = ["$(location :%s_query)" % name, "'%s'" % why],
        data = [":%s_query" % name],
    )
