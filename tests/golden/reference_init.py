"""nanochat's init_weights (shared/reference/NANOCHAT.md 2.1, 2.2) drawn with a torch.Generator.

The golden files store the drawn weights, so the C++ side loads them and never has to
reproduce torch's generator.
"""
import math

import torch


def param_specs(cfg):
    """[(name, (out, in))] in nanochat's state_dict order (2.2): wte, per layer c_q, c_k, c_v,
    c_proj, c_fc, mlp c_proj, then lm_head."""
    n_embd, vocab = cfg["n_embd"], cfg["vocab_size"]
    kv_dim = cfg["n_kv_head"] * (n_embd // cfg["n_head"])
    specs = [("transformer.wte.weight", (vocab, n_embd))]
    for i in range(cfg["n_layer"]):
        h = f"transformer.h.{i}."
        specs += [
            (h + "attn.c_q.weight", (n_embd, n_embd)),
            (h + "attn.c_k.weight", (kv_dim, n_embd)),
            (h + "attn.c_v.weight", (kv_dim, n_embd)),
            (h + "attn.c_proj.weight", (n_embd, n_embd)),
            (h + "mlp.c_fc.weight", (4 * n_embd, n_embd)),
            (h + "mlp.c_proj.weight", (n_embd, 4 * n_embd)),
        ]
    specs.append(("lm_head.weight", (vocab, n_embd)))
    return specs


def is_output_projection(name):
    return name == "lm_head.weight" or name.endswith("c_proj.weight")


def init_params(cfg, seed, zero_output_projections):
    """name -> float32 tensor, in state_dict order, drawn in module-walk order from one
    torch.Generator seeded with `seed`: wte ~ N(0, 1); a Linear (fan_out, fan_in) ~
    N(0, std), std = (1/sqrt(fan_in)) * min(1, sqrt(fan_out/fan_in)). With
    zero_output_projections (nanochat's real init) lm_head and every c_proj are then zeroed;
    their draws are still made, so the other tensors do not depend on the flag."""
    gen = torch.Generator().manual_seed(seed)
    params = {}
    for name, (fan_out, fan_in) in param_specs(cfg):
        if name == "transformer.wte.weight":
            std = 1.0
        else:
            std = (1.0 / math.sqrt(fan_in)) * min(1.0, math.sqrt(fan_out / fan_in))
        w = torch.randn(fan_out, fan_in, generator=gen, dtype=torch.float32) * std
        if zero_output_projections and is_output_projection(name):
            w.zero_()
        params[name] = w
    return params
