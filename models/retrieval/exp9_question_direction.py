#!/usr/bin/env python3
"""Cosine alone, with the query's component along the direction questions share removed
as well as the notebook's common direction (BENCHMARKS.md, "Personal facts"): top-3 hit on
personal-facts notebooks and LoCoMo dev any@10 / all@10 by cosine only.

Statements share a common direction (first person, sentence shape), which `mnemo-index`
removes from both vectors; questions share one too ("what … my …?"), which favours the same
few records for every question (hubs). The question direction is the mean of
`mnemo-core::calibration`'s 36 calibration questions (read as the user says them, "the
user" → "I"), made orthogonal to the notebook's common direction; only the query loses its
component along it. The harness is `exp8_common_direction.py`'s.

    python3 models/retrieval/exp9_question_direction.py                 # built-in static model
    python3 models/retrieval/exp9_question_direction.py --minilm DIR    # all-MiniLM-L6-v2 (numpy)
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exp8_common_direction as E  # noqa: E402


def calibration_questions() -> list[str]:
    source = (E.ROOT / "crates/mnemo-core/src/calibration.rs").read_text()
    block = source.split("pub const CALIBRATION_QUESTIONS")[1].split("];")[0]
    texts = re.findall(r'"((?:[^"\\]|\\.)*)"', block)
    questions = texts[0::2]
    return [q.replace("the user's", "my").replace("the user", "I") for q in questions]


def methods(prior: np.ndarray, question_mean: np.ndarray):
    base = E.scorers(prior)

    def without_both(q, D):
        p = D.sum(0) + 30 * prior
        p /= np.linalg.norm(p)
        u = question_mean - (question_mean @ p) * p
        u /= np.linalg.norm(u)
        q = q - (q @ u) * u
        q /= np.linalg.norm(q)
        dp, qp = D @ p, q @ p
        return (D @ q - qp * dp) / np.sqrt(np.maximum((1 - dp**2) * (1 - qp**2), 1e-6))

    return {**base, "also without the question direction": without_both}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minilm", type=Path, help="all-MiniLM-L6-v2 model directory")
    args = parser.parse_args()
    embed = E.cached(E.minilm_embedder(args.minilm) if args.minilm else E.static_embedder())
    question_mean = np.stack([embed(q) for q in calibration_questions()]).mean(0)
    scoring = methods(E.calibration_mean(embed), question_mean)
    for per_user in (10, 100):
        print(f"personal facts, {per_user} per user, top-3:", E.personal_facts(embed, scoring, per_user))
    print("LoCoMo dev, any@10 / all@10:", E.locomo(embed, scoring))
    return 0


if __name__ == "__main__":
    sys.exit(main())
