"""Detects the CUDA toolkit without downloading anything.

Creates @local_cuda with `defs.bzl` (CUDA_AVAILABLE, CUDA_PATH) and, when the toolkit is
present, cc_library targets for its headers and libraries. When it is absent the build
is CPU-only and every CPU target still builds.
"""

load("//third_party:system_paths.bzl", "CUDA_PREFIX")

_PRESENT_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "cuda_headers",
    hdrs = glob(["cuda/include/**/*.h", "cuda/include/**/*.hpp", "cuda/include/**/*.cuh"]),
    includes = ["cuda/include"],
)

cc_library(
    name = "cudart",
    srcs = glob(["cuda/lib64/libcudart.so"]),
    deps = [":cuda_headers"],
    linkopts = ["-Wl,-rpath,{path}/lib64"],
)

cc_library(
    name = "cublas",
    srcs = glob(["cuda/lib64/libcublas.so", "cuda/lib64/libcublasLt.so"]),
    deps = [":cudart"],
)

cc_library(
    name = "nccl",
    srcs = glob(["cuda/lib64/libnccl.so", "nccl_lib/libnccl.so"]),
    hdrs = glob(["cuda/include/nccl.h", "nccl_include/nccl.h"]),
    deps = [":cudart"],
)

filegroup(name = "nvcc", srcs = ["cuda/bin/nvcc"])

filegroup(name = "ptxas", srcs = ["cuda/bin/ptxas"])
"""

_ABSENT_BUILD = """
package(default_visibility = ["//visibility:public"])
# No CUDA toolkit was found at {path}; CUDA targets are skipped.
"""

def _cuda_configure_impl(ctx):
    path = ctx.os.environ.get("GPT_SFT_CUDA_PATH", CUDA_PREFIX)
    nvcc = ctx.path(path + "/bin/nvcc")
    available = nvcc.exists
    if available:
        ctx.symlink(path, "cuda")
        ctx.file("BUILD", _PRESENT_BUILD.format(path = path))
    else:
        ctx.file("BUILD", _ABSENT_BUILD.format(path = path))
    ctx.file("defs.bzl", "CUDA_AVAILABLE = %s\nCUDA_PATH = %r\n" % (available, path))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["GPT_SFT_CUDA_PATH"],
    local = True,
)
