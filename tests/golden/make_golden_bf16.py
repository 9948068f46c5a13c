#!/usr/bin/python3
"""Writes tests/golden/bf16.gold: nanochat's bf16 autocast forward (reference_gpt_bf16.py) on the
padded case's batch and initial weights: the softcapped bf16 logits, the loss and every gradient
at those weights.

Run from the repository root with Debian's PyTorch (apt-get install -y python3-torch
python3-numpy), never needed by `./bazelw test //...`:
    /usr/bin/python3 tests/golden/make_golden_bf16.py
The initial weights are not stored again: they are padded.gold's `init/*` (the same
torch.Generator draw, make_golden.py's INIT_SEED), which the C++ test loads from there. Format:
FORMAT.md (version 2); the math is fp32 with bf16 rounding where autocast rounds, and every float
tensor is stored as float32 (bf16 gradients are exact in float32).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_golden as mg  # noqa: E402
import reference_gpt  # noqa: E402
import reference_gpt_bf16  # noqa: E402
import reference_init  # noqa: E402

GENERATOR_VERSION = 3  # bump whenever this script's output changes (3: P rounded to bf16 before P·V)
REGENERATE = "/usr/bin/python3 tests/golden/make_golden_bf16.py"


def loss_and_grads(loss_fn, init, batch):
    """The loss of micro-batch 0 at `init` (fp32 master weights) and d loss / d param."""
    leaves = {n: p.detach().clone().requires_grad_(True) for n, p in init.items()}
    value = loss_fn(leaves, mg.CONFIG, batch["inputs"][0], batch["targets"][0], batch["segment_ids"][0],
                    batch["positions"][0])
    value.backward()
    return value.item(), {n: p.grad for n, p in leaves.items()}


def main():
    torch.use_deterministic_algorithms(True)
    init = reference_init.init_params(mg.CONFIG, mg.INIT_SEED, mg.ZERO_OUTPUT_PROJECTIONS)
    batch = mg.stack([mg.padded_batch(torch.Generator().manual_seed(1))])
    bf16_loss, grads = loss_and_grads(reference_gpt_bf16.loss, init, batch)
    # The same weights in fp32 math, for the header: how far bf16 moves the loss here.
    f32_loss, _ = loss_and_grads(reference_gpt.loss, init, batch)
    tensors = dict(batch)
    tensors["counted_targets"] = torch.tensor([int((batch["targets"] != -1).sum())], dtype=torch.int32)
    rows = (init, mg.CONFIG, batch["inputs"][0], batch["segment_ids"][0], batch["positions"][0])
    with torch.no_grad():
        tensors["logits"] = reference_gpt_bf16.logits(*rows).float()
    tensors["loss"] = torch.tensor([bf16_loss], dtype=torch.float32)
    tensors.update({"grad/" + n: g for n, g in grads.items()})
    header = {
        "case": "bf16",
        "description": "nanochat's bf16 autocast forward on the padded case (batch and init/* of padded.gold): "
                       "the softcapped bf16 logits, the loss and every gradient at the initial weights",
        "config": mg.CONFIG, "batch_size": mg.BATCH, "seq_len": mg.SEQ, "grad_accum_steps": 1,
        "init_from": "padded.gold", "init_seed": mg.INIT_SEED,
        "zero_output_projections": mg.ZERO_OUTPUT_PROJECTIONS, "pad_id": mg.PAD_ID_PADDED,
        "rms_norm_eps": reference_gpt.RMS_EPS, "rotary_base": reference_gpt.ROTARY_BASE,
        "softcap": reference_gpt.SOFTCAP, "math_dtype": "float32 with bf16 autocast rounding",
        "storage_dtype": "float32", "loss_bf16": bf16_loss, "loss_float32_math": f32_loss,
        "generator": "tests/golden/make_golden_bf16.py", "generator_version": GENERATOR_VERSION,
        "regenerate": REGENERATE, "torch_version": torch.__version__,
    }
    size = mg.write_gold(os.path.join(HERE, "bf16.gold"), header, tensors)
    print(f"bf16: loss {bf16_loss} (fp32 math: {f32_loss}), {size} bytes")


if __name__ == "__main__":
    main()
