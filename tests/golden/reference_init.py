"""The ParamStore's initialisation (runtime/params/param_store.cc) in Python.

SplitMix64 + Box-Muller, one stream per tensor seeded with seed * 0x100000001b3 + k, std per
nanochat's rule. Golden files therefore need not store initial weights: both sides draw them.
"""
import math

import numpy as np

MASK = (1 << 64) - 1


def _splitmix64(state):
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def _normal(n, std, seed):
    gen = _splitmix64(seed & MASK)
    out = np.empty(n, dtype=np.float32)
    for i in range(0, n, 2):
        u1 = ((next(gen) >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = ((next(gen) >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        r, theta = math.sqrt(-2.0 * math.log(u1)), 2.0 * math.pi * u2
        out[i] = std * r * math.cos(theta)
        if i + 1 < n:
            out[i + 1] = std * r * math.sin(theta)
    return out


def param_specs(cfg):
    """(name, shape, group) in nanochat's state_dict order."""
    C, V, kv = cfg["n_embd"], cfg["vocab_size"], cfg["n_kv_head"] * (cfg["n_embd"] // cfg["n_head"])
    specs = [("transformer.wte.weight", (V, C), "embedding")]
    for i in range(cfg["n_layer"]):
        h = f"transformer.h.{i}."
        specs += [(h + "attn.c_q.weight", (C, C), "matrix"), (h + "attn.c_k.weight", (kv, C), "matrix"),
                  (h + "attn.c_v.weight", (kv, C), "matrix"), (h + "attn.c_proj.weight", (C, C), "matrix"),
                  (h + "mlp.c_fc.weight", (4 * C, C), "matrix"), (h + "mlp.c_proj.weight", (C, 4 * C), "matrix")]
    specs.append(("lm_head.weight", (V, C), "unembedding"))
    return specs


def init_params(cfg, seed, zero_output_projections=True):
    params = {}
    for k, (name, shape, group) in enumerate(param_specs(cfg)):
        n = shape[0] * shape[1]
        if zero_output_projections and (name == "lm_head.weight" or name.endswith("c_proj.weight")):
            params[name] = np.zeros(shape, dtype=np.float32)
            continue
        std = 1.0
        if group != "embedding":
            fan_out, fan_in = shape
            std = (1.0 / math.sqrt(fan_in)) * min(1.0, math.sqrt(fan_out / fan_in))
        params[name] = _normal(n, std, seed * 0x100000001B3 + k).reshape(shape)
    return params
