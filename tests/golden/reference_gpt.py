"""Our own PyTorch implementation of nanochat's init-commit GPT forward and loss, written from
shared/reference/NANOCHAT.md sections 1-3 (never from nanochat's code).

One float dtype throughout (the dtype of the parameters; make_golden.py uses float64), with no
autocast rounding anywhere: this is the meaning of our float32 training mode, not of nanochat's
bf16 autocast. Facts followed (NANOCHAT.md section):
  * 1.3  parameter-free RMSNorm y = x * rsqrt(mean(x^2) + eps) with eps = 2^-23 (fp32's epsilon,
         which is what the real model uses), whatever the dtype;
  * 1.4  x = norm(wte[idx]); pre-norm blocks x += attn(norm(x)), x += mlp(norm(x)); final norm;
         logits = x @ lm_head^T; softcap 15 * tanh(logits / 15); cross entropy, ignore_index -1,
         mean over the counted targets;
  * 1.5  rotary (base 10000, half split, the -theta convention y1 = x1 c + x2 s,
         y2 = -x1 s + x2 c) on q and k BEFORE QK-norm, with nanochat's tables: angles and
         cos/sin in fp32, rounded to bf16 (rotary_tables), then widened to the model's dtype
         (the table is the model's, only the arithmetic around it is float64 here); kv heads
         repeated consecutively (repeat_interleave); softmax(q k^T / sqrt(D)) causal;
  * 1.6  relu(h)^2 MLP.
Our packing extension: attention is also limited to keys of the query's own segment
(segment_ids), and rotary uses per-token positions that restart at 0 in every segment. With
segment_ids all 0 and positions 0..T-1 this is exactly nanochat's causal attention.
"""
import torch

RMS_EPS = 2.0 ** -23
ROTARY_BASE = 10000.0
SOFTCAP = 15.0


def rms_norm(x):
    """Normalises over the last dim. x [..., N] -> [..., N]."""
    return x * torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + RMS_EPS)


def rotary_inverse_frequencies(head_dim, device=None):
    """nanochat's inv_freq [D/2] fp32: 1 / 10000^(arange(0, D, 2) / D), every step an fp32 op."""
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim
    return 1.0 / (ROTARY_BASE ** exponents)


def rotary_tables(positions, head_dim):
    """nanochat's rotary tables at integer `positions` [...] -> (cos, sin), each [..., D/2] bf16.

    NANOCHAT.md 1.5: angle = position * inv_freq in fp32 (the elementwise product equals
    torch.outer's), cos and sin of the angle in fp32, then rounded to bf16. On positions.device.
    """
    inv_freq = rotary_inverse_frequencies(head_dim, positions.device)
    angle = positions.to(torch.float32).unsqueeze(-1) * inv_freq      # [..., D/2] fp32
    return torch.cos(angle).to(torch.bfloat16), torch.sin(angle).to(torch.bfloat16)


def rotary(x, positions):
    """Rotates each head's halves by -theta. x [B,T,heads,D], positions [B,T] int -> [B,T,heads,D].

    cos and sin are rotary_tables' bf16 values in x's dtype; the products and sums in x's dtype.
    """
    half = x.shape[-1] // 2
    cos, sin = (t.to(x.dtype).unsqueeze(2) for t in rotary_tables(positions, 2 * half))  # [B,T,1,D/2]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x2 * cos - x1 * sin], dim=-1)


def attend(q, k, v, segment_ids):
    """Document-causal softmax attention.

    q [B,T,H,D], k and v [B,T,Hkv,D], segment_ids [B,T] -> [B,T,H,D]. Query t sees key s iff
    s <= t and segment_ids[b,s] == segment_ids[b,t]; scores are scaled by 1/sqrt(D).
    """
    T, n_head, head_dim = q.shape[1], q.shape[2], q.shape[3]
    group = n_head // k.shape[2]
    q = q.permute(0, 2, 1, 3)                                        # [B,H,T,D]
    k = k.permute(0, 2, 1, 3).repeat_interleave(group, dim=1)        # [B,H,T,D]
    v = v.permute(0, 2, 1, 3).repeat_interleave(group, dim=1)
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / head_dim ** 0.5)  # [B,H,T,T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    same_segment = segment_ids.unsqueeze(2) == segment_ids.unsqueeze(1)   # [B,T,T]
    visible = (causal.unsqueeze(0) & same_segment).unsqueeze(1)           # [B,1,T,T]
    scores = scores.masked_fill(~visible, float("-inf"))
    out = torch.matmul(torch.softmax(scores, dim=-1), v)             # [B,H,T,D]
    return out.permute(0, 2, 1, 3)


def block_weight(params, layer, name):
    return params[f"transformer.h.{layer}.{name}.weight"]


def logits(params, cfg, inputs, segment_ids, positions):
    """Softcapped logits. inputs/segment_ids/positions [B,T] int -> [B,T,V]."""
    n_embd, n_head, n_kv_head = cfg["n_embd"], cfg["n_head"], cfg["n_kv_head"]
    head_dim = n_embd // n_head
    batch, seq = inputs.shape
    x = rms_norm(params["transformer.wte.weight"][inputs.long()])   # [B,T,C]
    for layer in range(cfg["n_layer"]):
        w = lambda name: block_weight(params, layer, name)  # noqa: E731
        h = rms_norm(x)
        q = torch.matmul(h, w("attn.c_q").t()).reshape(batch, seq, n_head, head_dim)
        k = torch.matmul(h, w("attn.c_k").t()).reshape(batch, seq, n_kv_head, head_dim)
        v = torch.matmul(h, w("attn.c_v").t()).reshape(batch, seq, n_kv_head, head_dim)
        q = rms_norm(rotary(q, positions))
        k = rms_norm(rotary(k, positions))
        y = attend(q, k, v, segment_ids).reshape(batch, seq, n_embd)
        x = x + torch.matmul(y, w("attn.c_proj").t())
        hidden = torch.relu(torch.matmul(rms_norm(x), w("mlp.c_fc").t())).square()  # [B,T,4C]
        x = x + torch.matmul(hidden, w("mlp.c_proj").t())
    raw = torch.matmul(rms_norm(x), params["lm_head.weight"].t())   # [B,T,V]
    return SOFTCAP * torch.tanh(raw / SOFTCAP)


def loss(params, cfg, inputs, targets, segment_ids, positions):
    """Mean cross entropy over the targets != -1 of one [B,T] micro-batch (a 0-d tensor)."""
    z = logits(params, cfg, inputs, segment_ids, positions)
    return torch.nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1).long(),
                                             ignore_index=-1, reduction="mean")
