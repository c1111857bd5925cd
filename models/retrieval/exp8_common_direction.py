#!/usr/bin/env python3
"""Cosine alone, with and without each notebook's common direction (BENCHMARKS.md, personal
facts): top-3 hit on personal-facts notebooks and LoCoMo dev any@10 / all@10 by cosine only.

The common direction is the notebook's mean unit vector plus 30 pseudo-records of the mean of
`mnemo-core::calibration`'s sentences, as `mnemo-index` computes it; "without" is the cosine
once the projection on it is removed from both vectors. Notebooks are drawn like
`cargo xtask eval personal-facts` draws them (categories, templates, first-person chatter),
with Python's seeded RNG, so figures are close to, not identical with, the Rust run's users.

    python3 models/retrieval/exp8_common_direction.py                 # built-in static model
    python3 models/retrieval/exp8_common_direction.py --minilm DIR    # all-MiniLM-L6-v2 (numpy, ~3 min)
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
import reference_embed as R  # noqa: E402


def static_embedder():
    model = R.MODEL
    cfg = json.loads((model / "config.json").read_text())
    vocab = R.load_vocab(model / "vocab.txt")
    n, d, raw = R.load_table(model / "embeddings.bin")
    rows = np.frombuffer(raw, dtype=np.uint8, offset=12).reshape(n, 4 + d)
    scales = rows[:, :4].copy().view("<f4").reshape(n)
    table = rows[:, 4:].copy().view(np.int8).astype(np.float32) * scales[:, None]
    skip = set(cfg["skip_token_ids"])

    def embed(text: str) -> np.ndarray:
        ids = [i for i in R.tokenize(text, vocab) if i not in skip]
        v = table[ids].mean(0) if ids else np.zeros(d, np.float32)
        return v / (np.linalg.norm(v) + 1e-9)

    return embed


def minilm_embedder(directory: Path):
    import reference_minilm as M

    weights = M.load(directory / "model.safetensors")
    vocab = R.load_vocab(directory / "vocab.txt")
    return lambda text: M.encode(text, weights, vocab).astype(np.float32)


def cached(embed):
    memo: dict[str, np.ndarray] = {}

    def lookup(text: str) -> np.ndarray:
        if text not in memo:
            memo[text] = embed(text)
        return memo[text]

    return lookup


def calibration_mean(embed) -> np.ndarray:
    source = (ROOT / "crates/mnemo-core/src/calibration.rs").read_text()
    block = source.split("pub const CALIBRATION_SENTENCES")[1].split("];")[0]
    sentences = re.findall(r'"((?:[^"\\]|\\.)*)"', block)
    return np.stack([embed(s) for s in sentences]).mean(0)


def scorers(prior: np.ndarray):
    def raw(q, D):
        return D @ q

    def without_common(q, D):
        p = D.sum(0) + 30 * prior
        p /= np.linalg.norm(p)
        dp, qp = D @ p, q @ p
        return (D @ q - qp * dp) / np.sqrt(np.maximum((1 - dp**2) * (1 - qp**2), 1e-6))

    return {"raw": raw, "without common direction": without_common}


def personal_facts(embed, methods, per_user: int, users: int = 40, seed: int = 7):
    workload = json.loads((ROOT / "testdata/personal_facts_workload.json").read_text())
    cats, filler = workload["categories"], workload["filler"]
    rng = random.Random(seed + per_user)
    hits = {m: 0 for m in methods}
    asked = 0
    for _ in range(users):
        order = list(range(len(cats)))
        rng.shuffle(order)
        mentioned = max(1, min(len(cats) - 3, per_user * 8 // 10))
        statements, questions = [], []
        for c in order[3 : 3 + mentioned]:
            cat = cats[c]
            questions.append((rng.choice(cat["questions"]), len(statements)))
            statements.append(rng.choice(cat["templates"]).replace("{v}", rng.choice(cat["values"])))
        chatter = filler[:]
        rng.shuffle(chatter)
        while len(statements) < per_user:
            statements.append(chatter.pop() if chatter else f"Note {len(statements)} about errands")
        D = np.stack([embed(s) for s in statements])
        for question, answer in questions:
            q = embed(question)
            asked += 1
            for name, score in methods.items():
                hits[name] += int(answer in np.argsort(-score(q, D))[:3])
    return {name: round(h / asked, 3) for name, h in hits.items()}


def locomo(embed, methods):
    data = json.loads((ROOT / "../shared/data/locomo/locomo-dev.json").read_text())
    totals = {m: [0, 0] for m in methods}
    n = 0
    for conversation in data:
        turns = [
            (t["dia_id"], t["text"])
            for key, session in conversation["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for t in session
        ]
        ids = [t[0] for t in turns]
        D = np.stack([embed(t[1]) for t in turns])
        for qa in conversation["qa"]:
            evidence = set(qa.get("evidence", []))
            if not evidence & set(ids):
                continue
            n += 1
            q = embed(qa["question"])
            for name, score in methods.items():
                top = {ids[i] for i in np.argsort(-score(q, D))[:10]}
                totals[name][0] += int(bool(evidence & top))
                totals[name][1] += int(evidence <= top)
    return {name: (round(a / n, 3), round(b / n, 3)) for name, (a, b) in totals.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2 model directory")
    args = parser.parse_args()
    embed = cached(minilm_embedder(args.minilm) if args.minilm else static_embedder())
    methods = scorers(calibration_mean(embed))
    for per_user in (10, 100):
        print(f"personal facts, {per_user} per user, top-3:", personal_facts(embed, methods, per_user))
    print("LoCoMo dev, any@10 / all@10:", locomo(embed, methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
