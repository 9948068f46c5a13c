"""Every system path the build reads, in one place.

The build is hermetic with respect to the network: nothing is downloaded. System
libraries come from the Debian packages pinned in third_party/debian_packages.lock
and are found at these paths only.
"""

SYSTEM_PREFIX = "/usr"
LLVM_PREFIX = "/usr/lib/llvm-19"
MULTIARCH_LIB = "/usr/lib/x86_64-linux-gnu"
OPENMPI_PREFIX = "/usr/lib/x86_64-linux-gnu/openmpi"
BAZEL_PLATFORMS = "/usr/share/bazel/platforms"
CUDA_PREFIX = "/usr/local/cuda"
WORDLIST = "/usr/share/dict/words"
# English prose every Debian system has (package base-files): tokenizer demo and benchmarks.
ENGLISH_TEXT_DIR = "/usr/share/common-licenses"
# The SPIR-V -> SPIR 1.2 bitcode translator the OpenCL back end runs (Debian's llvm-spirv-15,
# the LLVM version PoCL 3.1 reads).
LLVM_SPIRV = "/usr/bin/llvm-spirv-15"
# The linker that makes the cpu target's fusion kernels a shared object (Debian's lld-19).
LLD = LLVM_PREFIX + "/bin/ld.lld"
