"""Tests at the CPU ISA levels users have, on whatever CPU runs them (base/cpu_isa.h).

* `test_at_isa_caps`: a built test binary again under each GPT_SFT_CPU_ISA cap, so a machine
  with AVX-512 or AMX also runs the AVX2 and generic kernels an older CPU runs.
* `test_on_emulated_cpus`: the binary on CPUs that QEMU's user mode emulates (AVX2 without
  AVX-512; no AVX at all). There CPUID itself reports the lower level, and an instruction above
  it is a SIGILL, so a kernel that reached AVX-512 code without asking base/cpu_isa.h fails.
  Emulation is slow: for kernel tests, not for whole training steps.
"""

# The caps CI runs besides the machine's own level.
ISA_CAPS = ["avx2", "generic"]

# QEMU 7.2's TCG executes AVX2 and FMA but no AVX-512 or AMX. Nehalem (SSE4.2, no AVX) for generic:
# its qemu64 model claims 3DNow!, which OpenBLAS then uses and TCG cannot run.
EMULATED_CPUS = {
    "avx2": "Haswell-v4",
    "generic": "Nehalem",
}

_RUNNER = "//third_party/bazel:run_at_isa.sh"

def _binary_test(name, cpu, test, size, env, args, tags):
    native.sh_test(
        name = name,
        size = size,
        srcs = [_RUNNER],
        args = [cpu, "$(location %s)" % test] + args,
        data = [test],
        env = env,
        tags = tags,
    )

def test_at_isa_caps(test, caps = ISA_CAPS, size = "medium", args = [], tags = []):
    """<test>_<cap> for each cap: the test binary `test` (a label in this package, ":name")
    run with GPT_SFT_CPU_ISA=<cap>."""
    for cap in caps:
        _binary_test(test.lstrip(":") + "_" + cap, "native", test, size, {"GPT_SFT_CPU_ISA": cap}, args, tags)

def test_on_emulated_cpus(test, levels = ["avx2", "generic"], size = "large", args = [], tags = []):
    """<test>_on_emulated_<level>: the test binary `test` on the CPU QEMU emulates for `level`."""
    for level in levels:
        _binary_test(test.lstrip(":") + "_on_emulated_" + level, EMULATED_CPUS[level], test, size, {}, args, tags)

def every_cc_test_at_every_isa_level(not_emulated = []):
    """test_at_isa_caps and test_on_emulated_cpus for every cc_test defined so far in this
    package (call it last), so a kernel test added later runs at every level too. Tests named
    in `not_emulated` (too slow under emulation) run under the caps only."""
    for name, rule in native.existing_rules().items():
        if rule["kind"] == "cc_test":
            test_at_isa_caps(":" + name, size = rule.get("size") or "medium")
            if name not in not_emulated:
                test_on_emulated_cpus(":" + name)

def sh_test_at_isa_caps(name, caps = ISA_CAPS, **kwargs):
    """An sh_test, and <name>_<cap> for each cap: the same test with GPT_SFT_CPU_ISA=<cap>."""
    native.sh_test(name = name, **kwargs)
    for cap in caps:
        native.sh_test(name = name + "_" + cap, env = {"GPT_SFT_CPU_ISA": cap}, **kwargs)
