#!/usr/bin/python3
"""Writes the golden files tests/golden/{padded,packed,accum2}.gold from our PyTorch reference.

Run from the repository root with Debian's PyTorch (apt-get install -y python3-torch
python3-numpy), never needed by `./bazelw test //...`:
    /usr/bin/python3 tests/golden/make_golden.py
The math runs in float64 (the truth) from float32 initial weights; every float tensor is
stored as float32 (FORMAT.md). The run is deterministic: same torch, same bytes.
"""
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_gpt  # noqa: E402
import reference_init  # noqa: E402
import reference_optim  # noqa: E402

MAGIC = b"GPTGOLD\0"
FORMAT_VERSION = 2
GENERATOR_VERSION = 3  # bump whenever this script's output changes
REGENERATE = "/usr/bin/python3 tests/golden/make_golden.py"

# depth 2 through NANOCHAT.md 3: model_dim 128, ceil(128/128) = 1 head of 128, n_kv_head 1.
CONFIG = {"sequence_len": 64, "vocab_size": 512, "n_layer": 2, "n_head": 1, "n_kv_head": 1, "n_embd": 128}
BATCH, SEQ = 2, 64
INIT_SEED = 20251013
ZERO_OUTPUT_PROJECTIONS = False  # see tests/golden/README.md: with nanochat's zeros most step-0 gradients are 0
OPTIM = {"embedding_lr": 0.2, "unembedding_lr": 0.004, "matrix_lr": 0.02, "init_lr_frac": 0.02,
         "num_iterations": 10, "weight_decay": 0.0, "adam_betas": list(reference_optim.ADAM_BETAS),
         "adam_eps": reference_optim.ADAM_EPS, "muon_momentum": reference_optim.MUON_MOMENTUM,
         "muon_nesterov": True, "ns_coeffs": list(reference_optim.NS_COEFFS),
         "ns_steps": reference_optim.NS_STEPS, "ns_norm_eps": reference_optim.NS_NORM_EPS}
STEPS = 3

# The 9 special tokens follow the 503 mergeable ids of a 512 vocabulary (NANOCHAT.md 5.1).
_SPECIALS = ["bos", "user_start", "user_end", "assistant_start", "assistant_end", "python_start",
             "python_end", "output_start", "output_end"]
SPECIAL = {n: CONFIG["vocab_size"] - len(_SPECIALS) + i for i, n in enumerate(_SPECIALS)}
N_ORDINARY = CONFIG["vocab_size"] - len(_SPECIALS)
PAD_ID_PADDED = SPECIAL["assistant_end"]  # nanochat's init collate pads with <|assistant_end|>
PAD_ID_PACKED = SPECIAL["bos"]            # the best-fit packer pads with <|bos|>, as HEAD does


def render(gen, turns):
    """(ids, mask) by NANOCHAT.md 5.6 for random content. turns: [("user", n) |
    ("assistant", [(part_type, n), ...])], part_type in text / python / python_output."""
    tok = lambda n: torch.randint(0, N_ORDINARY, (n,), generator=gen).tolist()  # noqa: E731
    ids, mask = [SPECIAL["bos"]], [0]

    def emit(seq, m):
        ids.extend(seq)
        mask.extend([m] * len(seq))

    for role, body in turns:
        if role == "user":
            emit([SPECIAL["user_start"]] + tok(body) + [SPECIAL["user_end"]], 0)
            continue
        emit([SPECIAL["assistant_start"]], 0)
        for part, n in body:
            if part == "text":
                emit(tok(n), 1)
            elif part == "python":
                emit([SPECIAL["python_start"]] + tok(n) + [SPECIAL["python_end"]], 1)
            else:
                emit([SPECIAL["output_start"]] + tok(n) + [SPECIAL["output_end"]], 0)
        emit([SPECIAL["assistant_end"]], 1)
    return ids, mask


def empty_batch():
    return {"inputs": torch.zeros(BATCH, SEQ, dtype=torch.int32),
            "targets": torch.full((BATCH, SEQ), -1, dtype=torch.int32),
            "segment_ids": torch.zeros(BATCH, SEQ, dtype=torch.int32),
            "positions": torch.zeros(BATCH, SEQ, dtype=torch.int32)}


def padded_batch(gen):
    """nanochat's init collate (NANOCHAT.md 6.4), one conversation per row: ncols = max(len)-1
    (= 64 here), inputs filled with the pad id, targets with -1; row i of n ids gets
    inputs[:n-1] = ids[:-1], targets[:n-1] = ids[1:] with -1 where mask[j+1] == 0.
    One segment per row, positions 0..T-1 (nanochat's plain causal attention)."""
    rows = [
        # 65 ids: the longest row fixes ncols = 64; a tool call (python + output) inside.
        render(gen, [("user", 12), ("assistant", [("text", 9), ("python", 5), ("python_output", 3),
                                                  ("text", 6)]),
                     ("user", 8), ("assistant", [("text", 9)])]),
        render(gen, [("user", 10), ("assistant", [("text", 15)])]),  # 30 ids, right-padded
    ]
    assert [len(ids) for ids, _ in rows] == [SEQ + 1, 30]
    b = empty_batch()
    b["inputs"].fill_(PAD_ID_PADDED)
    b["positions"][:] = torch.arange(SEQ, dtype=torch.int32)
    for i, (ids, mask) in enumerate(rows):
        n = len(ids)
        b["inputs"][i, :n - 1] = torch.tensor(ids[:-1], dtype=torch.int32)
        b["targets"][i, :n - 1] = torch.tensor([t if m else -1 for t, m in zip(ids[1:], mask[1:])],
                                               dtype=torch.int32)
    return b


def packed_batch(gen):
    """Whole conversations laid end to end in T+1 slots per row, the project's packing rule
    (data/collate/row_writer.h): inputs = r[:-1]; targets = r[1:], -1 where the predicted
    token has mask 0 or lies in another segment; segment_ids count conversations from 0 and
    the trailing pad slots get one more; positions restart at 0 in every segment."""
    rows = [
        [render(gen, [("user", 6), ("assistant", [("text", 11)])]),                     # 22 ids
         render(gen, [("user", 9), ("assistant", [("text", 4), ("python", 3), ("python_output", 2),
                                                  ("text", 3)])]),                      # 30 ids
         render(gen, [("user", 4), ("assistant", [("text", 4)])])],                     # 13 ids
        [render(gen, [("user", 2), ("assistant", [("text", 2)])]),                      # 9 ids
         render(gen, [("user", 10), ("assistant", [("text", 8)]), ("user", 5),
                      ("assistant", [("text", 4)])]),                                   # 36 ids
         render(gen, [("user", 3), ("assistant", [("text", 4)])])],                     # 12 ids
    ]
    assert [[len(ids) for ids, _ in convs] for convs in rows] == [[22, 30, 13], [9, 36, 12]]
    b = empty_batch()
    for i, convs in enumerate(rows):
        slots, masks, segs, pos = [], [], [], []
        for s, (ids, mask) in enumerate(convs):
            slots += ids
            masks += mask
            segs += [s] * len(ids)
            pos += list(range(len(ids)))
        free = SEQ + 1 - len(slots)
        assert free >= 0
        slots += [PAD_ID_PACKED] * free
        masks += [0] * free
        segs += [len(convs)] * free
        pos += list(range(free))
        for t in range(SEQ):
            b["inputs"][i, t] = slots[t]
            keep = masks[t + 1] == 1 and segs[t + 1] == segs[t]
            b["targets"][i, t] = slots[t + 1] if keep else -1
            b["segment_ids"][i, t] = segs[t]
            b["positions"][i, t] = pos[t]
    return b


def stack(micro_batches):
    """[M] dicts of [B,T] -> one dict of [M,B,T]."""
    return {k: torch.stack([mb[k] for mb in micro_batches]) for k in micro_batches[0]}


def micro_loss(params, batch, m):
    return reference_gpt.loss(params, CONFIG, batch["inputs"][m], batch["targets"][m],
                              batch["segment_ids"][m], batch["positions"][m])


def train(init, batch):
    """STEPS optimizer steps on the same [M,B,T] batch, M micro-steps each: every micro loss
    (its own token mean) is divided by M before backward and the gradients add up
    (NANOCHAT.md 4.4). Returns the tensors and float64 losses of a case."""
    micro = batch["inputs"].shape[0]
    params = {n: p.to(torch.float64) for n, p in init.items()}
    opt = reference_optim.SftOptimizer(params, CONFIG["n_embd"], OPTIM, OPTIM["init_lr_frac"],
                                       OPTIM["num_iterations"], OPTIM["weight_decay"])
    out, losses, micro_losses = {}, [], []
    for it in range(STEPS):
        grads = {n: torch.zeros_like(p) for n, p in params.items()}
        total, row = 0.0, []
        for m in range(micro):
            leaves = {n: p.detach().requires_grad_(True) for n, p in params.items()}
            value = micro_loss(leaves, batch, m)
            (value / micro).backward()
            for n, p in leaves.items():
                grads[n] += p.grad
            row.append(value.item())
            total += value.item() / micro
        losses.append(total)
        micro_losses.append(row)
        if it == 0:
            out.update({"grad/" + n: g.clone() for n, g in grads.items()})
        opt.step(grads, it)
        if it in (0, STEPS - 1):
            out.update({f"step{it + 1}/" + n: p.clone() for n, p in params.items()})
    out["loss"] = torch.tensor([losses[0]], dtype=torch.float64)
    out["losses"] = torch.tensor(losses, dtype=torch.float64)
    out["micro_losses"] = torch.tensor(micro_losses, dtype=torch.float64)
    return out, losses


def write_gold(path, header, tensors):
    """FORMAT.md: magic, u32 version, u32 header length, JSON header, raw little-endian data."""
    entries, blobs, offset = [], [], 0
    for name, t in tensors.items():
        if t.dtype in (torch.int32, torch.int64):
            arr, dtype = t.to(torch.int32).contiguous().numpy().astype("<i4"), "i32"
        else:
            arr, dtype = t.detach().to(torch.float32).contiguous().numpy().astype("<f4"), "f32"
        data = arr.tobytes()
        entries.append({"name": name, "dtype": dtype, "shape": list(arr.shape), "offset": offset,
                        "nbytes": len(data)})
        blobs.append(data)
        offset += len(data)
    text = json.dumps(dict(header, tensors=entries), sort_keys=True).encode("utf-8")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<II", FORMAT_VERSION, len(text)) + text + b"".join(blobs))
    os.replace(tmp, path)
    return os.path.getsize(path)


def make_case(case, micro_batches, init, description):
    batch = stack(micro_batches)
    counts = [int((mb["targets"] != -1).sum()) for mb in micro_batches]
    tensors = dict(batch)
    tensors["counted_targets"] = torch.tensor(counts, dtype=torch.int32)
    tensors.update({"init/" + n: p for n, p in init.items()})
    with torch.no_grad():  # micro-batch 0's softcapped logits at the initial weights
        tensors["logits"] = reference_gpt.logits({n: p.to(torch.float64) for n, p in init.items()}, CONFIG,
                                                 batch["inputs"][0], batch["segment_ids"][0], batch["positions"][0])
    trained, losses = train(init, batch)
    tensors.update(trained)
    header = {
        "case": case, "description": description, "config": CONFIG, "batch_size": BATCH,
        "seq_len": SEQ, "grad_accum_steps": len(micro_batches), "steps": STEPS, "optimizer": OPTIM,
        "initial_lr": {g: v for g, v in zip(
            ("embedding", "unembedding", "matrix"),
            (reference_optim.initial_lrs([n], CONFIG["n_embd"], OPTIM, OPTIM["init_lr_frac"])[n]
             for n in ("transformer.wte.weight", "lm_head.weight", "transformer.h.0.attn.c_q.weight")))},
        "init_seed": INIT_SEED, "zero_output_projections": ZERO_OUTPUT_PROJECTIONS,
        "special_tokens": SPECIAL, "pad_id": PAD_ID_PACKED if case == "packed" else PAD_ID_PADDED,
        "rms_norm_eps": reference_gpt.RMS_EPS, "rotary_base": reference_gpt.ROTARY_BASE,
        "softcap": reference_gpt.SOFTCAP, "math_dtype": "float64", "storage_dtype": "float32",
        "losses_float64": losses, "generator": "tests/golden/make_golden.py",
        "generator_version": GENERATOR_VERSION, "regenerate": REGENERATE,
        "torch_version": torch.__version__,
    }
    size = write_gold(os.path.join(HERE, case + ".gold"), header, tensors)
    print(f"{case}: M={len(micro_batches)} counted targets {counts} losses {losses} ({size} bytes)")


def main():
    torch.use_deterministic_algorithms(True)
    init = reference_init.init_params(CONFIG, INIT_SEED, ZERO_OUTPUT_PROJECTIONS)
    padded = padded_batch(torch.Generator().manual_seed(1))
    packed = packed_batch(torch.Generator().manual_seed(2))
    make_case("padded", [padded], init, "nanochat's init collate: 2 rows of different lengths, right-padded")
    make_case("packed", [packed], init, "whole conversations packed per row; segment-causal attention, "
              "positions restart per segment")
    make_case("accum2", [padded, packed], init, "2 micro-steps per optimizer step: the padded then the "
              "packed batch, each loss its own token mean divided by 2")


if __name__ == "__main__":
    main()
