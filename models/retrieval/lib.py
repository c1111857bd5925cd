"""Shared helpers for the LoCoMo retrieval prototypes (numpy only)."""
from __future__ import annotations

import json
import math
import re
import sys
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS = HERE.parent
sys.path.insert(0, str(MODELS))
sys.path.insert(0, str(HERE))
import reference_embed as R  # noqa: E402
from porter import stem  # noqa: E402

DATA = Path("/work/shared/data/locomo/locomo-dev.json")
for cand in (MODELS.parent / "shared" / "data" / "locomo" / "locomo-dev.json",):
    if cand.exists():
        DATA = cand


# ---------------------------------------------------------------- data
def load(path: Path = DATA):
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    convs = []
    for s in data:
        c = s["conversation"]
        sess = sorted((k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
        turns = []
        for si, k in enumerate(sess):
            date = c.get(k + "_date_time", "")
            for pi, t in enumerate(c[k]):
                turns.append(dict(t, session=si, pos=pi, date=date, sess_len=len(c[k])))
        ids = {t["dia_id"] for t in turns}
        qs = []
        for q in s["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            ev = {e for x in q.get("evidence", []) for e in re.split(r"[;,\s]+", x) if e in ids}
            if not ev:
                continue
            qs.append({"question": q["question"], "evidence": ev, "category": q["category"]})
        convs.append({"id": s["sample_id"], "turns": turns, "qa": qs,
                      "speakers": [c["speaker_a"], c["speaker_b"]]})
    return convs


# ---------------------------------------------------------------- lexical tokeniser
_TOK = re.compile(r"[^\W_]+", re.UNICODE)


def _fold(s: str) -> str:
    s = s.lower()
    return "".join(ch for ch in unicodedata.normalize("NFD", s) if unicodedata.category(ch) != "Mn")


@lru_cache(maxsize=None)
def _stem(w):
    return stem(w)


def words(text: str, do_stem: bool = True):
    """FTS5 unicode61-like: runs of letters/digits, lowercased, diacritics removed; + porter."""
    ws = _TOK.findall(_fold(text))
    return [_stem(w) for w in ws] if do_stem else ws


STOP = set("""a about above after again against all am an and any are aren't as at be because been before
being below between both but by can could did didn't do does doesn't doing don't down during each few for
from further had has have having he her here hers herself him himself his how i if in into is isn't it its
itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was wasn't we were what when where which while who whom why will with
would you your yours yourself yourselves s t ll ve re d m""".split())


# ---------------------------------------------------------------- BM25 (matrix form)
class BM25:
    """docs: list of token lists. Returns scores via .score(query_tokens)."""

    def __init__(self, docs, k1=1.2, b=0.75, vocab=None):
        self.vocab = vocab if vocab is not None else {}
        for d in docs:
            for w in d:
                self.vocab.setdefault(w, len(self.vocab))
        N = len(docs)
        V = len(self.vocab)
        tf = np.zeros((N, V), dtype=np.float32)
        for i, d in enumerate(docs):
            for w, c in Counter(d).items():
                tf[i, self.vocab[w]] = c
        self.tf = tf
        self.dl = tf.sum(1)
        self.avgdl = max(self.dl.mean(), 1e-9)
        df = (tf > 0).sum(0)
        self.df = df
        self.N = N
        self.set_params(k1, b)

    def set_params(self, k1, b, idf="fts5"):
        N, df = self.N, self.df
        if idf == "fts5":
            idf_v = np.log((N - df + 0.5) / (df + 0.5))
            idf_v = np.where(idf_v <= 0, 1e-6, idf_v)
        else:  # lucene, always positive
            idf_v = np.log(1 + (N - df + 0.5) / (df + 0.5))
        self.idf = idf_v.astype(np.float32)
        norm = k1 * (1 - b + b * self.dl / self.avgdl)
        self.W = (self.tf * (k1 + 1) / (self.tf + norm[:, None])) * self.idf[None, :]

    def qvec(self, q, unique=True, weights=None):
        v = np.zeros(len(self.vocab), dtype=np.float32)
        for w in q:
            j = self.vocab.get(w)
            if j is not None:
                wt = 1.0 if weights is None else weights.get(w, 1.0)
                if unique:
                    v[j] = wt
                else:
                    v[j] += wt
        return v

    def score(self, q, unique=True):
        return self.W @ self.qvec(q, unique)


# ---------------------------------------------------------------- static embeddings
class Emb:
    def __init__(self):
        mdir = MODELS / "minilm-l6-m2v-256"
        self.vocab = R.load_vocab(mdir / "vocab.txt")
        raw = (mdir / "embeddings.bin").read_bytes()
        n, d = np.frombuffer(raw[4:12], dtype="<u4")
        rec = np.frombuffer(raw[12:], dtype=np.uint8).reshape(n, 4 + d)
        scale = rec[:, :4].copy().view("<f4")[:, 0]
        q = rec[:, 4:].copy().view(np.int8).astype(np.float32)
        self.table = q * scale[:, None]
        self.skip = {0, 100, 101, 102, 103}
        self._cache = {}

    def ids(self, text):
        r = self._cache.get(text)
        if r is None:
            r = [i for i in R.tokenize(text, self.vocab) if i not in self.skip]
            self._cache[text] = r
        return r

    def encode(self, texts, normalize=True):
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for i, t in enumerate(texts):
            ids = self.ids(t)
            if ids:
                v = self.table[ids].mean(0)
                n = np.linalg.norm(v)
                out[i] = v / n if (normalize and n > 0) else v
        return out

    def sum_encode(self, texts):
        """unnormalised sum of rows and token count (for weighted mixing)."""
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        cnt = np.zeros(len(texts), dtype=np.float32)
        for i, t in enumerate(texts):
            ids = self.ids(t)
            if ids:
                out[i] = self.table[ids].sum(0)
                cnt[i] = len(ids)
        return out, cnt


def l2n(M):
    n = np.linalg.norm(M, axis=-1, keepdims=True)
    return M / np.where(n > 0, n, 1)


# ---------------------------------------------------------------- evaluation
KS = (1, 5, 10, 20)


def rank_metrics(scores, evidence_idx):
    """scores: (ndocs,) ; evidence_idx: set of doc indexes. Returns dict of metrics."""
    order = np.argsort(-scores, kind="stable")
    pos = {int(d): r for r, d in enumerate(order[:50])}
    ranks = sorted(pos.get(e, 10**6) for e in evidence_idx)
    out = {}
    for k in KS:
        out[f"any@{k}"] = float(ranks[0] < k)
        out[f"all@{k}"] = float(ranks[-1] < k)
    dcg = sum(1 / math.log2(r + 2) for r in ranks if r < 10)
    idcg = sum(1 / math.log2(r + 2) for r in range(min(len(ranks), 10)))
    out["ndcg@10"] = dcg / idcg
    return out


def evaluate(convs, score_fn, per_conv=False):
    """score_fn(conv, qi) -> np.array(ndocs) or score_fn(conv) -> (nq, ndocs) matrix."""
    rows = []
    for c in convs:
        S = score_fn(c)
        idx = {t["dia_id"]: i for i, t in enumerate(c["turns"])}
        for qi, q in enumerate(c["qa"]):
            m = rank_metrics(S[qi], {idx[e] for e in q["evidence"]})
            m["cat"] = q["category"]
            m["conv"] = c["id"]
            rows.append(m)
    return rows


def summarize(rows, keys=("any@10", "all@10")):
    return {k: float(np.mean([r[k] for r in rows])) for k in keys}


def table(rows):
    keys = [f"any@{k}" for k in KS] + [f"all@{k}" for k in KS] + ["ndcg@10"]
    groups = [("all", rows)] + [(f"cat{c}", [r for r in rows if r["cat"] == c]) for c in (1, 2, 3, 4)]
    lines = ["| group | n | " + " | ".join(keys) + " |", "|---|---:|" + "---:|" * len(keys)]
    for name, rs in groups:
        if not rs:
            continue
        lines.append(f"| {name} | {len(rs)} | " + " | ".join(f"{np.mean([r[k] for r in rs]):.3f}" for k in keys) + " |")
    return "\n".join(lines)
