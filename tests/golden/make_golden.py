#!/usr/bin/python3
"""Writes the golden files tests/golden/*.gold from our PyTorch reference.

Run from the repository root with Debian's PyTorch (apt-get install python3-torch):
    /usr/bin/python3 tests/golden/make_golden.py
The math runs in float64 (the truth); tensors are stored as float32 (format: FORMAT.md).
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_gpt  # noqa: E402
import reference_init  # noqa: E402
import reference_optim  # noqa: E402

GENERATOR_VERSION = 1
FORMAT_VERSION = 1
MAGIC = b"GPTGOLD\0"
CONFIG = {"sequence_len": 64, "vocab_size": 512, "n_layer": 2, "n_head": 1, "n_kv_head": 1, "n_embd": 128}
INIT_SEED = 1234
NUM_ITERATIONS = 10
STEPS = 3


def padded_batch(gen):
    B, T, V = 2, CONFIG["sequence_len"], CONFIG["vocab_size"]
    pad = V - 5  # <|assistant_end|> of a 512 vocabulary
    inputs = torch.randint(0, V - 9, (B, T), generator=gen, dtype=torch.int32)
    targets = torch.randint(0, V - 9, (B, T), generator=gen, dtype=torch.int32)
    masked = torch.rand(B, T, generator=gen) < 0.3
    targets[masked] = -1
    inputs[1, 40:] = pad
    targets[1, 39:] = -1
    segment_ids = torch.zeros(B, T, dtype=torch.int32)
    positions = torch.arange(T, dtype=torch.int32).repeat(B, 1)
    return inputs, targets, segment_ids, positions


def packed_batch(gen):
    B, T, V = 2, CONFIG["sequence_len"], CONFIG["vocab_size"]
    inputs = torch.randint(0, V - 9, (B, T), generator=gen, dtype=torch.int32)
    targets = torch.randint(0, V - 9, (B, T), generator=gen, dtype=torch.int32)
    lengths = [[20, 30, 14], [7, 41, 9, 7]]  # the last segment of row 1 is padding
    segment_ids = torch.zeros(B, T, dtype=torch.int32)
    positions = torch.zeros(B, T, dtype=torch.int32)
    for b, row in enumerate(lengths):
        start = 0
        for s, n in enumerate(row):
            segment_ids[b, start:start + n] = s
            positions[b, start:start + n] = torch.arange(n, dtype=torch.int32)
            targets[b, start + n - 1] = -1  # a target never crosses a segment boundary
            start += n
    targets[1, 57:] = -1
    inputs[1, 57:] = V - 5
    return inputs, targets, segment_ids, positions


def run_case(name, batch):
    inputs, targets, segment_ids, positions = batch
    init = reference_init.init_params(CONFIG, INIT_SEED, zero_output_projections=False)
    params = {n: torch.tensor(p, dtype=torch.float64) for n, p in init.items()}
    opt = reference_optim.SftOptimizer(params, CONFIG, num_iterations=NUM_ITERATIONS)
    tensors = {"inputs": inputs, "targets": targets, "segment_ids": segment_ids, "positions": positions}
    losses = []
    for it in range(STEPS):
        for p in params.values():
            p.requires_grad_(True)
            p.grad = None
        loss = reference_gpt.forward_loss(params, CONFIG, inputs, targets, segment_ids, positions)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in params.items()}
        for p in params.values():
            p.requires_grad_(False)
        losses.append(loss.item())
        if it == 0:
            tensors["loss"] = torch.tensor([loss.item()])
            tensors.update({"grad/" + n: g for n, g in grads.items()})
        opt.step(grads, it)
        if it == 0:
            tensors.update({"step1/" + n: p.clone() for n, p in params.items()})
    tensors.update({"step3/" + n: p.clone() for n, p in params.items()})
    tensors["losses"] = torch.tensor(losses)
    # The first values of each initial tensor: the C++ ParamStore must draw exactly these.
    samples = {n: [float(x) for x in p.reshape(-1)[:4]] for n, p in init.items()}
    write_gold(os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".gold"), name, tensors, samples)
    print(f"{name}: losses {losses}")


def write_gold(path, case, tensors, init_samples):
    entries, blobs, offset = [], [], 0
    for name, t in tensors.items():
        if t.dtype in (torch.int32, torch.int64):
            arr, dtype = t.numpy().astype("<i4"), "i32"
        else:
            arr, dtype = t.detach().numpy().astype("<f4"), "f32"
        data = arr.tobytes()
        entries.append({"name": name, "dtype": dtype, "shape": list(arr.shape), "offset": offset, "nbytes": len(data)})
        blobs.append(data)
        offset += len(data)
    header = json.dumps({"case": case, "config": CONFIG, "init_seed": INIT_SEED, "zero_output_projections": False,
                         "num_iterations": NUM_ITERATIONS, "steps": STEPS, "generator_version": GENERATOR_VERSION,
                         "torch_version": torch.__version__, "dtype_of_math": "float64", "init_samples": init_samples,
                         "tensors": entries}).encode()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<II", FORMAT_VERSION, len(header)) + header + b"".join(blobs))
    os.replace(tmp, path)


def main():
    torch.manual_seed(0)
    run_case("padded", padded_batch(torch.Generator().manual_seed(1)))
    run_case("packed", packed_batch(torch.Generator().manual_seed(2)))


if __name__ == "__main__":
    main()
