"""Our own implementation of nanochat's SFT optimizers, written from
shared/reference/NANOCHAT.md section 4 (never from nanochat's code), in one float dtype.

  * 4.1  groups: lm_head -> AdamW at unembedding_lr * s, wte -> AdamW at embedding_lr * s,
         s = (C/768)^-0.5; every block matrix -> Muon at matrix_lr (not scaled by s);
  * 4.2  AdamW: betas (0.8, 0.95), eps 1e-10, decoupled weight decay (0 in SFT),
         p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps);
  * 4.3  Muon: buf = mu buf + (1-mu) G; G' = (1-mu) G + mu buf (Nesterov), mu = 0.95;
         O = NS5(G'); p -= lr * sqrt(max(1, rows/cols)) * O;
         NS5: transpose a tall matrix, X /= (||X||_F + 1e-7), 5 times
         A = X X^T, B = b A + c A A, X = a X + B X with (a,b,c) = (3.4445, -4.7750, 2.0315);
  * 4.4  every initial lr times init_lr_frac (0.02); before step it (0-based)
         lr = initial_lr * (1 - it / num_iterations).
One deliberate difference: NS5 runs in the parameters' dtype (float64 in make_golden.py), not
in bf16 as nanochat does; it is the meaning of our float32 mode. AdamW moments likewise have
the parameters' dtype.
"""
import torch

ADAM_BETAS = (0.8, 0.95)
ADAM_EPS = 1e-10
MUON_MOMENTUM = 0.95
NS_COEFFS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5
NS_NORM_EPS = 1e-7


def newton_schulz5(g):
    """Approximate orthogonalisation of g [rows, cols] -> [rows, cols], in g's dtype."""
    a, b, c = NS_COEFFS
    tall = g.shape[0] > g.shape[1]
    x = g.t() if tall else g
    x = x / (torch.linalg.norm(x) + NS_NORM_EPS)
    for _ in range(NS_STEPS):
        gram = torch.matmul(x, x.t())
        poly = b * gram + c * torch.matmul(gram, gram)
        x = a * x + torch.matmul(poly, x)
    return x.t() if tall else x


def group_of(name):
    if name == "lm_head.weight":
        return "unembedding"
    if name == "transformer.wte.weight":
        return "embedding"
    return "matrix"


def initial_lrs(names, n_embd, lrs, init_lr_frac):
    """name -> initial_lr (4.1 and 4.4). lrs holds embedding_lr, unembedding_lr, matrix_lr."""
    s = (n_embd / 768.0) ** -0.5
    scale = {"embedding": s, "unembedding": s, "matrix": 1.0}
    return {n: lrs[group_of(n) + "_lr"] * scale[group_of(n)] * init_lr_frac for n in names}


class SftOptimizer:
    """AdamW for the embedding and lm_head, Muon for block matrices, nanochat's SFT schedule.

    params: name -> tensor, updated in place by step(). State is zero-initialised.
    """

    def __init__(self, params, n_embd, lrs, init_lr_frac, num_iterations, weight_decay=0.0):
        self.params = params
        self.initial_lr = initial_lrs(params.keys(), n_embd, lrs, init_lr_frac)
        self.num_iterations = num_iterations
        self.weight_decay = weight_decay
        self.exp_avg = {n: torch.zeros_like(p) for n, p in params.items()}      # AdamW m / Muon buf
        self.exp_avg_sq = {n: torch.zeros_like(p) for n, p in params.items()}   # AdamW v
        self.adam_steps = 0

    @torch.no_grad()
    def step(self, grads, it):
        """One optimizer step at 0-based iteration `it`; grads: name -> tensor like params."""
        lrm = 1.0 - it / self.num_iterations
        self.adam_steps += 1
        for name, p in self.params.items():
            lr = self.initial_lr[name] * lrm
            if group_of(name) == "matrix":
                self._muon(p, self.exp_avg[name], grads[name], lr)
            else:
                self._adamw(p, self.exp_avg[name], self.exp_avg_sq[name], grads[name], lr)

    def _adamw(self, p, m, v, g, lr):
        b1, b2 = ADAM_BETAS
        t = self.adam_steps
        p.mul_(1.0 - lr * self.weight_decay)
        m.mul_(b1).add_(g, alpha=1.0 - b1)
        v.mul_(b2).add_(g * g, alpha=1.0 - b2)
        denom = v.sqrt() / (1.0 - b2 ** t) ** 0.5 + ADAM_EPS
        p.sub_(m / denom, alpha=lr / (1.0 - b1 ** t))

    @staticmethod
    def _muon(p, buf, g, lr):
        mu = MUON_MOMENTUM
        buf.mul_(mu).add_(g, alpha=1.0 - mu)
        nesterov = (1.0 - mu) * g + mu * buf
        rows, cols = p.shape
        p.sub_(newton_schulz5(nesterov), alpha=lr * max(1.0, rows / cols) ** 0.5)
