#!/usr/bin/env python3
"""Writes and checks the nanochat goldens of tests/nanochat/ (by hand; no test runs Python).

Python 3.11, torch 2.5.1, tiktoken 0.14.0, regex, from the repository root:

  /tmp/tv/bin/python tests/nanochat/make_nanochat_golden.py write tests/nanochat
  ./bazelw build //trainer:export_nanochat
  bazel-bin/trainer/export_nanochat --from_nanochat=tests/nanochat/base/base_checkpoints/d2 \
      --tokenizer=tests/nanochat/base/tokenizer/tokenizer.pkl --output_base_dir=tests/nanochat/exported
  /tmp/tv/bin/python tests/nanochat/make_nanochat_golden.py verify tests/nanochat

`write` makes, from a fixed seed, what nanochat itself would leave in a base directory for a
tiny model (sequence_len 64, vocab 300, 2 layers, 2 heads, 1 kv head, width 16):
  base/tokenizer/tokenizer.pkl                   pickle.dump of a tiktoken Encoding built as
                                                 nanochat builds it (byte-order ranks, then
                                                 35 BPE merges trained on TEXT, then the 9
                                                 special tokens)
  base/base_checkpoints/d2/model_000007.pt       torch.save(model.state_dict()) of a module
                                                 with nanochat's parameter names; wte bf16,
                                                 the rest fp32, as nanochat stores them
  base/base_checkpoints/d2/meta_000007.json      nanochat's meta keys
  same_weights.safetensors                       the same weights as our own checkpoint files
                                                 hold them (F32, written here by hand)
  golden.json                                    tiktoken's ids for GOLDEN_TEXT, the input ids,
                                                 and the logits tests/golden/reference_gpt.py
                                                 (our independent PyTorch model) computes from
                                                 these weights in float64

`verify` loads what //trainer:export_nanochat wrote under exported/ (a nanochat base dir)
in real PyTorch: torch.load(weights_only=True), nanochat's parameter names, shapes and dtypes,
values equal to the original weights (wte bit-exact in bf16), the meta's keys, the
tokenizer.pkl through pickle.load giving the same Encoding; and then nanochat's own loader
(checkpoint_manager.load_model("sft") from the init commit of the nanochat mirror, with its
training-only imports rustbpe and tokenizers stubbed), whose model's forward under CPU bf16
autocast must agree with the reference logits to bf16 accuracy, and whose Engine must answer a
turn as chat_cli asks it (on the CPU: chat_cli itself asserts CUDA). The C++ tests check that the
exporter reproduces exported/ byte for byte, so this check stays valid without Python in CI.
"""
import collections
import json
import math
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import types

import torch
import tiktoken

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "data", "tokenizer"))
import reference_gpt  # noqa: E402
from tiktoken_golden import naive_train  # noqa: E402

CONFIG = {"sequence_len": 64, "vocab_size": 300, "n_layer": 2, "n_head": 2, "n_kv_head": 1, "n_embd": 16}
STEP = 7
PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|"""
           r"""\s*[\r\n]|\s+(?!\S)|\s+""")
SPECIALS = ["bos", "user_start", "user_end", "assistant_start", "assistant_end",
            "python_start", "python_end", "output_start", "output_end"]
TEXT = ("the cat sat on the mat. the dog sat on the log. then the cat and the dog ran to the "
        "barn, and there they sat and sat until the sun set. That's 12 cats, 34 dogs!\n") * 3
GOLDEN_TEXT = "the cat and the dog sat, then ran 1234 <|bos|> caf\u00e9\n\nThat's it!"
NUM_INPUTS = 12


def encoding():
    merges = naive_train(PATTERN, [TEXT], CONFIG["vocab_size"] - 256 - len(SPECIALS))
    token_bytes = [bytes([b]) for b in range(256)]
    for left, right in merges:
        token_bytes.append(token_bytes[left] + token_bytes[right])
    assert len(token_bytes) + len(SPECIALS) == CONFIG["vocab_size"]
    return tiktoken.Encoding(
        name="rustbpe", pat_str=PATTERN,
        mergeable_ranks={t: i for i, t in enumerate(token_bytes)},
        special_tokens={f"<|{s}|>": len(token_bytes) + i for i, s in enumerate(SPECIALS)})


class Block(torch.nn.Module):
    """nanochat's parameter names: attn.c_q/c_k/c_v/c_proj, mlp.c_fc/c_proj (no biases)."""

    def __init__(self, c, kv):
        super().__init__()
        self.attn = torch.nn.Module()
        for name, out in (("c_q", c), ("c_k", kv), ("c_v", kv), ("c_proj", c)):
            setattr(self.attn, name, torch.nn.Linear(c, out, bias=False))
        self.mlp = torch.nn.Module()
        self.mlp.c_fc = torch.nn.Linear(c, 4 * c, bias=False)
        self.mlp.c_proj = torch.nn.Linear(4 * c, c, bias=False)


class TinyGPT(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c, kv = cfg["n_embd"], cfg["n_kv_head"] * (cfg["n_embd"] // cfg["n_head"])
        self.transformer = torch.nn.ModuleDict({
            "wte": torch.nn.Embedding(cfg["vocab_size"], c),
            "h": torch.nn.ModuleList([Block(c, kv) for _ in range(cfg["n_layer"])])})
        self.lm_head = torch.nn.Linear(c, cfg["vocab_size"], bias=False)


def weights():
    gen = torch.Generator().manual_seed(1234)
    model = TinyGPT(CONFIG)
    with torch.no_grad():
        for name, p in model.named_parameters():
            std = 1.0 if "wte" in name else 1.0 / math.sqrt(p.shape[1])
            p.copy_(torch.randn(p.shape, generator=gen) * std)
    model.transformer.wte.to(dtype=torch.bfloat16)  # as nanochat's constructor does
    return model


def write_safetensors(path, state):
    """Our checkpoint's tensor file (runtime/checkpoint/FORMAT.md), every tensor F32."""
    header, blobs, offset = {"__metadata__": {"format": "pt", "writer": "make_nanochat_golden.py"}}, [], 0
    for name, t in state.items():
        data = t.float().contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def reference_logits(state, ids):
    params = {k: v.double() for k, v in state.items()}
    inputs = torch.tensor([ids], dtype=torch.int32)
    zeros = torch.zeros_like(inputs)
    positions = torch.arange(len(ids), dtype=torch.int32).unsqueeze(0)
    return reference_gpt.logits(params, CONFIG, inputs, zeros, positions)[0]


def write(out):
    enc = encoding()
    tok_dir = os.path.join(out, "base", "tokenizer")
    ckpt_dir = os.path.join(out, "base", "base_checkpoints", "d2")
    os.makedirs(tok_dir, exist_ok=True)
    os.makedirs(ckpt_dir, exist_ok=True)
    with open(os.path.join(tok_dir, "tokenizer.pkl"), "wb") as f:
        pickle.dump(enc, f)  # nanochat's RustBPETokenizer.save_to_directory
    state = weights().state_dict()
    torch.save(state, os.path.join(ckpt_dir, f"model_{STEP:06d}.pt"))
    meta = {"step": STEP, "val_bpb": 2.5, "model_config": CONFIG}
    with open(os.path.join(ckpt_dir, f"meta_{STEP:06d}.json"), "w") as f:
        json.dump(meta, f, indent=2)
    write_safetensors(os.path.join(out, "same_weights.safetensors"), state)

    bos = enc.encode_single_token("<|bos|>")
    golden_ids = enc.encode_ordinary(GOLDEN_TEXT)
    inputs = ([bos] + golden_ids)[:NUM_INPUTS]
    logits = reference_logits(state, inputs)
    golden = {"config": CONFIG, "step": STEP, "text": GOLDEN_TEXT, "tiktoken_ids": golden_ids,
              "num_merges": len(enc._mergeable_ranks) - 256, "inputs": inputs,
              "logits_float64": [[float("%.9g" % x) for x in row] for row in logits.tolist()]}
    with open(os.path.join(out, "golden.json"), "w") as f:  # one key per line, one logits row per line
        f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in golden.items()
                                   if k != "logits_float64"))
        f.write(',\n"logits_float64": [\n' + ",\n".join(json.dumps(r) for r in golden["logits_float64"]) + "]}\n")
    print("wrote", out, "inputs", inputs)


def nanochat_sources():
    """nanochat's package at its init commit, from the bare mirror, in a temp dir."""
    git = ["git", "--git-dir=/work/.mirror/karpathy+nanochat/repo"]
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "nanochat"))
    names = subprocess.check_output(git + ["ls-tree", "--name-only", "3a5e0bc", "nanochat/"]).decode().split()
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(root, name), "wb") as f:
                f.write(subprocess.check_output(git + ["show", f"3a5e0bc:{name}"]))
    return root


def verify(out):
    original = weights().state_dict()
    base = os.path.join(out, "exported")
    ckpt_dir = os.path.join(base, "chatsft_checkpoints", "d2")
    sd = torch.load(os.path.join(ckpt_dir, f"model_{STEP:06d}.pt"), weights_only=True)
    assert isinstance(sd, collections.OrderedDict), type(sd)
    assert list(sd) == list(original), (list(sd), list(original))
    for name, t in sd.items():
        o = original[name]
        assert t.shape == o.shape and t.dtype == o.dtype, (name, t.shape, t.dtype, o.shape, o.dtype)
        assert t.is_contiguous() and torch.equal(t, o), name
    with open(os.path.join(ckpt_dir, f"meta_{STEP:06d}.json")) as f:
        meta = json.load(f)
    assert list(meta) == ["step", "val_loss", "val_bpb", "model_config"], list(meta)  # nanochat's key order
    assert meta["step"] == STEP and meta["val_bpb"] == 2.5 and meta["model_config"] == CONFIG, meta
    with open(os.path.join(base, "tokenizer", "tokenizer.pkl"), "rb") as f:
        enc = pickle.load(f)
    ref = encoding()
    assert enc._mergeable_ranks == ref._mergeable_ranks and enc._special_tokens == ref._special_tokens
    assert enc._pat_str == ref._pat_str and enc.name == "rustbpe"
    assert enc.encode_ordinary(GOLDEN_TEXT) == ref.encode_ordinary(GOLDEN_TEXT)

    # nanochat's own loader. rustbpe and tokenizers are needed only to train a tokenizer.
    sys.modules["rustbpe"] = types.ModuleType("rustbpe")
    hf = types.ModuleType("tokenizers")
    hf.Tokenizer, hf.pre_tokenizers, hf.decoders, hf.Regex = object, None, None, None
    sys.modules["tokenizers"] = hf
    for sub in ("models", "trainers"):
        m = types.ModuleType("tokenizers." + sub)
        m.BPE = m.BpeTrainer = object
        sys.modules["tokenizers." + sub] = m
    sys.path.insert(0, nanochat_sources())
    os.environ["NANOCHAT_BASE_DIR"] = os.path.abspath(base)
    from nanochat.checkpoint_manager import load_model
    model, tokenizer, meta = load_model("sft", "cpu", phase="eval")
    assert tokenizer.get_vocab_size() == CONFIG["vocab_size"]
    with open(os.path.join(out, "golden.json")) as f:
        golden = json.load(f)
    assert tokenizer.encode(GOLDEN_TEXT) == golden["tiktoken_ids"]
    with torch.no_grad(), torch.amp.autocast("cpu", dtype=torch.bfloat16):
        logits = model(torch.tensor([golden["inputs"]]))[0].double()
    expected = torch.tensor(golden["logits_float64"])
    worst = (logits - expected).abs().max().item()
    print("nanochat's load_model('sft') loaded it; its bf16 logits differ from the reference's "
          "float64 ones by at most", worst)
    assert worst < 0.25, worst
    # chat_cli's turn (scripts/chat_cli.py at init) on the CPU: it asserts CUDA in compute_init
    # and autocasts on cuda, which are the only two lines not run here.
    from nanochat.engine import Engine
    tokens = [tokenizer.get_bos_token_id(), tokenizer.encode_special("<|user_start|>")]
    tokens += tokenizer.encode("the cat sat") + [tokenizer.encode_special("<|user_end|>"),
                                                 tokenizer.encode_special("<|assistant_start|>")]
    reply = []
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        for column, _ in Engine(model, tokenizer).generate(tokens, num_samples=1, max_tokens=16,
                                                           temperature=0.6, top_k=50):
            reply.append(column[0])
    assert len(reply) > 0
    print("chat_cli's Engine replied", repr(tokenizer.decode(reply)))
    print("verified", base)


if __name__ == "__main__":
    {"write": write, "verify": verify}[sys.argv[1]](sys.argv[2])
