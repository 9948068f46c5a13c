"""PyTorch eager peer of our full-step benchmark: nanochat's GPT in plain eager PyTorch.

Builds the model of tests/golden/reference_gpt.py (explicit attention: torch 1.13 has no SDPA,
so this is what an eager user of that torch runs) at the given config with random float32
weights, and times full training steps on random [B,T] token batches: forward, loss (targets
with some -1), backward and the SFT optimizer step of tests/golden/reference_optim.py (AdamW for
wte and lm_head, Muon for block matrices). Warm-up steps are excluded from the figures.

Prints ONE JSON line on stdout (the C++ side, pytorch_peer.cc, parses it); diagnostics go to
stderr. Exit status: 0 ok, 2 bad flags (argparse), 3 torch cannot be imported, 4 torch runs on
the reference BLAS (a 40x slower peer would be a meaningless comparison).

Run with /usr/bin/python3 (Debian's python3-torch), from anywhere.
"""
import argparse
import ctypes
import json
import os
import resource
import statistics
import sys
import time

EXIT_NO_TORCH = 3
EXIT_REFERENCE_BLAS = 4

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
    args = p.parse_args(argv)
    for name in ("depth", "n_embd", "n_head", "vocab", "batch", "seq", "threads", "steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.warmup < 0:
        p.error(f"--warmup must be >= 0, got {args.warmup}")
    if args.n_embd % args.n_head != 0 or (args.n_embd // args.n_head) % 2 != 0:
        p.error(f"--n_embd {args.n_embd} must be --n_head {args.n_head} times an even head_dim")
    return args


def import_torch(threads):
    """Imports torch with OpenBLAS and OpenMP limited to `threads` (they read the environment
    when loaded, so this must precede the import); exits EXIT_NO_TORCH if it is missing."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tests", "golden"))
    try:
        import torch  # noqa: F401
        import reference_gpt  # noqa: F401
        import reference_init  # noqa: F401
        import reference_optim  # noqa: F401
    except ImportError as e:
        sys.stderr.write(f"pytorch_peer.py: cannot import {e.name} with {sys.executable} ({e}); "
                         "install Debian's torch: apt-get install -y python3-torch python3-numpy\n")
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


def loaded_blas(torch):
    """(the file providing torch's sgemm_, every BLAS/LAPACK file mapped) after a matmul, which
    makes torch load its BLAS. Exits EXIT_REFERENCE_BLAS unless sgemm_ is OpenBLAS's: Debian's
    libtorch_cpu takes sgemm_ from libblas.so.3, which is whatever update-alternatives selects,
    even when OpenBLAS is mapped too (its liblapack.so.3 pulls it in)."""
    a = torch.ones(64, 64)
    torch.matmul(a, a)
    mapped = sorted(set(mapped_files("blas") + mapped_files("lapack")))
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


def flops_per_token(cfg, num_params):
    """nanochat's estimate (compiler/config/model_config.cc FlopsPerToken): 6 per non-embedding
    parameter plus the attention matmuls, 12 * n_layer * n_head * head_dim * seq_len."""
    head_dim = cfg["n_embd"] // cfg["n_head"]
    n_wte = cfg["vocab_size"] * cfg["n_embd"]
    return 6 * (num_params - n_wte) + 12 * cfg["n_layer"] * cfg["n_head"] * head_dim * cfg["sequence_len"]


def random_batch(torch, gen, cfg, batch, seq):
    """inputs, targets (about IGNORED_TARGET_FRACTION of them -1), segment ids (all 0: one
    document per row, so the attention is exactly nanochat's causal one), positions 0..T-1."""
    vocab = cfg["vocab_size"]
    inputs = torch.randint(0, vocab, (batch, seq), generator=gen, dtype=torch.int64)
    targets = torch.randint(0, vocab, (batch, seq), generator=gen, dtype=torch.int64)
    ignored = torch.rand(batch, seq, generator=gen) < IGNORED_TARGET_FRACTION
    targets = targets.masked_fill(ignored, -1)
    segment_ids = torch.zeros(batch, seq, dtype=torch.int64)
    positions = torch.arange(seq, dtype=torch.int64).unsqueeze(0).expand(batch, seq)
    return inputs, targets, segment_ids, positions


def main(argv):
    args = parse_flags(argv)
    torch = import_torch(args.threads)
    import reference_gpt
    import reference_init
    import reference_optim

    torch.set_num_threads(args.threads)
    sgemm_library, blas = loaded_blas(torch)
    cfg = {"sequence_len": args.seq, "vocab_size": args.vocab, "n_layer": args.depth,
           "n_head": args.n_head, "n_kv_head": args.n_head, "n_embd": args.n_embd}
    params = reference_init.init_params(cfg, args.seed, zero_output_projections=False)
    for p in params.values():
        p.requires_grad_(True)
    num_params = sum(p.numel() for p in params.values())
    total = args.warmup + args.steps
    # num_iterations one past the last step keeps every lr positive.
    optim = reference_optim.SftOptimizer(params, args.n_embd, LRS, INIT_LR_FRAC, total + 1)
    gen = torch.Generator().manual_seed(args.seed + 1)
    names = list(params.keys())

    # Wall seconds per timed step, and the process's user and system CPU seconds and minor page
    # faults in it: on a shared machine wall time is noisy, while system time and faults show
    # the cost of fresh mmaps directly.
    seconds, user, system, faults, losses = [], [], [], [], []
    for it in range(total):
        inputs, targets, segment_ids, positions = random_batch(torch, gen, cfg, args.batch, args.seq)
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        loss = reference_gpt.loss(params, cfg, inputs, targets, segment_ids, positions)
        grads = torch.autograd.grad(loss, [params[n] for n in names])
        optim.step(dict(zip(names, grads)), it)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        del grads
        losses.append(loss.item())
        sys.stderr.write(f"pytorch_peer.py: step {it} {'warm-up' if it < args.warmup else 'timed'} "
                         f"{elapsed:.3f} s loss {losses[-1]:.4f}\n")
        if it >= args.warmup:
            seconds.append(elapsed)
            user.append(after.ru_utime - before.ru_utime)
            system.append(after.ru_stime - before.ru_stime)
            faults.append(after.ru_minflt - before.ru_minflt)

    median = statistics.median(seconds)
    tokens = args.batch * args.seq
    fpt = flops_per_token(cfg, num_params)
    result = {
        "config": {"depth": args.depth, "n_embd": args.n_embd, "n_head": args.n_head,
                   "vocab": args.vocab, "batch": args.batch, "seq": args.seq, "dtype": "float32"},
        "threads": args.threads,
        "warmup": args.warmup,
        "steps": args.steps,
        "step_seconds_median": median,
        "step_seconds": seconds,
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
        "sgemm_library": sgemm_library,
        "blas": blas,
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", ""),
    }
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
