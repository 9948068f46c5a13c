"""nanochat's SFT optimizers from shared/reference/NANOCHAT.md section 4, in one float dtype:
AdamW (betas 0.8/0.95, eps 1e-10) for lm_head and wte with lrs scaled by (C/768)^-0.5, Muon
(momentum 0.95, Nesterov, 5 Newton-Schulz steps with (3.4445, -4.7750, 2.0315), shape scale
sqrt(max(1, rows/cols))) for block matrices; every lr times init_lr_frac, times 1 - it/N.
Newton-Schulz runs in the reference dtype, not nanochat's bf16 (our float32 mode's meaning).
"""
import torch

NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz5(g):
    a, b, c = NS_COEFFS
    x = g
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    x = x / (x.norm() + 1e-7)
    for _ in range(5):
        A = x @ x.T
        B = b * A + c * (A @ A)
        x = a * x + B @ x
    return x.T if tall else x


class SftOptimizer:
    def __init__(self, params, cfg, embedding_lr=0.2, unembedding_lr=0.004, matrix_lr=0.02,
                 init_lr_frac=0.02, num_iterations=10, weight_decay=0.0):
        s = (cfg["n_embd"] / 768) ** -0.5
        self.params, self.N, self.wd = params, num_iterations, weight_decay
        self.lr = {}
        for name in params:
            if name == "lm_head.weight":
                self.lr[name] = unembedding_lr * s * init_lr_frac
            elif name == "transformer.wte.weight":
                self.lr[name] = embedding_lr * s * init_lr_frac
            else:
                self.lr[name] = matrix_lr * init_lr_frac
        self.m = {n: torch.zeros_like(p) for n, p in params.items()}
        self.v = {n: torch.zeros_like(p) for n, p in params.items()}
        self.t = 0

    @torch.no_grad()
    def step(self, grads, it):
        lrm = 1.0 - it / self.N
        self.t += 1
        b1, b2, eps, mu = 0.8, 0.95, 1e-10, 0.95
        for name, p in self.params.items():
            g, lr = grads[name], self.lr[name] * lrm
            if name in ("lm_head.weight", "transformer.wte.weight"):
                p.mul_(1 - lr * self.wd)
                self.m[name].mul_(b1).add_((1 - b1) * g)
                self.v[name].mul_(b2).add_((1 - b2) * g * g)
                denom = self.v[name].sqrt() / (1 - b2 ** self.t) ** 0.5 + eps
                p.sub_((lr / (1 - b1 ** self.t)) * self.m[name] / denom)
            else:
                buf = self.m[name]
                buf.copy_(mu * buf + (1 - mu) * g)
                nesterov = (1 - mu) * g + mu * buf
                rows, cols = p.shape
                p.sub_(lr * max(1.0, rows / cols) ** 0.5 * newton_schulz5(nesterov))
