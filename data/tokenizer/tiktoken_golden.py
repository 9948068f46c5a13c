#!/usr/bin/env python3
"""Regenerates the constants of tiktoken_golden_test.cc and bpe_trainer_test.cc (by hand;
no test runs Python). Needs `pip install tiktoken regex`.

  L=/usr/share/common-licenses
  F="Apache-2.0 Artistic BSD CC0-1.0 GFDL-1.2 GFDL-1.3 GPL-1 GPL-2 GPL-3 LGPL-2 LGPL-2.1 LGPL-3 MPL-1.1 MPL-2.0"
  ALL=$(for f in $F; do printf "%s/%s," $L $f; done)/usr/share/dict/words
  bazel-bin/data/tok_train --input=$L/GPL-3,$L/Apache-2.0,$L/MPL-2.0 --vocab_size=1024 --output=/tmp/tok1024.bpe
  bazel-bin/data/tok_train --input=$ALL --vocab_size=8192 --output=/tmp/tok8192.bpe
  bazel-bin/data/tok_train --input=$ALL --vocab_size=65536 --output=/tmp/tok65536.bpe
  python3 data/tokenizer/tiktoken_golden.py /tmp/tok1024.bpe /tmp/tok8192.bpe /tmp/tok65536.bpe
"""
import sys

import regex
import tiktoken

LICENSES = "/usr/share/common-licenses/"
FILES = ("Apache-2.0 Artistic BSD CC0-1.0 GFDL-1.2 GFDL-1.3 GPL-1 GPL-2 GPL-3 LGPL-2 "
         "LGPL-2.1 LGPL-3 MPL-1.1 MPL-2.0").split()
SPECIALS = ["bos", "user_start", "user_end", "assistant_start", "assistant_end",
            "python_start", "python_end", "output_start", "output_end"]


def load(path):
    """(pattern, merges) of a gpt-sft-bpe 1 file (data/tokenizer/FORMAT.md)."""
    lines = open(path, "rb").read().decode("utf-8").split("\n")
    assert lines[0] == "gpt-sft-bpe 1", path
    n = int(lines[2].split()[1])
    return lines[1][len("pattern "):], [tuple(map(int, l.split())) for l in lines[3:3 + n]]


def encoding(pattern, merges):
    """The tiktoken Encoding nanochat would build from these merges (NANOCHAT.md 5.3)."""
    token_bytes = [bytes([b]) for b in range(256)]
    for left, right in merges:
        token_bytes.append(token_bytes[left] + token_bytes[right])
    return tiktoken.Encoding(
        name="rustbpe", pat_str=pattern,
        mergeable_ranks={t: i for i, t in enumerate(token_bytes)},
        special_tokens={f"<|{s}|>": len(token_bytes) + i for i, s in enumerate(SPECIALS)})


def fnv(ids):
    """FNV-1a 64 over each id as 4 little-endian bytes (as the C++ tests compute it)."""
    h = 1469598103934665603
    for i in ids:
        for k in range(4):
            h = ((h ^ ((i >> (8 * k)) & 0xFF)) * 1099511628211) % (1 << 64)
    return h


def naive_train(pattern, texts, num_merges):
    """Textbook BPE: recount every pair each round; ties to the smaller (left, right)."""
    counts = {}
    for text in texts:
        for chunk in regex.findall(pattern, text):
            counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    words = [[list(w), c] for w, c in counts.items()]
    merges = []
    for k in range(num_merges):
        pairs = {}
        for ids, c in words:
            for p in zip(ids, ids[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        for w in words:
            ids, out, i = w[0], [], 0
            while i < len(ids):
                if i + 1 < len(ids) and (ids[i], ids[i + 1]) == best:
                    out.append(256 + k)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            w[0] = out
    return merges


STRINGS_1024 = [
    "Hello world! It's 2024; don't   stop.\n\n  Next", "HE'LL WE'VE they're I'M 'tis",
    "12345 3.14159 \u0661\u0662\u0663", "h\u00e9llo \u4e16\u754c na\u00efve caf\u00e9",
    "tabs\there\r\nCRLF\r\n\r\nend   ", "<|bos|>hi<|user_start|>",
    "    indented code():\n        return x+1\n", "!!!???...\n\n\n", "\U0001F44D\U0001F3FD ok",
    "the License, or (at your option) any later version."]
STRING_65536 = ("Hello world! It's 2024; the GNU General Public License, version 3.\n\n  "
                "<|bos|> caf\u00e9 \u4e16\u754c")


def read(name):
    return open(LICENSES + name, encoding="utf-8").read()


def main(tok1024, tok8192, tok65536):
    pattern, merges = load(tok1024)
    three = [read("GPL-3"), read("Apache-2.0"), read("MPL-2.0")]
    print("naive trainer agrees:", naive_train(pattern, three, len(merges)) == merges)
    enc = encoding(pattern, merges)
    print("1024 merges", len(merges), hex(fnv([x for m in merges for x in m])), merges[:12])
    for text in STRINGS_1024:
        print("1024 string", repr(text), enc.encode_ordinary(text))
    ids = enc.encode_ordinary("".join(three))
    print("1024 corpus", len(ids), hex(fnv(ids)))
    for s in [" " * 5000 + "x", "thelicense" * 50, "ab" * 40, " " * 100000]:
        ids = enc.encode_ordinary(s)
        print("1024 long", repr(s[:12]), len(ids), hex(fnv(ids)))
    for path in (tok8192, tok65536):
        pattern, merges = load(path)
        enc = encoding(pattern, merges)
        ids = [i for f in FILES for i in enc.encode_ordinary(read(f))]
        print(path, "merges", len(merges), hex(fnv([x for m in merges for x in m])))
        print(path, "licenses", len(ids), hex(fnv(ids)))
        words = enc.encode_ordinary(open("/usr/share/dict/words", encoding="utf-8").read())
        print(path, "words", len(words), hex(fnv(words)))
        print(path, "string", enc.encode_ordinary(STRING_65536))


if __name__ == "__main__":
    main(*sys.argv[1:4])
