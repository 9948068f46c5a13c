"""Our own PyTorch implementation of nanochat's init-commit GPT, from the facts in
shared/reference/NANOCHAT.md sections 1-3, in one float dtype (no autocast rounding):
pre-norm blocks, parameter-free RMSNorm (eps 2^-23), rotary (base 10000, half split, the
-theta convention) before QK-norm, causal attention with optional segment ids (a query
sees earlier-or-equal keys of its own segment), relu^2 MLP, softcap 15, cross entropy
ignoring -1 and averaging over counted targets.
"""
import torch

EPS = 2.0 ** -23


def rms_norm(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)


def rotary(x, positions, base=10000.0):
    """x [B,T,H,D], positions [B,T] -> [B,T,H,D]."""
    D = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, D, 2, dtype=x.dtype) / D))
    angle = positions.to(x.dtype)[..., None] * inv_freq  # [B,T,D/2]
    cos, sin = angle.cos()[:, :, None, :], angle.sin()[:, :, None, :]
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return torch.cat([x1 * cos + x2 * sin, -x1 * sin + x2 * cos], dim=-1)


def attention(q, k, v, segment_ids):
    """q [B,T,H,D], k/v [B,T,Hkv,D], segment_ids [B,T] -> [B,T,H,D]."""
    B, T, H, D = q.shape
    rep = H // k.shape[2]
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B,heads,T,D]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scores = (q @ k.transpose(-1, -2)) / (D ** 0.5)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    same = segment_ids[:, :, None] == segment_ids[:, None, :]  # [B,T,T]
    allowed = causal[None] & same
    scores = scores.masked_fill(~allowed[:, None], float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2)


def forward_loss(params, cfg, inputs, targets, segment_ids, positions):
    C, H, Hkv = cfg["n_embd"], cfg["n_head"], cfg["n_kv_head"]
    D = C // H
    B, T = inputs.shape
    x = rms_norm(params["transformer.wte.weight"][inputs.long()])
    for i in range(cfg["n_layer"]):
        p = lambda n: params[f"transformer.h.{i}.{n}.weight"]
        h = rms_norm(x)
        q = (h @ p("attn.c_q").T).view(B, T, H, D)
        k = (h @ p("attn.c_k").T).view(B, T, Hkv, D)
        v = (h @ p("attn.c_v").T).view(B, T, Hkv, D)
        q, k = rms_norm(rotary(q, positions)), rms_norm(rotary(k, positions))
        y = attention(q, k, v, segment_ids).reshape(B, T, C)
        x = x + y @ p("attn.c_proj").T
        m = (rms_norm(x) @ p("mlp.c_fc").T).relu().square()
        x = x + m @ p("mlp.c_proj").T
    logits = rms_norm(x) @ params["lm_head.weight"].T
    logits = 15.0 * torch.tanh(logits / 15.0)
    return torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1).long(),
                                             ignore_index=-1)
