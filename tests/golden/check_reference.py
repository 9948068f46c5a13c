#!/usr/bin/python3
"""Sanity checks of the PyTorch reference itself, in float64. Run from the repository root:
    /usr/bin/python3 tests/golden/check_reference.py
Exits non-zero when a check fails. Checks:
  1. central finite differences of the loss vs autograd, a few entries of every parameter,
     on the padded and the packed batch;
  2. packing isolation: each packed segment's logits equal those of its conversation run
     alone from position 0 (segment mask + restarting positions);
  3. rotary: the -theta convention on a unit vector with the bf16 tables, the tables equal to
     nanochat's outer-product buffer, and scores depending (nearly) only on the relative
     position;
  4. our AdamW against torch.optim.AdamW over 3 steps with the SFT schedule;
  5. NS5 keeps the singular vectors (U^T O V is diagonal) and maps singular values near 1;
  6. nanochat's real init (zeroed lm_head and c_proj): logits 0, loss ln(V), and every
     step-0 gradient but lm_head's exactly 0;
  7. the committed .gold files: init tensors equal a fresh draw, and accum2's gradient and
     loss are the means of padded's and packed's.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_golden as mg  # noqa: E402
import reference_gpt as gpt  # noqa: E402
import reference_init  # noqa: E402
import reference_optim as optim  # noqa: E402

CFG = mg.CONFIG
FAILURES = []


def report(name, value, limit):
    ok = value <= limit
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {value:.3e} (limit {limit:.0e})")
    if not ok:
        FAILURES.append(name)


def f64_params(zero=False):
    init = reference_init.init_params(CFG, mg.INIT_SEED, zero)
    return {n: p.to(torch.float64) for n, p in init.items()}


def batch_loss(params, b):
    return gpt.loss(params, CFG, b["inputs"], b["targets"], b["segment_ids"], b["positions"])


def check_finite_differences(case, b, h=1e-5, per_param=3):
    params = {n: p.requires_grad_(True) for n, p in f64_params().items()}
    batch_loss(params, b).backward()
    gen, worst, worst_at = torch.Generator().manual_seed(3), 0.0, ""
    for name, p in params.items():
        for _ in range(per_param):
            idx = tuple(int(torch.randint(0, s, (1,), generator=gen)) for s in p.shape)
            if name == "transformer.wte.weight":  # an embedding row that is actually used
                idx = (int(b["inputs"].reshape(-1)[idx[0] % b["inputs"].numel()]), idx[1])
            with torch.no_grad():
                orig = p[idx].item()
                p[idx] = orig + h
                up = batch_loss(params, b).item()
                p[idx] = orig - h
                down = batch_loss(params, b).item()
                p[idx] = orig
            fd, ad = (up - down) / (2 * h), p.grad[idx].item()
            # The floor: the O(eps * loss / h) rounding error of the difference quotient itself.
            err = abs(fd - ad) / max(1e-8, abs(fd) + abs(ad))
            if err > worst:
                worst, worst_at = err, f"{name}{list(idx)}: fd {fd:.9e} autograd {ad:.9e}"
    print(f"     worst entry: {worst_at}")
    report(f"finite differences vs autograd, {case}, {per_param} entries x {len(params)} params "
           "(worst relative error)", worst, 1e-5)


def check_packing_isolation(b):
    params = f64_params()
    with torch.no_grad():
        packed = gpt.logits(params, CFG, b["inputs"], b["segment_ids"], b["positions"])
        worst = 0.0
        for row in range(b["inputs"].shape[0]):
            seg = b["segment_ids"][row]
            for s in seg.unique().tolist():
                cols = (seg == s).nonzero().reshape(-1)
                ids = b["inputs"][row, cols].reshape(1, -1)
                alone = gpt.logits(params, CFG, ids, torch.zeros_like(ids),
                                   torch.arange(ids.shape[1]).reshape(1, -1))
                worst = max(worst, (alone[0] - packed[row, cols]).abs().max().item())
    report("packed segment logits vs the conversation alone (max abs diff)", worst, 1e-12)


def check_rotary():
    D, t = 8, 5
    x = torch.zeros(1, 1, 1, D, dtype=torch.float64)
    x[..., 0] = 1.0
    y = gpt.rotary(x, torch.tensor([[t]]))[0, 0, 0]
    # Pair 0 has inv_freq 1, so the angle is 5 exactly; the table holds cos 5 and sin 5 rounded
    # to fp32, then to bf16.
    bf16 = lambda v: torch.tensor(v, dtype=torch.float32).to(torch.bfloat16).double().item()  # noqa: E731
    want = torch.zeros(D, dtype=torch.float64)
    want[0], want[D // 2] = bf16(math.cos(t)), -bf16(math.sin(t))  # y1 = x1 c + x2 s, y2 = -x1 s + x2 c
    report("rotary of e0 at position 5 vs (bf16 cos 5, -bf16 sin 5) (max abs diff)", (y - want).abs().max().item(), 0)
    exact = torch.zeros(D, dtype=torch.float64)
    exact[0], exact[D // 2] = math.cos(t), -math.sin(t)
    report("rotary of e0 at position 5 vs the exact rotation (max abs diff: the bf16 tables)",
           (y - exact).abs().max().item(), 2.0 ** -9)
    # nanochat's construction of the whole buffer, torch.outer(arange(T), inv_freq), against our
    # per-position tables at positions 0..T-1.
    T, D = 20480, 128
    inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
    cos, sin = gpt.rotary_tables(torch.arange(T), D)
    worst = max((freqs.cos().bfloat16().float() - cos.float()).abs().max().item(),
                (freqs.sin().bfloat16().float() - sin.float()).abs().max().item())
    report(f"rotary_tables vs nanochat's outer-product buffer, T {T}, D {D} (max abs diff)", worst, 0)
    gen = torch.Generator().manual_seed(4)
    q, k = torch.randn(2, 1, 1, 1, 128, generator=gen, dtype=torch.float64)
    dot = lambda pq, pk: (gpt.rotary(q, torch.tensor([[pq]])) * gpt.rotary(k, torch.tensor([[pk]]))).sum().item()  # noqa: E731
    report("rotary scores depend only on the relative position, up to the bf16 tables (|s(9,4) - s(35,30)|)",
           abs(dot(9, 4) - dot(35, 30)), 0.1)


def check_adamw_against_torch():
    gen = torch.Generator().manual_seed(5)
    p0 = torch.randn(16, 8, generator=gen, dtype=torch.float64)
    grads = [torch.randn(16, 8, generator=gen, dtype=torch.float64) for _ in range(3)]
    ours = {"lm_head.weight": p0.clone()}
    opt = optim.SftOptimizer(ours, 128, mg.OPTIM, mg.OPTIM["init_lr_frac"], mg.OPTIM["num_iterations"])
    theirs = p0.clone().requires_grad_(True)
    lr0 = opt.initial_lr["lm_head.weight"]
    ref = torch.optim.AdamW([theirs], lr=lr0, betas=optim.ADAM_BETAS, eps=optim.ADAM_EPS, weight_decay=0.0)
    for it, g in enumerate(grads):
        opt.step({"lm_head.weight": g}, it)
        ref.param_groups[0]["lr"] = lr0 * (1 - it / mg.OPTIM["num_iterations"])
        theirs.grad = g.clone()
        ref.step()
    rel = ((ours["lm_head.weight"] - theirs.detach()).norm() / (theirs.detach() - p0).norm()).item()
    report("our AdamW vs torch.optim.AdamW, 3 scheduled steps (relative error of the update)", rel, 1e-12)


def check_newton_schulz():
    gen = torch.Generator().manual_seed(6)
    for shape in ((64, 16), (16, 64)):
        g = torch.randn(*shape, generator=gen, dtype=torch.float64)
        o = optim.newton_schulz5(g)
        u, s, vh = torch.linalg.svd(g, full_matrices=False)
        core = u.t() @ o @ vh.t()  # diag(f(s)) if NS5 is a polynomial in G G^T applied to G
        off = (core - torch.diag(torch.diagonal(core))).abs().max().item()
        sv = torch.diagonal(core)
        report(f"NS5 {shape}: off-diagonal of U^T O V (max abs)", off, 1e-12)
        report(f"NS5 {shape}: singular values of O in [{sv.min():.3f}, {sv.max():.3f}] (max |sv - 1|)",
               (sv - 1).abs().max().item(), 0.35)


def check_zero_init(b):
    params = {n: p.requires_grad_(True) for n, p in f64_params(zero=True).items()}
    value = batch_loss(params, b)
    value.backward()
    report("nanochat init: |loss - ln V|", abs(value.item() - math.log(CFG["vocab_size"])), 1e-12)
    nonzero = max(p.grad.abs().max().item() for n, p in params.items() if n != "lm_head.weight")
    report("nanochat init: largest step-0 gradient outside lm_head", nonzero, 0.0)


def read_gold(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == mg.MAGIC
    version, hlen = struct.unpack("<II", data[8:16])
    assert version == mg.FORMAT_VERSION
    header = json.loads(data[16:16 + hlen])
    start, out = 16 + hlen, {}
    for t in header["tensors"]:
        dtype = "<f4" if t["dtype"] == "f32" else "<i4"
        raw = data[start + t["offset"]:start + t["offset"] + t["nbytes"]]
        out[t["name"]] = np.frombuffer(raw, dtype=dtype).reshape(t["shape"])
    return header, out


def check_gold_files():
    g = {c: read_gold(os.path.join(HERE, c + ".gold")) for c in ("padded", "packed", "accum2")}
    init = reference_init.init_params(CFG, mg.INIT_SEED, mg.ZERO_OUTPUT_PROJECTIONS)
    diff = max(np.abs(g[c][1]["init/" + n] - p.numpy()).max() for c in g for n, p in init.items())
    report("gold files: init tensors vs a fresh torch.Generator draw (max abs diff)", float(diff), 0.0)
    worst = 0.0
    for n in init:
        mean = (g["padded"][1]["grad/" + n].astype(np.float64) + g["packed"][1]["grad/" + n]) / 2
        acc = g["accum2"][1]["grad/" + n]
        worst = max(worst, float(np.linalg.norm(acc - mean) / max(np.linalg.norm(mean), 1e-30)))
    report("gold files: accum2 gradient vs mean of padded and packed (relative)", worst, 1e-6)
    losses = [g[c][0]["losses_float64"][0] for c in ("padded", "packed", "accum2")]
    report("gold files: accum2 step-0 loss vs mean of padded and packed", abs(losses[2] - (losses[0] + losses[1]) / 2), 1e-12)


def main():
    torch.set_printoptions(precision=10)
    padded = mg.padded_batch(torch.Generator().manual_seed(1))
    packed = mg.packed_batch(torch.Generator().manual_seed(2))
    check_finite_differences("padded", padded)
    check_finite_differences("packed", packed)
    check_packing_isolation(packed)
    check_rotary()
    check_adamw_against_torch()
    check_newton_schulz()
    check_zero_init(padded)
    check_gold_files()
    print("all checks passed" if not FAILURES else f"{len(FAILURES)} check(s) FAILED")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
