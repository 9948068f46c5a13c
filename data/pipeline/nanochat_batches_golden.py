#!/usr/bin/env python3
"""Writes data/testdata/nanochat_batches.json, the golden of nanochat_batches_test.cc: what
nanochat's own code makes of the user conversations in data/testdata/chats.jsonl, with our
tokenizer file turned into the tiktoken Encoding nanochat would build (FORMAT.md).

Nothing here re-implements nanochat. From the bare mirror it checks out, into a temp dir:
  * nanochat/tokenizer.py at HEAD: RustBPETokenizer.render_conversation (the same function
    at init and HEAD), called with max_tokens = T (NANOCHAT.md 5.6: "truncated to their first
    max_tokens"; nanochat's T = 2048 is both its max_tokens and its max_seq_len);
  * tasks/common.py at init: TaskMixture (the Random(42) shuffle of the rows);
  * scripts/chat_sft.py: the collate functions, lifted out of the script with `ast` and run
    as they are: sft_data_generator at init (one conversation per row, padded with
    <|assistant_end|>, NANOCHAT.md 6.4) and sft_data_generator_bos_bestfit at HEAD
    (best-fit packing, rows of T+1, padded with <|bos|>, NANOCHAT.md 10).
The only code of ours is the dataset: each JSONL line becomes {"messages": [...]}, as
nanochat's CustomJSON returns it, without CustomJSON's string-only and no-system asserts
(render_conversation takes both; the issue asks for both).

Run from the repository root (needs torch and tiktoken; no test runs this script):
  /tmp/tv/bin/python data/pipeline/nanochat_batches_golden.py \
      --mirror=/work/.mirror/karpathy+nanochat/repo \
      --tokenizer=data/testdata/tok512.bpe --jsonl=data/testdata/chats.jsonl \
      --output=data/testdata/nanochat_batches.json
data/testdata/tok512.bpe was written by
  bazel-bin/data/tok_train --input=/usr/share/common-licenses/GPL-3 --vocab_size=512 \
      --output=data/testdata/tok512.bpe
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import types

import tiktoken
import torch

INIT, HEAD = "3a5e0bc", "92d63d4"
SPECIALS = ["bos", "user_start", "user_end", "assistant_start", "assistant_end",
            "python_start", "python_end", "output_start", "output_end"]
# (packing, B, T, batches): T = 96 keeps most conversations whole and cuts the long one.
CASES = [("pad", 2, 96, 7), ("bestfit", 2, 96, 8), ("pad", 3, 40, 4)]


def git_show(mirror, rev, path):
    return subprocess.run(["git", f"--git-dir={mirror}", "show", f"{rev}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def encoding(path):
    """Our gpt-sft-bpe 1 file as the tiktoken Encoding nanochat builds (NANOCHAT.md 5.3)."""
    lines = open(path, "rb").read().decode("utf-8").split("\n")
    assert lines[0] == "gpt-sft-bpe 1", path
    n = int(lines[2].split()[1])
    token_bytes = [bytes([b]) for b in range(256)]
    for line in lines[3:3 + n]:
        left, right = map(int, line.split())
        token_bytes.append(token_bytes[left] + token_bytes[right])
    return tiktoken.Encoding(
        name="rustbpe", pat_str=lines[1][len("pattern "):],
        mergeable_ranks={t: i for i, t in enumerate(token_bytes)},
        special_tokens={f"<|{s}|>": len(token_bytes) + i for i, s in enumerate(SPECIALS)})


def import_nanochat(mirror, root):
    """nanochat.tokenizer (HEAD) and tasks.common (init) from a temp checkout."""
    for rev, path in [(HEAD, "nanochat/tokenizer.py"), (INIT, "tasks/common.py")]:
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(git_show(mirror, rev, path))
        open(os.path.join(root, os.path.dirname(path), "__init__.py"), "a").close()
    sys.modules["rustbpe"] = types.ModuleType("rustbpe")  # training only; never called here
    sys.path.insert(0, root)
    import nanochat.tokenizer
    import tasks.common
    return nanochat.tokenizer, tasks.common


def lift_function(mirror, rev, name, namespace):
    """Defines scripts/chat_sft.py's function `name` (at `rev`) in `namespace`, unchanged."""
    tree = ast.parse(git_show(mirror, rev, "scripts/chat_sft.py"))
    fn = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    exec(compile(ast.Module(body=[fn], type_ignores=[]), f"chat_sft.py@{rev}", "exec"), namespace)
    return namespace[name]


class RenderTo:
    """nanochat's tokenizer with render_conversation's max_tokens set to T."""

    def __init__(self, tokenizer, max_tokens):
        self.tokenizer, self.max_tokens = tokenizer, max_tokens

    def render_conversation(self, conversation):
        return self.tokenizer.render_conversation(conversation, max_tokens=self.max_tokens)

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)


def batches(mirror, tokenizer, dataset, packing, B, T, count):
    namespace = {"torch": torch, "tokenizer": RenderTo(tokenizer, T), "device": "cpu",
                 "device_type": "cpu", "ddp_rank": 0, "ddp_world_size": 1}
    if packing == "pad":
        loader = lift_function(mirror, INIT, "sft_data_generator", namespace)(dataset, B)
    else:
        namespace.update(train_dataset=dataset, val_dataset=dataset,
                         args=types.SimpleNamespace(max_seq_len=T, device_batch_size=B, num_iterations=-1))
        loader = lift_function(mirror, HEAD, "sft_data_generator_bos_bestfit", namespace)("train")
    out = []
    for _ in range(count):
        inputs, targets = next(loader)
        out.append({"inputs": inputs.tolist(), "targets": targets.tolist(),
                    "mask": (targets >= 0).to(torch.int32).tolist()})
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mirror", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--jsonl", required=True)
    p.add_argument("--output", required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as root:
        tok_module, common = import_nanochat(a.mirror, root)
        tokenizer = tok_module.RustBPETokenizer(encoding(a.tokenizer), "<|bos|>")

        class UserConversations(common.Task):
            """nanochat's CustomJSON loading (blank lines skipped), any conversation
            render_conversation accepts."""

            def __init__(self, path):
                super().__init__()
                with open(path, encoding="utf-8") as f:
                    self.rows = [json.loads(line) for line in f if line.strip()]

            def num_examples(self):
                return len(self.rows)

            def get_example(self, index):
                return {"messages": self.rows[index]}

        task = UserConversations(a.jsonl)
        dataset = common.TaskMixture([task])
        renders = []
        for i in range(len(task)):
            ids, mask = tokenizer.render_conversation(task[i], max_tokens=1 << 20)
            renders.append({"ids": ids, "mask": mask})
        golden = {
            "generated_by": "data/pipeline/nanochat_batches_golden.py (nanochat init "
                            f"{INIT}, HEAD {HEAD}; tiktoken {tiktoken.__version__})",
            "tokenizer": a.tokenizer, "jsonl": a.jsonl,
            "mixture_order": [dataset.index_map[i][1] for i in range(len(dataset))],
            "renders": renders,
            "cases": [{"packing": packing, "B": B, "T": T,
                       "batches": batches(a.mirror, tokenizer, dataset, packing, B, T, count)}
                      for packing, B, T, count in CASES],
        }
    print("rendered lengths:", [len(r["ids"]) for r in renders], file=sys.stderr)
    with open(a.output, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
