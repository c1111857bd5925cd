#!/usr/bin/env python3
"""LoCoMo turn retrieval without an LLM: the final method, written out plainly so that it can be
ported to Rust.  Run:  python3 models/retrieval/proto.py   (prints the metrics table)

Needs numpy (re-executes itself under /tmp/m2v-venv/bin/python if the current python lacks it),
models/reference_embed.py (BERT WordPiece tokenizer, stdlib) and models/retrieval/porter.py.

Per conversation, every turn is one memory.  For a query q and turn i:

  F(i) = (1-ALPHA) * z( BM25F(q, i) )                       lexical, turn + neighbour fields
       +    ALPHA  * z( cos(e(q), e(i)) )                   static embedding of the turn text
       +    GAMMA  * z( BM25(q, session(i)) )               session-level lexical score
       +    SB     * [speaker(i) is the one speaker named in q]
       +    WDATE  * date_match(dates in q, session date of i)

z(.) = (x - mean) / (std + 1e-9) over all candidates of this query (turns; sessions for GAMMA).
Ranking = F descending (stable on turn order for ties).
"""
from __future__ import annotations

import math
import os
import sys

try:
    import numpy as np
except ImportError:  # system python without numpy: use the project venv
    venv = "/tmp/m2v-venv/bin/python"
    if os.path.exists(venv) and os.path.realpath(sys.prefix) != os.path.realpath("/tmp/m2v-venv"):
        os.execv(venv, [venv] + sys.argv)
    raise

import re
import unicodedata
from collections import Counter
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import reference_embed as RE  # noqa: E402
from porter import stem  # noqa: E402

# ----------------------------------------------------------------------------- parameters
PARAMS = dict(
    k1=1.2,      # BM25 term saturation
    b=0.5,       # BM25 length normalisation
    wp=1.0,      # weight of the previous turn's term counts in a turn's BM25F document
    wp2=0.5,     # weight of the turn two before
    wn=0.5,      # weight of the next turn
    alpha=0.4,   # weight of the dense score (1-alpha for BM25F)
    gamma=0.4,   # weight of the session-level BM25 score
    sb=1.5,      # speaker bonus (in z units)
    wdate=1.5,   # date-match bonus (in z units)
    date_tau=3.0,  # days; exp(-|delta days|/tau) for a full date in the query
)

# query-side stopwords (matched on the lower-cased, accent-folded, UNSTEMMED token)
STOP = set("""a about above after again against all am an and any are aren't as at be because been before
being below between both but by can could did didn't do does doesn't doing don't down during each few for
from further had has have having he her here hers herself him himself his how i if in into is isn't it its
itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was wasn't we were what when where which while who whom why will with
would you your yours yourself yourselves s t ll ve re d m""".split())

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}


# ----------------------------------------------------------------------------- lexical tokens
_TOK = re.compile(r"[^\W_]+")


def fold(s: str) -> str:
    """lower-case, NFD, drop combining marks (like FTS5 unicode61 remove_diacritics)."""
    s = s.lower()
    return "".join(ch for ch in unicodedata.normalize("NFD", s) if unicodedata.category(ch) != "Mn")


_stem_cache: dict[str, str] = {}


def raw_tokens(text: str) -> list[str]:
    """maximal runs of Unicode letters/digits of the folded text."""
    return _TOK.findall(fold(text))


def stemmed(tok: str) -> str:
    s = _stem_cache.get(tok)
    if s is None:
        s = _stem_cache[tok] = stem(tok)
    return s


def doc_terms(text: str) -> list[str]:
    return [stemmed(t) for t in raw_tokens(text)]


def query_terms(q: str) -> list[str]:
    """stopwords removed (before stemming), stemmed, deduplicated (order kept)."""
    out = []
    for t in raw_tokens(q):
        if t in STOP:
            continue
        s = stemmed(t)
        if s not in out:
            out.append(s)
    return out


# ----------------------------------------------------------------------------- static embedding
class StaticModel:
    def __init__(self):
        mdir = HERE.parent / "minilm-l6-m2v-256"
        self.vocab = RE.load_vocab(mdir / "vocab.txt")
        raw = (mdir / "embeddings.bin").read_bytes()
        assert raw[:4] == b"M2V1"
        n, d = int.from_bytes(raw[4:8], "little"), int.from_bytes(raw[8:12], "little")
        rec = np.frombuffer(raw, dtype=np.uint8, offset=12).reshape(n, 4 + d)
        scale = rec[:, :4].copy().view("<f4")[:, 0]
        self.table = rec[:, 4:].copy().view(np.int8).astype(np.float32) * scale[:, None]
        self.skip = {0, 100, 101, 102, 103}

    def token_sum(self, text: str) -> np.ndarray:
        """sum of the dequantised rows of the WordPiece ids (skip ids dropped)."""
        ids = [i for i in RE.tokenize(text, self.vocab) if i not in self.skip]
        if not ids:
            return np.zeros(self.table.shape[1], np.float32)
        return self.table[ids].sum(0)


def l2n(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n > 0, n, 1)


def z(x):
    return (x - x.mean()) / (x.std() + 1e-9)


# ----------------------------------------------------------------------------- dates
_QD = [
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r")\b,?\s*(\d{4})?"), "dmy"),
    (re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b,?\s*(\d{4})?"), "mdy"),
    (re.compile(r"\b(" + "|".join(MONTHS) + r")\b,?\s*(\d{4})\b"), "my"),
]


def query_dates(q: str):
    """Dates named in the query, tried in this order, non-overlapping:
    '16 June, 2023' / '16th June 2023' -> day;  'June 16, 2023' -> day;  'June 2023' -> month;
    day+month without a year -> (month, day)."""
    s = q.lower()
    out, used = [], []
    for rx, kind in _QD:
        for m in rx.finditer(s):
            if any(m.start() < e and m.end() > b for b, e in used):
                continue
            try:
                if kind == "dmy":
                    d, mo, y = int(m.group(1)), MONTHS[m.group(2)], m.group(3)
                elif kind == "mdy":
                    mo, d, y = MONTHS[m.group(1)], int(m.group(2)), m.group(3)
                else:
                    d, mo, y = None, MONTHS[m.group(1)], m.group(2)
                if d is not None and y is not None:
                    out.append(("day", date(int(y), mo, d)))
                elif d is None:
                    out.append(("month", (int(y), mo)))
                else:
                    out.append(("dm", (mo, d)))
                used.append((m.start(), m.end()))
            except ValueError:
                pass
    return out


def date_match(qd, sd: date | None, tau: float) -> float:
    """max over the query's dates: day -> exp(-|sd - d| / tau); month -> 1 if same year+month;
    (month, day) -> 1 if equal.  0 when the query names no date."""
    best = 0.0
    if sd is None:
        return best
    for kind, v in qd:
        if kind == "day":
            best = max(best, math.exp(-abs((sd - v).days) / tau))
        elif kind == "month":
            best = max(best, 1.0 if (sd.year, sd.month) == v else 0.0)
        else:
            best = max(best, 1.0 if (sd.month, sd.day) == v else 0.0)
    return best


def parse_session_date(s: str):
    m = re.search(r"(\d{1,2}) (\w+), (\d{4})", s)  # "1:56 pm on 8 May, 2023"
    return date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1))) if m else None


# ----------------------------------------------------------------------------- index
class Memory:
    """One conversation.  turns: dicts with speaker, text, blip_caption?, session (int), date (str)."""

    def __init__(self, turns, speakers, model: StaticModel, P=PARAMS):
        self.P = P
        n = len(turns)
        self.sess = np.array([t["session"] for t in turns])
        self.speaker = [t["speaker"] for t in turns]
        self.speakers = speakers
        self.sdate = [parse_session_date(t["date"]) for t in turns]
        # lexical text: the turn text (+ caption); no speaker name (the speaker bonus handles names)
        # dense text:   "Speaker: " + the same
        lex = []
        for t in turns:
            s = t["text"]
            if t.get("blip_caption"):
                s += " [shares a photo: " + t["blip_caption"] + "]"
            lex.append(s)
        texts = [t["speaker"] + ": " + s for t, s in zip(turns, lex)]

        # ---- lexical: own term counts per turn; df over turns (own text only)
        own = [Counter(doc_terms(s)) for s in lex]
        self.df = Counter(w for c in own for w in c)
        self.N = n

        def nb(i, k):  # turn i+k if in the same session
            j = i + k
            return j if 0 <= j < n and self.sess[j] == self.sess[i] else None

        self.tf = []  # BM25F pseudo term frequencies
        for i in range(n):
            c = Counter()
            for k, w in ((0, 1.0), (-1, P["wp"]), (-2, P["wp2"]), (1, P["wn"])):
                j = nb(i, k)
                if j is None or w == 0:
                    continue
                for term, f in own[j].items():
                    c[term] += w * f
            self.tf.append(c)
        self.dl = np.array([sum(c.values()) for c in self.tf])
        self.avgdl = self.dl.mean()
        # inverted index: term -> [(turn, tf~)]
        self.post: dict[str, list[tuple[int, float]]] = {}
        for i, c in enumerate(self.tf):
            for term, f in c.items():
                self.post.setdefault(term, []).append((i, f))

        # ---- session documents (concatenation of own term counts)
        ns = int(self.sess.max()) + 1
        self.ns = ns
        stf = [Counter() for _ in range(ns)]
        for i, c in enumerate(own):
            stf[self.sess[i]].update(c)
        self.sdl = np.array([sum(c.values()) for c in stf])
        self.savgdl = self.sdl.mean()
        self.sdf = Counter(w for c in stf for w in c)
        self.spost: dict[str, list[tuple[int, float]]] = {}
        for s, c in enumerate(stf):
            for term, f in c.items():
                self.spost.setdefault(term, []).append((s, f))

        # ---- dense: the model's sentence vector of the turn text (mean of rows, L2-normalised)
        self.D = l2n(np.stack([model.token_sum(s) for s in texts]))
        self.model = model

    def idf_turn(self, term):  # FTS5 bm25(): log((N-n+0.5)/(n+0.5)), clamped to 1e-6
        df = self.df.get(term, 0)
        v = math.log((self.N - df + 0.5) / (df + 0.5))
        return v if v > 0 else 1e-6

    def idf_sess(self, term):  # Lucene form, always > 0 (few sessions)
        df = self.sdf.get(term, 0)
        return math.log(1 + (self.ns - df + 0.5) / (df + 0.5))

    def bm25(self, terms):
        k1, b = self.P["k1"], self.P["b"]
        s = np.zeros(self.N)
        for t in terms:
            if t not in self.df:
                continue
            idf = self.idf_turn(t)
            for i, f in self.post.get(t, ()):
                s[i] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * self.dl[i] / self.avgdl))
        return s

    def bm25_sessions(self, terms):
        k1, b = self.P["k1"], self.P["b"]
        s = np.zeros(self.ns)
        for t in terms:
            if t not in self.sdf:
                continue
            idf = self.idf_sess(t)
            for j, f in self.spost.get(t, ()):
                s[j] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * self.sdl[j] / self.savgdl))
        return s

    def scores(self, q: str) -> np.ndarray:
        P = self.P
        terms = query_terms(q)
        F = (1 - P["alpha"]) * z(self.bm25(terms))
        qv = l2n(self.model.token_sum(q))
        F += P["alpha"] * z(self.D @ qv)
        F += P["gamma"] * z(self.bm25_sessions(terms))[self.sess]
        # speaker bonus: exactly one of the conversation's speakers is named in the query
        qtok = set(raw_tokens(q))
        named = [k for k, name in enumerate(self.speakers) if all(t in qtok for t in raw_tokens(name))]
        if len(named) == 1:
            F += P["sb"] * np.array([sp == self.speakers[named[0]] for sp in self.speaker], float)
        qd = query_dates(q)
        if qd:
            F += P["wdate"] * np.array([date_match(qd, d, P["date_tau"]) for d in self.sdate])
        return F

    def search(self, q: str, k: int = 10):
        s = self.scores(q)
        return list(np.argsort(-s, kind="stable")[:k])


# ----------------------------------------------------------------------------- evaluation
def main():
    import json
    import time

    from lib import evaluate, load, summarize, table  # data loading (evidence cleaning) + metrics

    convs = load()
    model = StaticModel()
    mems = {}
    timing = {"index_s": 0.0, "query_s": 0.0, "n_q": 0}

    def f(c):
        t0 = time.perf_counter()
        m = mems[c["id"]] = Memory(c["turns"], c["speakers"], model)
        t1 = time.perf_counter()
        S = np.stack([m.scores(q["question"]) for q in c["qa"]])
        timing["index_s"] += t1 - t0
        timing["query_s"] += time.perf_counter() - t1
        timing["n_q"] += len(c["qa"])
        return S

    rows = evaluate(convs, f)
    if "--dump" in sys.argv:  # parity fixtures for a port: query terms, dates, top-10 dia_ids
        out = []
        for c in convs:
            m = mems[c["id"]]
            for q in c["qa"]:
                s = m.scores(q["question"])
                top = np.argsort(-s, kind="stable")[:10]
                out.append({"conv": c["id"], "question": q["question"], "terms": query_terms(q["question"]),
                            "dates": [[k, str(v)] for k, v in query_dates(q["question"])],
                            "top10": [c["turns"][i]["dia_id"] for i in top],
                            "top10_scores": [round(float(s[i]), 4) for i in top]})
        (HERE / "proto_top10.json").write_text("[\n" + ",\n".join(json.dumps(r) for r in out) + "\n]\n",
                                               encoding="utf-8")
        # porter fixtures: every distinct folded token of the data and its stem
        vocab = sorted({w for c in convs for t in c["turns"]
                        for w in raw_tokens(t["text"] + " " + t.get("blip_caption", ""))}
                       | {w for c in convs for q in c["qa"] for w in raw_tokens(q["question"])})
        (HERE / "porter_fixtures.tsv").write_text("".join(f"{w}\t{stemmed(w)}\n" for w in vocab), encoding="utf-8")
        print(f"wrote {HERE / 'proto_top10.json'}")
    print(f"LoCoMo dev: {len(convs)} conversations, {sum(len(c['turns']) for c in convs)} turns, "
          f"{len(rows)} questions (cat 1-4)")
    print("params:", PARAMS)
    print(table(rows))
    print()
    print("| conversation | n | any@10 | all@10 |")
    print("|---|---:|---:|---:|")
    for c in convs:
        r = summarize([x for x in rows if x["conv"] == c["id"]])
        print(f"| {c['id']} | {len(c['qa'])} | {r['any@10']:.3f} | {r['all@10']:.3f} |")
    print(f"\n(python, unoptimised: index {timing['index_s']:.2f} s for 5 conversations; "
          f"{1000 * timing['query_s'] / timing['n_q']:.2f} ms per query)")
    return rows


if __name__ == "__main__":
    main()
