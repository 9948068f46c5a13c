"""Our own PyTorch statement of nanochat's forward under torch.autocast(bfloat16), written from
shared/reference/NANOCHAT.md sections 1.2-1.6 (never from nanochat's code), with explicit casts
so it means the same on any device and torch version:
  * 1.2  wte is bf16, so the embedding rows and the residual stream are bf16; Linear weights are
         fp32 and cast to bf16 where a matmul reads them; a matmul takes bf16 inputs, accumulates
         in fp32 and returns bf16; element-wise ops run in bf16 (each rounds its result);
  * 1.3  rms_norm upcasts to fp32, computes there and rounds once to bf16 (eps 2^-23);
  * 1.4  softcap in bf16: the division, the tanh and the multiply each round; the logits are
         upcast to fp32 for the cross entropy;
  * 1.5  rotary with cos/sin computed in fp32 and stored as bf16, every product and sum a bf16
         op; QK-norm after rotary; attention takes bf16 q, k, v, computes scores and softmax in
         fp32, rounds the probabilities exp(s - rowmax) to bf16 before the weighted sum (as
         flash attention does, on the GPU and in PyTorch's CPU kernel; the row sums stay fp32),
         accumulates in fp32 and returns bf16;
  * 1.6  relu then square, each in bf16.
Autograd then gives what PyTorch gives nanochat: the gradient of every bf16 tensor is bf16, and a
Linear weight's fp32 gradient is its bf16 gradient upcast (the backward of the autocast cast).

Where this may differ from nanochat on a GPU: the matmuls and attention accumulate in fp32 here
in plain loops (cuBLAS and flash use other orders), and flash attention rounds its
probabilities relative to a running max over key blocks (the same as the row max when, as
here, T fits one block). Its backward is autograd's (the rounding of P passed straight
through; flash also rounds dS). Packing extension as in reference_gpt.py (segment-causal
attention, per-segment positions).
"""
import torch

import reference_gpt

BF16 = torch.bfloat16


def linear(x, w):
    """x [..., K] bf16, w [N, K] fp32 -> [..., N] bf16: bf16 operands, fp32 accumulation."""
    return torch.matmul(x.float(), w.to(BF16).float().t()).to(BF16)


def rms_norm(x):
    """x bf16 -> bf16, computed in fp32 and rounded once."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.square().mean(dim=-1, keepdim=True) + reference_gpt.RMS_EPS)).to(BF16)


def rotary(x, positions):
    """x [B,T,heads,D] bf16, positions [B,T] -> bf16; nanochat's bf16 cos/sin tables
    (reference_gpt.rotary_tables), every product and sum a bf16 op."""
    half = x.shape[-1] // 2
    cos, sin = (t.unsqueeze(2) for t in reference_gpt.rotary_tables(positions, 2 * half))  # [B,T,1,D/2] bf16
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x1 * (-sin) + x2 * cos], dim=-1)


def softcap(raw):
    """cap * tanh(raw / cap) on bf16 raw logits -> bf16: three bf16 ops, each rounding."""
    cap = torch.tensor(reference_gpt.SOFTCAP, dtype=BF16)
    return cap * torch.tanh(raw / cap)


def attend(q, k, v, segment_ids):
    """bf16 q, k, v -> bf16: reference_gpt.attend's masked scores in fp32, then
    (sum_s bf16(e_s) v_s) / sum_s e_s with e_s = exp(score_s - rowmax) in fp32."""
    T, n_head, head_dim = q.shape[1], q.shape[2], q.shape[3]
    group = n_head // k.shape[2]
    qh = q.float().permute(0, 2, 1, 3)                                         # [B,H,T,D]
    kh = k.float().permute(0, 2, 1, 3).repeat_interleave(group, dim=1)
    vh = v.float().permute(0, 2, 1, 3).repeat_interleave(group, dim=1)
    scores = torch.matmul(qh, kh.transpose(2, 3)) * (1.0 / head_dim ** 0.5)  # [B,H,T,T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    same_segment = segment_ids.unsqueeze(2) == segment_ids.unsqueeze(1)
    visible = (causal.unsqueeze(0) & same_segment).unsqueeze(1)
    scores = scores.masked_fill(~visible, float("-inf"))
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True).detach())
    # bf16(e) in the forward (exactly: e + (bf16(e) - e) adds two fp32 values whose sum is
    # representable), e's own gradient in the backward.
    p = e + (e.to(BF16).float() - e).detach()
    out = torch.matmul(p, vh) / e.sum(dim=-1, keepdim=True)
    return out.permute(0, 2, 1, 3).to(BF16)


def logits(params, cfg, inputs, segment_ids, positions):
    """Softcapped bf16 logits [B,T,V] from fp32 master weights."""
    n_embd, n_head, n_kv_head = cfg["n_embd"], cfg["n_head"], cfg["n_kv_head"]
    head_dim = n_embd // n_head
    batch, seq = inputs.shape
    x = rms_norm(params["transformer.wte.weight"].to(BF16)[inputs.long()])
    for layer in range(cfg["n_layer"]):
        w = lambda name: reference_gpt.block_weight(params, layer, name)  # noqa: E731
        h = rms_norm(x)
        q = linear(h, w("attn.c_q")).reshape(batch, seq, n_head, head_dim)
        k = linear(h, w("attn.c_k")).reshape(batch, seq, n_kv_head, head_dim)
        v = linear(h, w("attn.c_v")).reshape(batch, seq, n_kv_head, head_dim)
        q = rms_norm(rotary(q, positions))
        k = rms_norm(rotary(k, positions))
        y = attend(q, k, v, segment_ids).reshape(batch, seq, n_embd)
        x = x + linear(y, w("attn.c_proj"))
        hidden = torch.relu(linear(rms_norm(x), w("mlp.c_fc"))).square()
        x = x + linear(hidden, w("mlp.c_proj"))
    raw = linear(rms_norm(x), params["lm_head.weight"])
    return softcap(raw)


def loss(params, cfg, inputs, targets, segment_ids, positions):
    """Mean cross entropy (fp32, ignore_index -1) of the upcast bf16 logits."""
    z = logits(params, cfg, inputs, segment_ids, positions).float()
    return torch.nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1).long(),
                                             ignore_index=-1, reduction="mean")
