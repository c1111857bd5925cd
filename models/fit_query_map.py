#!/usr/bin/env python3
"""Fit the linear map that takes all-MiniLM-L6-v2's sentence vectors into the built-in static
model's space, so that a search query encoded by MiniLM can be compared with records the
static model embedded.

The static model `minilm-l6-fit-256` is itself fitted so that the mean of a line's token rows
approximates MiniLM's vector of the line (`fit_static.py`). The map M (384 x 256) is the least
squares solution of T M = F over the same corpus lines, where T holds MiniLM's unit vectors of
the lines and F the static model's unit vectors of the same lines. Deterministic; numpy only.

    python3 models/fit_static.py ... --work /tmp/fit-work   # first: caches MiniLM's vectors
    python3 models/fit_query_map.py --work /tmp/fit-work

Writes `minilm-l6-fit-256/query_map.bin`: b"QMP1", rows and columns as u32 little-endian,
then the rows of M as f32 little-endian.
"""
from __future__ import annotations

import argparse
import pickle
import struct
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_static as S  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/fit-work"), help="fit_static.py's cache of the teacher's vectors")
    args = parser.parse_args()
    cached = pickle.loads((args.work / "teacher.pkl").read_bytes())
    keep = [i for i, line in enumerate(cached["ids"]) if any(t not in S.SKIP for t in line)]
    teacher = cached["vec"][keep].astype(np.float64)
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    table = S.read_table(S.OUT / "embeddings.bin")
    static = S.pooling([cached["ids"][i] for i in keep]) @ table
    static /= np.linalg.norm(static, axis=1, keepdims=True) + 1e-12
    mapping, *_ = np.linalg.lstsq(teacher, static, rcond=None)
    mapped = teacher @ mapping
    agreement = float(((mapped * static).sum(1) / np.linalg.norm(mapped, axis=1)).mean())
    print(f"{len(keep)} lines; mean cosine of mapped MiniLM vectors with the static model's: {agreement:.4f}", file=sys.stderr)
    m = mapping.astype("<f4")
    with open(S.OUT / "query_map.bin", "wb") as f:
        f.write(b"QMP1" + struct.pack("<II", *m.shape) + m.tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
