#!/usr/bin/python3
"""Writes tests/golden/rotary_table.gold: nanochat's rotary tables (NANOCHAT.md 1.5) for one head
dim, by reference_gpt.rotary_tables (inv_freq, angles and cos/sin in fp32, rounded to bf16), at a
few positions: the first 16 and 16 more up to 20479 (the last row of nanochat d20's table of
10 x 2048 positions). For rotary_table_vs_golden_test, which compares the C++ tables
(model/rotary_table.h) bit for bit.

Run from the repository root with Debian's PyTorch (apt-get install -y python3-torch
python3-numpy), never needed by `./bazelw test //...`:
    /usr/bin/python3 tests/golden/make_golden_rotary.py
Format: FORMAT.md (version 2); the bf16 values are stored as float32 (exact).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_golden as mg  # noqa: E402
import reference_gpt  # noqa: E402

GENERATOR_VERSION = 1  # bump whenever this script's output changes
REGENERATE = "/usr/bin/python3 tests/golden/make_golden_rotary.py"
HEAD_DIM = 128  # nanochat d20's head dim, and the golden model's
POSITIONS = list(range(16)) + [63, 64, 127, 1000, 2047, 2048, 4095, 5000, 8191, 10000, 12345, 16383, 16384,
                               19999, 20000, 20479]


def main():
    positions = torch.tensor(POSITIONS, dtype=torch.int32)
    cos, sin = reference_gpt.rotary_tables(positions, HEAD_DIM)  # [P, D/2] bf16
    inv_freq = reference_gpt.rotary_inverse_frequencies(HEAD_DIM)  # what the angles are made from
    tensors = {"positions": positions, "inv_freq": inv_freq, "cos": cos.float(), "sin": sin.float()}
    header = {
        "case": "rotary_table",
        "description": "nanochat's rotary cos/sin tables (fp32 angles, bf16 values) at the listed positions",
        "config": {"head_dim": HEAD_DIM, "rotary_base": reference_gpt.ROTARY_BASE},
        "math_dtype": "float32, cos/sin rounded to bfloat16", "storage_dtype": "float32",
        "generator": "tests/golden/make_golden_rotary.py", "generator_version": GENERATOR_VERSION,
        "regenerate": REGENERATE, "torch_version": torch.__version__,
    }
    size = mg.write_gold(os.path.join(HERE, "rotary_table.gold"), header, tensors)
    print(f"rotary_table: D {HEAD_DIM}, {len(POSITIONS)} positions ({size} bytes)")


if __name__ == "__main__":
    main()
