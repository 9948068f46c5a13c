"""PyTorch peer of our full-step benchmark: nanochat's GPT in PyTorch, one mode per process.

Builds nanochat's model (peer_model.py: F.rms_norm and SDPA on torch 2, the explicit attention
of tests/golden/reference_gpt.py on torch 1.13) at the given config with random float32 weights
(reference_init.py), and times full training steps: forward, loss, backward and the SFT
optimizer step of tests/golden/reference_optim.py (AdamW for wte and lm_head, Muon for the block
matrices). Modes:
  --mode eager     plain eager PyTorch;
  --mode compile   the loss (forward + cross entropy) under torch.compile(dynamic=False), so its
                   backward is compiled too (AOTAutograd); the optimizer stays eager. The first
                   step compiles, into a fresh inductor cache (a cold compile); it is a warm-up
                   step, and compile_seconds = its time minus the median timed step;
  --dtype float32  | bfloat16: nanochat's torch.autocast(device_type='cpu', dtype=bfloat16)
                   around the forward, with wte in bf16 (NANOCHAT.md 1.2).
--batch_file names the [B,T] batch our side times (int32 little-endian: inputs, targets,
segment ids, positions, each B*T values), so both sides run the same tokens; without it a random
batch with about a quarter of the targets -1 is drawn. Every step uses the same batch, as ours
does. Warm-up steps are excluded from the figures.

Prints ONE JSON line on stdout (pytorch_peer.cc parses it); diagnostics go to stderr. Exit
status: 0 ok, 2 bad flags (argparse), 3 torch cannot be imported, 4 torch runs on the reference
BLAS (a 40x slower peer would be a meaningless comparison), 5 the mode needs a newer torch
(torch.compile needs torch 2).

  python trainer/bench/pytorch_peer.py --mode compile --dtype bfloat16 --steps 3

Exit 6: --mode compile, but inductor found no usable vector ISA (the small program it builds to
test one failed to build or to load), so it would generate scalar C++ loops and torch.compile's
figure would be meaningless. Seen with a venv made from Debian's /usr/bin/python3 while Debian's
python3-torch is installed: inductor links with -L<that python's LIBDIR> first, which then holds
torch 1.13's libtorch_cpu.so, and the test library cannot resolve torch 2's Sleef symbols.
"""
import argparse
import ctypes
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time

EXIT_NO_TORCH = 3
EXIT_REFERENCE_BLAS = 4
EXIT_MODE_UNSUPPORTED = 5
EXIT_INDUCTOR_SCALAR = 6

# nanochat's SFT learning rates and init_lr_frac (NANOCHAT.md 4.1, 4.4).
LRS = {"embedding_lr": 0.2, "unembedding_lr": 0.004, "matrix_lr": 0.02}
INIT_LR_FRAC = 0.02
IGNORED_TARGET_FRACTION = 0.25  # about a quarter of the targets are -1, as in SFT batches


def parse_flags(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--n_embd", type=int, default=256)
    p.add_argument("--n_head", type=int, default=2)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--grad_accum", type=int, default=1,
                   help="micro-batches per optimizer step (forward+backward each, gradients summed)")
    p.add_argument("--mode", choices=["eager", "compile"], default="eager")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--batch_file", default="", help="the batch to time (see the module docstring)")
    args = p.parse_args(argv)
    for name in ("depth", "n_embd", "n_head", "vocab", "batch", "seq", "threads", "steps", "grad_accum"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.warmup < 0:
        p.error(f"--warmup must be >= 0, got {args.warmup}")
    if args.mode == "compile" and args.warmup < 1:
        p.error("--mode compile needs --warmup >= 1: the first step compiles and must not be timed")
    if args.n_embd % args.n_head != 0 or (args.n_embd // args.n_head) % 2 != 0:
        p.error(f"--n_embd {args.n_embd} must be --n_head {args.n_head} times an even head_dim")
    if args.batch_file and not os.path.isfile(args.batch_file):
        p.error(f"--batch_file {args.batch_file} does not exist")
    return args


def import_torch(threads):
    """Imports torch with OpenBLAS and OpenMP limited to `threads` (they read the environment
    when loaded, so this must precede the import); exits EXIT_NO_TORCH if it is missing."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.path.insert(0, os.path.join(here, "..", "..", "tests", "golden"))
    try:
        import torch  # noqa: F401
        import peer_model  # noqa: F401
        import reference_init  # noqa: F401
        import reference_optim  # noqa: F401
    except ImportError as e:
        sys.stderr.write(f"pytorch_peer.py: cannot import {e.name} with {sys.executable} ({e}); "
                         "the bench installs its pinned torch itself (--peer=torch), or install "
                         "Debian's: apt-get install -y python3-torch python3-numpy\n")
        sys.exit(EXIT_NO_TORCH)
    return torch


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def mapped_files(fragment):
    """Real paths of the files mapped into this process whose path contains `fragment`."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if line.split()[-1].startswith("/")}
    return sorted({os.path.realpath(p) for p in paths if fragment in os.path.basename(p).lower()})


def sgemm_provider():
    """The real path of the file that defines the sgemm_ torch calls: dlsym in libtorch_cpu's
    own lookup scope (itself, then its DT_NEEDED libraries in order: libblas.so.3 before
    libopenblas.so.0 in Debian's build), then dladdr. None if that cannot be determined."""
    torch_cpu = mapped_files("libtorch_cpu")
    if not torch_cpu:
        return None
    try:
        sgemm = ctypes.CDLL(torch_cpu[0]).sgemm_
    except (OSError, AttributeError):
        return None
    info = _DlInfo()
    if ctypes.CDLL(None).dladdr(ctypes.cast(sgemm, ctypes.c_void_p), ctypes.byref(info)) == 0:
        return None
    return os.path.realpath(info.dli_fname.decode())


def blas_info(torch):
    """BLAS_INFO of torch's build (torch.__config__.show()): "mkl" for PyPI's wheels (MKL linked
    into libtorch_cpu), "open" or similar for Debian's."""
    match = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return match.group(1) if match else "unknown"


def loaded_blas(torch):
    """(the library providing torch's sgemm, every BLAS/LAPACK file mapped) after a matmul, which
    makes torch load its BLAS. A build on MKL carries it inside libtorch_cpu. Otherwise exits
    EXIT_REFERENCE_BLAS unless sgemm_ is OpenBLAS's: Debian's libtorch_cpu takes sgemm_ from
    libblas.so.3, which is whatever update-alternatives selects, even when OpenBLAS is mapped too
    (its liblapack.so.3 pulls it in)."""
    a = torch.ones(64, 64)
    torch.matmul(a, a)
    mapped = sorted(p for p in set(mapped_files("blas") + mapped_files("lapack")) if "cublas" not in p)
    if blas_info(torch) == "mkl":
        return "MKL (linked into " + (mapped_files("libtorch_cpu") or ["libtorch_cpu"])[0] + ")", mapped
    sgemm = sgemm_provider()
    if sgemm is None or "openblas" not in sgemm.lower():
        sys.stderr.write(
            f"pytorch_peer.py: torch's sgemm_ comes from {sgemm or 'an unknown file'}, not OpenBLAS "
            f"(mapped BLAS/LAPACK files: {', '.join(mapped) or 'none'}); the reference BLAS is about "
            "40x slower and would make a meaningless peer. Install and select OpenBLAS:\n"
            "  apt-get install -y libopenblas0-pthread\n"
            "  update-alternatives --set libblas.so.3-x86_64-linux-gnu "
            "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3\n"
            "and do not point LD_LIBRARY_PATH at another libblas.so.3.\n")
        sys.exit(EXIT_REFERENCE_BLAS)
    return sgemm, mapped


def stdout_of(fn):
    """What fn() writes to file descriptor 1 (MKL's and oneDNN's verbose lines go there)."""
    sys.stdout.flush()
    fd, path = tempfile.mkstemp(prefix="pytorch_peer_verbose_")
    saved = os.dup(1)
    os.dup2(fd, 1)
    try:
        fn()
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)
    with open(path) as f:
        text = f.read()
    os.unlink(path)
    return text


def matmul_kernel(torch, dtype, rows, k, n, sgemm_library):
    """Which library and kernel torch's CPU matmul of [rows,k] x [k,n] ran in this dtype mode: MKL's
    or oneDNN's own verbose report of one such matmul (the ISA it dispatched), or what is known."""
    a, w = torch.randn(rows, k), torch.randn(n, k)

    def run():
        if dtype == "bfloat16":
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                torch.nn.functional.linear(a, w)
        else:
            torch.nn.functional.linear(a, w)

    def verbose_run():
        # MKL's verbose mode exists only in a build on MKL (PyPI's); Debian's torch is on OpenBLAS.
        mkl = getattr(torch.backends, "mkl", None) if blas_info(torch) == "mkl" else None
        dnn = getattr(torch.backends, "mkldnn", None)
        if mkl is not None and hasattr(mkl, "verbose") and dnn is not None and hasattr(dnn, "verbose"):
            with mkl.verbose(mkl.VERBOSE_ON), dnn.verbose(dnn.VERBOSE_ON):
                run()
        elif dnn is not None and hasattr(dnn, "verbose") and dnn.is_available():
            with dnn.verbose(dnn.VERBOSE_ON):
                run()
        else:
            run()

    try:
        text = stdout_of(verbose_run)
    except Exception as e:  # verbose modes are diagnostics; never fail the measurement on them
        return f"unknown ({e})"
    for line in text.splitlines():
        if line.startswith("onednn_verbose") and ",exec,cpu," in line:
            fields = line.split(",")
            impl = next((f for f in fields if ":" in f and ("brg" in f or "gemm" in f or "jit" in f)), "?")
            version = next((l.split(",info,")[1] for l in text.splitlines() if ",info,oneDNN" in l), "oneDNN")
            return f"{version.strip()} matmul {impl}"
        if line.startswith("MKL_VERBOSE") and "GEMM" in line.upper() and "(" in line:
            header = next((l for l in text.splitlines() if l.startswith("MKL_VERBOSE") and "GEMM(" not in l), "")
            isa = "AMX" if "AMX" in header else ("AVX-512" if "AVX-512" in header else "")
            return f"MKL {line.split()[1].split('(')[0]} ({isa or header[12:60]})"
    if dtype == "float32" and blas_info(torch) != "mkl":
        return f"sgemm_ from {sgemm_library}"
    return f"BLAS_INFO={blas_info(torch)} (no verbose report)"


def kernels(torch, args, sgemm_library):
    """What torch ran on: its CPU capability, BLAS and oneDNN, and the matmul kernel of this mode."""
    capability = "unknown"
    if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability"):
        capability = torch.backends.cpu.get_cpu_capability()
    cpu = getattr(torch, "cpu", None)
    flags = {name: bool(getattr(cpu, "_is_" + name + "_supported")()) for name in ("avx512_bf16", "amx_tile")
             if cpu is not None and hasattr(cpu, "_is_" + name + "_supported")}
    return {
        "cpu_capability": capability,
        "blas_info": blas_info(torch),
        "mkldnn_available": bool(torch.backends.mkldnn.is_available()),
        "cpu_flags": flags,
        "matmul": matmul_kernel(torch, args.dtype, args.batch * args.seq, args.n_embd, 4 * args.n_embd,
                                sgemm_library),
    }


def inductor_vec_isa():
    """The vector ISA inductor's C++ backend generates code for ("avx512", "avx2"); exits
    EXIT_INDUCTOR_SCALAR when it found none (see the module docstring)."""
    import sysconfig
    from torch._inductor import cpu_vec_isa
    isa = cpu_vec_isa.pick_vec_isa()
    if not isa:
        sys.stderr.write(
            "pytorch_peer.py: torch.compile's inductor found no usable vector ISA on this CPU, so it would "
            "generate scalar C++ and be a meaningless peer. Its test library failed to build or load; a "
            f"libtorch in {sysconfig.get_config_var('LIBDIR')} (this python's LIBDIR, which inductor links "
            "with first, e.g. Debian's python3-torch) is the known cause: make the venv from another python "
            "(the bench's --peer_base_python).\n")
        sys.exit(EXIT_INDUCTOR_SCALAR)
    return str(isa)


def flops_per_token(cfg, num_params):
    """nanochat's estimate (model/model_config.cc FlopsPerToken): 6 per non-embedding
    parameter plus the attention matmuls, 12 * n_layer * n_head * head_dim * seq_len."""
    head_dim = cfg["n_embd"] // cfg["n_head"]
    n_wte = cfg["vocab_size"] * cfg["n_embd"]
    return 6 * (num_params - n_wte) + 12 * cfg["n_layer"] * cfg["n_head"] * head_dim * cfg["sequence_len"]


def read_batch(torch, path, batch, seq):
    """inputs, targets, segment ids, positions [B,T] int64 from the --batch_file."""
    with open(path, "rb") as f:
        data = f.read()
    want = 4 * batch * seq * 4
    if len(data) != want:
        sys.stderr.write(f"pytorch_peer.py: --batch_file {path} holds {len(data)} bytes, want {want} "
                         f"(4 int32 arrays of [{batch},{seq}])\n")
        sys.exit(2)
    flat = torch.frombuffer(bytearray(data), dtype=torch.int32).to(torch.int64)
    return tuple(t.reshape(batch, seq).clone() for t in flat.chunk(4))


def random_batch(torch, gen, cfg, batch, seq):
    """inputs, targets (about IGNORED_TARGET_FRACTION of them -1), segment ids (all 0: one
    document per row, so the attention is exactly nanochat's causal one), positions 0..T-1."""
    vocab = cfg["vocab_size"]
    inputs = torch.randint(0, vocab, (batch, seq), generator=gen, dtype=torch.int64)
    targets = torch.randint(0, vocab, (batch, seq), generator=gen, dtype=torch.int64)
    ignored = torch.rand(batch, seq, generator=gen) < IGNORED_TARGET_FRACTION
    targets = targets.masked_fill(ignored, -1)
    segment_ids = torch.zeros(batch, seq, dtype=torch.int64)
    positions = torch.arange(seq, dtype=torch.int64).unsqueeze(0).expand(batch, seq).contiguous()
    return inputs, targets, segment_ids, positions


def fresh_inductor_cache():
    """A new, empty inductor cache for this process (a cold compile, like our cold compile);
    removed at exit. An explicit TORCHINDUCTOR_CACHE_DIR from the caller is kept."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        return None
    path = tempfile.mkdtemp(prefix="pytorch_peer_inductor_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
    return path


def main(argv):
    args = parse_flags(argv)
    inductor_cache = fresh_inductor_cache() if args.mode == "compile" else None
    try:
        return run(args)
    finally:
        if inductor_cache:
            shutil.rmtree(inductor_cache, ignore_errors=True)


def run(args):
    torch = import_torch(args.threads)
    import peer_model
    import reference_init
    import reference_optim

    if args.mode == "compile" and not hasattr(torch, "compile"):
        sys.stderr.write(f"pytorch_peer.py: --mode compile needs torch.compile (torch 2); {sys.executable} "
                         f"has torch {torch.__version__}\n")
        sys.exit(EXIT_MODE_UNSUPPORTED)
    torch.set_num_threads(args.threads)
    sgemm_library, blas = loaded_blas(torch)
    kernel_report = kernels(torch, args, sgemm_library)
    if args.mode == "compile":
        kernel_report["inductor_vec_isa"] = inductor_vec_isa()
    cfg = {"sequence_len": args.seq, "vocab_size": args.vocab, "n_layer": args.depth,
           "n_head": args.n_head, "n_kv_head": args.n_head, "n_embd": args.n_embd}
    bf16 = args.dtype == "bfloat16"
    params = reference_init.init_params(cfg, args.seed, zero_output_projections=False)
    if bf16:
        params["transformer.wte.weight"] = params["transformer.wte.weight"].to(torch.bfloat16)
    for p in params.values():
        p.requires_grad_(True)
    num_params = sum(p.numel() for p in params.values())
    total = args.warmup + args.steps
    # num_iterations one past the last step keeps every lr positive.
    optim = reference_optim.SftOptimizer(params, args.n_embd, LRS, INIT_LR_FRAC, total + 1)
    names = list(params.keys())
    if args.batch_file:
        inputs, targets, segment_ids, positions = read_batch(torch, args.batch_file, args.batch, args.seq)
    else:
        inputs, targets, segment_ids, positions = random_batch(
            torch, torch.Generator().manual_seed(args.seed + 1), cfg, args.batch, args.seq)
    single_segment = bool((segment_ids == segment_ids[:, :1]).all())
    cos, sin = peer_model.rotary_inputs(positions, args.n_embd // args.n_head,
                                        torch.bfloat16 if bf16 else torch.float32)
    loss_fn = torch.compile(peer_model.loss, dynamic=False) if args.mode == "compile" else peer_model.loss

    def step_loss():
        if bf16:
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                return loss_fn(params, cfg, inputs, targets, segment_ids, positions, cos, sin, single_segment)
        return loss_fn(params, cfg, inputs, targets, segment_ids, positions, cos, sin, single_segment)

    # Wall seconds per timed step, and the process's user and system CPU seconds and minor page
    # faults in it: on a shared machine wall time is noisy, while system time and faults show
    # the cost of fresh mmaps directly.
    seconds, user, system, faults, losses, warmup_seconds = [], [], [], [], [], []
    for it in range(total):
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        grads = None
        for _ in range(args.grad_accum):  # the trainer's micro-batches: forward+backward each
            loss = step_loss()
            micro = torch.autograd.grad(loss / args.grad_accum, [params[n] for n in names])
            grads = micro if grads is None else [g + m for g, m in zip(grads, micro)]
        optim.step(dict(zip(names, grads)), it)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        del grads
        losses.append(loss.item())
        sys.stderr.write(f"pytorch_peer.py: {args.mode} {args.dtype} step {it} "
                         f"{'warm-up' if it < args.warmup else 'timed'} {elapsed:.3f} s loss {losses[-1]:.4f}\n")
        if it >= args.warmup:
            seconds.append(elapsed)
            user.append(after.ru_utime - before.ru_utime)
            system.append(after.ru_stime - before.ru_stime)
            faults.append(after.ru_minflt - before.ru_minflt)
        else:
            warmup_seconds.append(elapsed)

    median = statistics.median(seconds)
    tokens = args.batch * args.seq
    fpt = flops_per_token(cfg, num_params)
    result = {
        "config": {"depth": args.depth, "n_embd": args.n_embd, "n_head": args.n_head,
                   "vocab": args.vocab, "batch": args.batch, "seq": args.seq, "dtype": args.dtype},
        "mode": args.mode,
        "dtype": args.dtype,
        "batch_source": args.batch_file or "random",
        "threads": args.threads,
        "grad_accum": args.grad_accum,
        "warmup": args.warmup,
        "steps": args.steps,
        "step_seconds_median": median,
        "step_seconds": seconds,
        "warmup_seconds": warmup_seconds,
        "compile_seconds": (warmup_seconds[0] - median) if args.mode == "compile" else None,
        "step_user_seconds": user,
        "step_system_seconds": system,
        "step_minor_faults": faults,
        "tokens_per_step": tokens,
        "tokens_per_second": tokens / median,
        "num_params": num_params,
        "flops_per_token": fpt,
        "gflops_per_second": fpt * tokens / median / 1e9,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "losses": losses,
        "torch_version": torch.__version__,
        "attention": "scaled_dot_product_attention" if peer_model.HAS_SDPA else "explicit softmax (no SDPA)",
        "kernels": kernel_report,
        "sgemm_library": sgemm_library,
        "blas": blas,
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", ""),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
    }
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
