"""nanochat's init-commit GPT as a user of current PyTorch runs it: the PyTorch peer's model.

Written from shared/reference/NANOCHAT.md sections 1.2-1.6 (never from nanochat's code). The math
is tests/golden/reference_gpt.py's; what differs is how it is expressed, because a torch 2 user
(and nanochat) writes it with torch's fused ops, and those are what torch.compile and torch's
CPU kernels are tuned for:
  * 1.3  RMSNorm is F.rms_norm (eps 2^-23) where torch has it (2.4+), else the explicit formula;
  * 1.5  attention is F.scaled_dot_product_attention, causal, scale 1/sqrt(D) (torch 2.0+), with
         a [B,1,T,T] mask only when a row holds several segments (our packing extension); torch
         1.13 has no SDPA, so there the explicit softmax attention of reference_gpt.attend runs;
  * 1.2  under bf16 autocast (nanochat's torch.autocast(bfloat16), here device_type='cpu') wte is
         bf16, so the residual stream is bf16; Linear weights stay fp32 and autocast casts them
         where a matmul reads them; the softcap runs on bf16 logits before the fp32 cross entropy.
Parameters are the name -> tensor dict of reference_init.init_params, so the optimizer is
reference_optim.SftOptimizer (nanochat's AdamW + Muon, SFT learning rates).
"""
import torch
import torch.nn.functional as F

import reference_gpt

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
HAS_RMS_NORM = hasattr(F, "rms_norm")


def rms_norm(x):
    if HAS_RMS_NORM:
        return F.rms_norm(x, (x.size(-1),), eps=reference_gpt.RMS_EPS)
    return reference_gpt.rms_norm(x)


def rotary(x, cos, sin):
    """x [B,T,heads,D], cos/sin [B,T,1,D/2] in x's dtype -> x rotated by -theta (half split)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x2 * cos - x1 * sin], dim=-1)


def attend(q, k, v, segment_ids, single_segment):
    """q [B,T,H,D], k/v [B,T,Hkv,D] -> [B,T,H,D], causal within each row's segments."""
    if not HAS_SDPA:
        return reference_gpt.attend(q, k, v, segment_ids)
    group = q.shape[2] // k.shape[2]
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B,heads,T,D]
    if group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    if single_segment:
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        T = q.shape[2]
        causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
        visible = (causal & (segment_ids.unsqueeze(2) == segment_ids.unsqueeze(1))).unsqueeze(1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
    return y.transpose(1, 2)


def loss(params, cfg, inputs, targets, segment_ids, positions, cos, sin, single_segment):
    """Mean cross entropy over targets != -1. cos/sin: rotary_tables(positions) [B,T,1,D/2], in
    the activation dtype (bf16 under autocast: nanochat's tables are bf16)."""
    n_embd, n_head, n_kv_head = cfg["n_embd"], cfg["n_head"], cfg["n_kv_head"]
    head_dim = n_embd // n_head
    batch, seq = inputs.shape
    x = rms_norm(F.embedding(inputs, params["transformer.wte.weight"]))
    for layer in range(cfg["n_layer"]):
        w = lambda name: reference_gpt.block_weight(params, layer, name)  # noqa: E731
        h = rms_norm(x)
        q = F.linear(h, w("attn.c_q")).view(batch, seq, n_head, head_dim)
        k = F.linear(h, w("attn.c_k")).view(batch, seq, n_kv_head, head_dim)
        v = F.linear(h, w("attn.c_v")).view(batch, seq, n_kv_head, head_dim)
        q = rms_norm(rotary(q, cos.to(q.dtype), sin.to(q.dtype)))
        k = rms_norm(rotary(k, cos.to(k.dtype), sin.to(k.dtype)))
        y = attend(q, k, v, segment_ids, single_segment).reshape(batch, seq, n_embd)
        x = x + F.linear(y, w("attn.c_proj"))
        x = x + F.linear(torch.relu(F.linear(rms_norm(x), w("mlp.c_fc"))).square(), w("mlp.c_proj"))
    raw = F.linear(rms_norm(x), params["lm_head.weight"])
    logits = reference_gpt.SOFTCAP * torch.tanh(raw / reference_gpt.SOFTCAP)
    return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-1)


def rotary_inputs(positions, head_dim, dtype):
    """nanochat's bf16 cos/sin tables at `positions` [B,T], as [B,T,1,D/2] in `dtype`."""
    cos, sin = reference_gpt.rotary_tables(positions, head_dim)
    return cos.to(dtype).unsqueeze(2), sin.to(dtype).unsqueeze(2)
