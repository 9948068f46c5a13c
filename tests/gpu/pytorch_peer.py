"""The PyTorch peer of tests/gpu/run.sh: times nanochat's training step (forward under bf16
autocast, backward, AdamW + Muon) on the GPU, eager or torch.compile(dynamic=False), on the
same synthetic [B, T] batches run_step makes (trainer/step_loop.cc SyntheticBatch: SplitMix64,
every fifth target ignored; the rows are padded, not packed, so segment ids play no part).

The model is nanochat's own (peer/nanochat/gpt.py at the reference commit, when make_bundle was
given --nanochat_dir) or else our PyTorch implementation of the same math
(tests/golden/reference_gpt.py), with attention through scaled_dot_product_attention.
Prints one JSON object on stdout.
"""
import argparse
import json
import os
import sys
import time

try:  # the batch generator below is checked without torch (tests/gpu:bundle_test)
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
MASK64 = (1 << 64) - 1


class SplitMix64:
    """base/split_mix64.h, bit for bit."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def synthetic_rows(seed, rows, seq, vocab):
    """inputs, targets as [rows][seq] lists, as SyntheticBatch draws them (input, then target unless ignored)."""
    rng = SplitMix64(seed)
    inputs, targets = [], []
    for _ in range(rows):
        ins, tgs = [], []
        for t in range(seq):
            ins.append(rng.next() % vocab)
            tgs.append(-1 if t % 5 == 4 else rng.next() % vocab)
        inputs.append(ins)
        targets.append(tgs)
    return inputs, targets


def synthetic_batch(seed, rows, seq, vocab):
    """synthetic_rows as int64 tensors [rows, seq]."""
    inputs, targets = synthetic_rows(seed, rows, seq, vocab)
    return torch.tensor(inputs), torch.tensor(targets)


def nanochat_model(cfg, device):
    """nanochat's GPT and its optimizers; None when the bundle carries no nanochat."""
    if not os.path.exists(os.path.join(HERE, "nanochat", "gpt.py")):
        return None
    sys.path.insert(0, HERE)
    from nanochat.gpt import GPT, GPTConfig  # noqa: E402  (carried by make_bundle)
    config = GPTConfig(sequence_len=cfg["sequence_len"], vocab_size=cfg["vocab_size"], n_layer=cfg["n_layer"],
                       n_head=cfg["n_head"], n_kv_head=cfg["n_kv_head"], n_embd=cfg["n_embd"])
    with torch.device("meta"):
        model = GPT(config)
    model.to_empty(device=device)
    model.init_weights()
    optimizers = model.setup_optimizers()

    def step_fn(model_fn, x, y):
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = model_fn(x, y)
        loss.backward()
        for opt in optimizers:
            opt.step()
        model.zero_grad(set_to_none=True)
        return loss

    return "nanochat/gpt.py at 3a5e0bc", model, step_fn


def reference_model(cfg, steps, device):
    """Our reference_gpt.py's math over a parameter dict, SDPA attention, reference_optim's optimizers."""
    sys.path.insert(0, HERE)
    import reference_gpt  # noqa: E402
    import reference_optim  # noqa: E402

    def sdpa_causal(q, k, v, segment_ids):  # padded rows: plain causal attention, [B,T,H,D] in and out
        n_rep = q.shape[2] // k.shape[2]
        k, v = (t.repeat_interleave(n_rep, dim=2) for t in (k, v))
        out = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return out.transpose(1, 2)

    reference_gpt.attend = sdpa_causal
    gen = torch.Generator(device=device).manual_seed(1)
    params = {}
    kv_dim = cfg["n_kv_head"] * (cfg["n_embd"] // cfg["n_head"])
    shapes = {"transformer.wte.weight": (cfg["vocab_size"], cfg["n_embd"]), "lm_head.weight": (cfg["vocab_size"], cfg["n_embd"])}
    for i in range(cfg["n_layer"]):
        h = f"transformer.h.{i}."
        shapes.update({h + "attn.c_q.weight": (cfg["n_embd"], cfg["n_embd"]), h + "attn.c_k.weight": (kv_dim, cfg["n_embd"]),
                       h + "attn.c_v.weight": (kv_dim, cfg["n_embd"]), h + "attn.c_proj.weight": (cfg["n_embd"], cfg["n_embd"]),
                       h + "mlp.c_fc.weight": (4 * cfg["n_embd"], cfg["n_embd"]), h + "mlp.c_proj.weight": (cfg["n_embd"], 4 * cfg["n_embd"])})
    for name, shape in shapes.items():
        params[name] = (torch.randn(shape, device=device, generator=gen) * shape[1] ** -0.5).requires_grad_()
    lrs = {"unembedding_lr": 0.004, "embedding_lr": 0.2, "matrix_lr": 0.02}
    optimizer = reference_optim.SftOptimizer(params, cfg["n_embd"], lrs, 0.02, steps)
    zeros = None

    def model_fn(x, y):
        nonlocal zeros
        if zeros is None:
            zeros = torch.zeros_like(x)
        positions = torch.arange(x.shape[1], device=x.device).expand_as(x)
        return reference_gpt.loss(params, cfg, x, y, zeros, positions)

    def step_fn(fn, x, y):
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = fn(x, y)
        grads = torch.autograd.grad(loss, list(params.values()))
        optimizer.step(dict(zip(params.keys(), grads)), step_fn.it)
        step_fn.it += 1
        return loss

    step_fn.it = 0
    return "tests/golden/reference_gpt.py (SDPA attention)", model_fn, step_fn


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["eager", "compile"], required=True)
    p.add_argument("--device", default="cuda", help="cuda (the timing run) or cpu (to try the script anywhere)")
    p.add_argument("--model", choices=["auto", "nanochat", "reference"], default="auto",
                   help="auto: nanochat's when the bundle carries it, else ours")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup_steps", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--synthetic_batches", type=int, default=4)
    p.add_argument("--depth", type=int, default=20)
    p.add_argument("--n_embd", type=int, default=1280)
    p.add_argument("--n_head", type=int, default=10)
    p.add_argument("--vocab", type=int, default=65536)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--print_batch", action="store_true", help="print synthetic batch 0 as JSON and exit (no torch needed)")
    args = p.parse_args()
    if args.print_batch:
        inputs, targets = synthetic_rows(args.seed, args.batch, args.seq, args.vocab)
        print(json.dumps({"inputs": inputs, "targets": targets}))
        return

    if torch is None:
        sys.exit("pytorch_peer: PyTorch is not installed for " + sys.executable)
    torch.set_float32_matmul_precision("high")  # nanochat's compute_init
    cfg = {"sequence_len": args.seq, "vocab_size": args.vocab, "n_layer": args.depth, "n_head": args.n_head,
           "n_kv_head": args.n_head, "n_embd": args.n_embd}
    built = nanochat_model(cfg, args.device) if args.model != "reference" else None
    if built is None and args.model == "nanochat":
        sys.exit("pytorch_peer: --model=nanochat, but the bundle carries no peer/nanochat/gpt.py (make_bundle --nanochat_dir)")
    built = built or reference_model(cfg, args.steps, args.device)
    name, model, step_fn = built
    fn = torch.compile(model, dynamic=False) if args.mode == "compile" else model
    batches = [tuple(t.to(args.device) for t in synthetic_batch(args.seed + i, args.batch, args.seq, args.vocab))
               for i in range(args.synthetic_batches)]

    cuda = args.device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    losses, seconds = [], []
    first_start = time.perf_counter()
    for it in range(args.steps):
        x, y = batches[it % len(batches)]
        start = time.perf_counter()
        loss = step_fn(fn, x, y)
        sync()
        seconds.append(time.perf_counter() - start)
        losses.append(float(loss))
    timed = sorted(seconds[args.warmup_steps:]) or [float("nan")]
    median = timed[len(timed) // 2]
    tokens = args.batch * args.seq
    print(json.dumps({
        "peer": f"pytorch {torch.__version__} {args.mode}", "model": name,
        "losses": losses, "step_seconds": seconds, "median_step_seconds": median,
        "tokens_per_second": tokens / median, "first_step_seconds": seconds[0],
        "total_seconds": time.perf_counter() - first_start,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated() if cuda else None,
        "peak_reserved_bytes": torch.cuda.max_memory_reserved() if cuda else None,
    }))


if __name__ == "__main__":
    main()
