#!/usr/bin/python3
"""Sanity check of the reference itself: central finite differences of the loss against
autograd for a few entries of every parameter, in float64, on the packed case.
    /usr/bin/python3 tests/golden/check_reference.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden  # noqa: E402
import reference_gpt  # noqa: E402
import reference_init  # noqa: E402


def main():
    cfg = make_golden.CONFIG
    batch = make_golden.packed_batch(torch.Generator().manual_seed(2))
    params = {n: torch.tensor(p, dtype=torch.float64, requires_grad=True)
              for n, p in reference_init.init_params(cfg, 7, zero_output_projections=False).items()}
    loss = reference_gpt.forward_loss(params, cfg, *batch)
    loss.backward()
    gen, worst, h = torch.Generator().manual_seed(3), 0.0, 1e-5
    for name, p in params.items():
        for _ in range(3):
            idx = tuple(int(torch.randint(0, s, (1,), generator=gen)) for s in p.shape)
            with torch.no_grad():
                orig = p[idx].item()
                p[idx] = orig + h
                up = reference_gpt.forward_loss(params, cfg, *batch).item()
                p[idx] = orig - h
                down = reference_gpt.forward_loss(params, cfg, *batch).item()
                p[idx] = orig
            fd, ad = (up - down) / (2 * h), p.grad[idx].item()
            err = abs(fd - ad) / max(1e-8, abs(fd) + abs(ad))
            worst = max(worst, err)
    print(f"worst relative error between finite differences and autograd: {worst:.3e}")
    sys.exit(0 if worst < 1e-5 else 1)


if __name__ == "__main__":
    main()
