#!/usr/bin/env python3
"""Dependency-free (stdlib only) reference of what the Rust side implements.

BERT BasicTokenizer (uncased) + greedy longest-match WordPiece, the M2V1 reader, and the
sentence embedding (mean of dequantised rows, skip ids dropped, L2 normalise). Running it
checks every entry of the built-in model's fixtures.json (minilm-l6-fit-256/, or the model
directory given):

    python3 models/reference_embed.py                               # "N passed, 0 failed" when all match
    python3 models/reference_embed.py models/minilm-l6-m2v-256      # the distilled table it was fitted from
"""
from __future__ import annotations

import json
import math
import struct
import sys
import unicodedata
from pathlib import Path

MODEL = Path(__file__).resolve().parent / "minilm-l6-fit-256"


# ---- BasicTokenizer -----------------------------------------------------------------
def _is_whitespace(ch: str) -> bool:
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    # All non-letter/number ASCII is punctuation (e.g. '$', '+', '^', '`'), like BERT.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def basic_tokenize(text: str) -> list[str]:
    # 1. clean: drop NUL, U+FFFD and control chars; map every whitespace char to ' '
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        out.append(" " if _is_whitespace(ch) else ch)
    text = "".join(out)
    # 2. put spaces around CJK ideographs
    text = "".join(f" {ch} " if _is_cjk(ord(ch)) else ch for ch in text)
    # 3. whitespace split; per word: lowercase, NFD, drop combining marks (Mn); split punctuation
    tokens = []
    for word in text.split():  # str.split() splits on the same whitespace set after step 1
        word = word.lower()
        word = "".join(ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn")
        cur = ""
        for ch in word:
            if _is_punctuation(ch):
                if cur:
                    tokens.append(cur)
                    cur = ""
                tokens.append(ch)
            else:
                cur += ch
        if cur:
            tokens.append(cur)
    return tokens


# ---- WordPiece ----------------------------------------------------------------------
def wordpiece(word: str, vocab: dict[str, int], unk_id: int = 100, max_chars: int = 100) -> list[int]:
    if len(word) > max_chars:  # counted in Unicode scalar values
        return [unk_id]
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return [unk_id]  # the whole word becomes a single [UNK]
        ids.append(found)
        start = end
    return ids


def tokenize(text: str, vocab: dict[str, int]) -> list[int]:
    return [i for w in basic_tokenize(text) for i in wordpiece(w, vocab)]


# ---- model ------------------------------------------------------------------------
def load_vocab(path: Path) -> dict[str, int]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {tok: i for i, tok in enumerate(lines)}


def load_table(path: Path) -> tuple[int, int, bytes]:
    raw = path.read_bytes()
    if raw[:4] != b"M2V1":
        raise ValueError("bad magic")
    n, d = struct.unpack_from("<II", raw, 4)
    if len(raw) != 12 + n * (4 + d):
        raise ValueError("bad size")
    return n, d, raw


def row(raw: bytes, d: int, i: int) -> list[float]:
    off = 12 + i * (4 + d)
    (scale,) = struct.unpack_from("<f", raw, off)
    return [q * scale for q in struct.unpack_from(f"<{d}b", raw, off + 4)]


def embed(ids: list[int], raw: bytes, d: int, skip: set[int]) -> list[float]:
    ids = [i for i in ids if i not in skip]
    acc = [0.0] * d
    for i in ids:
        for k, v in enumerate(row(raw, d, i)):
            acc[k] += v
    if not ids:
        return acc
    acc = [a / len(ids) for a in acc]
    n = math.sqrt(sum(a * a for a in acc))
    return [a / n for a in acc] if n > 0 else acc


def main() -> int:
    global MODEL
    if len(sys.argv) > 1:
        MODEL = Path(sys.argv[1])
    cfg = json.loads((MODEL / "config.json").read_text(encoding="utf-8"))
    vocab = load_vocab(MODEL / "vocab.txt")
    n, d, raw = load_table(MODEL / "embeddings.bin")
    assert n == len(vocab) == cfg["vocab_size"] and d == cfg["dims"]
    skip = set(cfg["skip_token_ids"])
    fx = json.loads((MODEL / "fixtures.json").read_text(encoding="utf-8"))["fixtures"]
    passed = failed = 0
    for f in fx:
        ids = tokenize(f["text"], vocab)
        v = embed(ids, raw, d, skip)
        ok = ids == f["ids"] and all(abs(a - b) < 1e-5 for a, b in zip(v[:8], f["embedding_first8"]))
        ok = ok and abs(sum(v) - f["embedding_sum"]) < 1e-4
        if ok:
            passed += 1
        else:
            failed += 1
            print("MISMATCH", repr(f["text"]), ids, f["ids"], v[:8], f["embedding_first8"], file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
