"""Configurable retrieval pipeline used by the experiments and by proto.py.

score(turn | query) =
    (1-alpha) * z(BM25F(query, turn with neighbour fields))
  +  alpha    * z(cos(static_emb(query), static_emb(turn + dwp*prev turn)))
  +  sb    * [turn speaker == the single conversation speaker named in the query]
  +  wdate * date_match(query dates, turn session date)
  +  gamma * z(session BM25)            (optional)
then optional neighbour propagation.
"""
from __future__ import annotations

import re
from datetime import date

import numpy as np

from lib import STOP, Counter, Emb, l2n, words

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}

DEFAULT = dict(
    # lexical
    spk_prefix=False, caption=True, k1=1.2, b=0.5, idf="fts5",
    wp=1.0, wp2=0.0, wn=0.5, qstop=True, qnames="keep", dstop=False,
    # dense
    alpha=0.4, dwp=0.5, dwn=0.0, dcap=True,
    # fusion/boosts
    norm="z", sb=1.5, wdate=0.0, date_tau=3.0, gamma=0.0, prop_p=0.0, prop_n=0.0,
    prf_docs=0, prf_terms=0, prf_w=0.0, div=0.0, div_n=30, div_win=1, dgamma=0.0,
    stem=True, fusion="score", rrf_k=60, dqstop=False,
)


# ------------------------------------------------------------------ dates
def parse_session_date(s: str):
    m = re.search(r"(\d{1,2}) (\w+), (\d{4})", s)
    if not m:
        return None
    return date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))


_QD = [
    # 16 June, 2023 / 16th June 2023
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r")\b,?\s*(\d{4})?"), "dmy"),
    # June 16, 2023 / June 16 2023
    (re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b,?\s*(\d{4})?"), "mdy"),
    # June 2023 / June, 2023
    (re.compile(r"\b(" + "|".join(MONTHS) + r")\b,?\s*(\d{4})\b"), "my"),
]


def query_dates(q: str):
    """list of (kind, value): ('day', date) or ('month', (year, month))."""
    s = q.lower()
    out = []
    used = []
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
                else:  # day+month without year: ignore year
                    out.append(("dm", (mo, d)))
                used.append((m.start(), m.end()))
            except ValueError:
                pass
    return out


def date_match(qd, sd, tau):
    if sd is None or not qd:
        return 0.0
    best = 0.0
    for kind, v in qd:
        if kind == "day":
            best = max(best, float(np.exp(-abs((sd - v).days) / tau)))
        elif kind == "month":
            best = max(best, 1.0 if (sd.year, sd.month) == v else 0.0)
        elif kind == "dm":
            best = max(best, 1.0 if (sd.month, sd.day) == v else 0.0)
    return best


# ------------------------------------------------------------------ per-conversation index
class ConvIndex:
    def __init__(self, conv, p, emb: Emb | None):
        self.c = conv
        turns = conv["turns"]
        self.sess = np.array([t["session"] for t in turns])
        self.same_prev = np.r_[False, self.sess[1:] == self.sess[:-1]]
        self.same_next = np.r_[self.sess[:-1] == self.sess[1:], False]
        self.names = [n.lower() for n in conv["speakers"]]
        self.spkr = np.array([conv["speakers"].index(t["speaker"]) if t["speaker"] in conv["speakers"] else -1
                              for t in turns])
        self.sdate = [parse_session_date(t["date"]) for t in turns]
        # lexical
        toks = []
        for t in turns:
            s = (t["speaker"] + ": " if p["spk_prefix"] else "") + t["text"]
            if p["caption"] and t.get("blip_caption"):
                s += " [shares a photo: " + t["blip_caption"] + "]"
            if p["dstop"]:
                toks.append([w for w, r in zip(words(s, p["stem"]), words(s, False)) if r not in STOP])
            else:
                toks.append(words(s, p["stem"]))
        vocab = {}
        for d in toks:
            for w in d:
                vocab.setdefault(w, len(vocab))
        self.vocab = vocab
        N, V = len(toks), len(vocab)
        T = np.zeros((N, V), np.float32)
        for i, d in enumerate(toks):
            for w, n in Counter(d).items():
                T[i, vocab[w]] = n
        self.T = T
        self.shift_cache = {}
        self.p = None
        self.emb = emb
        if emb is not None:
            texts = []
            for t in turns:
                s = t["speaker"] + ": " + t["text"]
                if p["dcap"] and t.get("blip_caption"):
                    s += " [shares a photo: " + t["blip_caption"] + "]"
                texts.append(s)
            self.DS, self.Dn = emb.sum_encode(texts)

    def shift(self, M, k):
        """row i gets row i-k (k>0: previous turns) if in the same session, else 0."""
        out = np.zeros_like(M)
        n = len(M)
        if k > 0:
            out[k:] = M[:-k]
            ok = self.sess[k:] == self.sess[:-k]
            out[k:][~ok] = 0
        else:
            k = -k
            out[:-k] = M[k:]
            ok = self.sess[:-k] == self.sess[k:]
            out[:-k][~ok] = 0
        return out

    def build(self, p):
        T = self.T
        TF = T.copy()
        if p["wp"]:
            TF += p["wp"] * self.shift(T, 1)
        if p["wp2"]:
            TF += p["wp2"] * self.shift(T, 2)
        if p["wn"]:
            TF += p["wn"] * self.shift(T, -1)
        N = len(T)
        dl = TF.sum(1)
        avg = dl.mean()
        df = (T > 0).sum(0)
        if p["idf"] == "fts5":
            idf = np.log((N - df + 0.5) / (df + 0.5))
            idf = np.where(idf <= 0, 1e-6, idf)
        else:
            idf = np.log(1 + (N - df + 0.5) / (df + 0.5))
        self.idf = idf.astype(np.float32)
        k1, b = p["k1"], p["b"]
        self.W = TF * (k1 + 1) / (TF + k1 * (1 - b + b * dl / avg)[:, None]) * self.idf[None]
        # session docs
        if p["gamma"]:
            ns = self.sess.max() + 1
            ST = np.zeros((ns, T.shape[1]), np.float32)
            np.add.at(ST, self.sess, T)
            sdl = ST.sum(1); sdf = (ST > 0).sum(0)
            sidf = np.log(1 + (ns - sdf + 0.5) / (sdf + 0.5))
            self.SW = ST * (k1 + 1) / (ST + k1 * (1 - b + b * sdl / sdl.mean())[:, None]) * sidf[None]
        if self.emb is not None:
            A = self.DS.copy()
            if p["dwp"]:
                A += p["dwp"] * self.shift(self.DS, 1)
            if p["dwn"]:
                A += p["dwn"] * self.shift(self.DS, -1)
            self.D = l2n(A)
            if p["dgamma"]:
                ns = self.sess.max() + 1
                SS = np.zeros((ns, self.DS.shape[1]), np.float32)
                np.add.at(SS, self.sess, self.DS)
                self.SD = l2n(SS)
        self.p = p

    # -------------------------------------------------------------- query
    def qterms(self, q, p):
        st = words(q, p["stem"])
        raw = words(q, False)
        keep = []
        for s, r in zip(st, raw):
            if p["qstop"] and r in STOP:
                continue
            if p["qnames"] == "drop" and r in self.names:
                continue
            keep.append(s)
        return keep

    def bm25(self, terms, weights=None):
        v = np.zeros(len(self.vocab), np.float32)
        for w in terms:
            j = self.vocab.get(w)
            if j is not None:
                v[j] = 1.0 if weights is None else weights[w]
        return self.W @ v

    def score(self, q, p):
        terms = self.qterms(q, p)
        sb_ = self.bm25(terms)
        if p["prf_docs"]:
            sb_ = self.prf(sb_, terms, p)
        qtext = q
        if p["dqstop"]:
            qtext = " ".join(w for w in words(q, False) if w not in STOP)
        if p["fusion"] == "rrf":
            F = (1 - p["alpha"]) * _rrf(sb_, p["rrf_k"])
            if p["alpha"] and self.emb is not None:
                F = F + p["alpha"] * _rrf(self.D @ self.emb.encode([qtext])[0], p["rrf_k"])
            F = _norm(F, p["norm"])
        else:
            F = (1 - p["alpha"]) * _norm(sb_, p["norm"])
            if p["alpha"] and self.emb is not None:
                qv = self.emb.encode([qtext])[0]
                F = F + p["alpha"] * _norm(self.D @ qv, p["norm"])
        if p["gamma"]:
            v = np.zeros(len(self.vocab), np.float32)
            for w in terms:
                j = self.vocab.get(w)
                if j is not None:
                    v[j] = 1
            ss = self.SW @ v
            F = F + p["gamma"] * _norm(ss, p["norm"])[self.sess]
        if p["dgamma"] and self.emb is not None:
            qv = self.emb.encode([q])[0]
            F = F + p["dgamma"] * _norm(self.SD @ qv, p["norm"])[self.sess]
        if p["prop_p"] or p["prop_n"]:
            G = F.copy()
            G[1:] += p["prop_p"] * F[:-1] * self.same_prev[1:]
            G[:-1] += p["prop_n"] * F[1:] * self.same_next[:-1]
            F = G
        if p["sb"]:
            raw = set(words(q, False))
            hit = [i for i, n in enumerate(self.names) if n in raw]
            if len(hit) == 1:
                F = F + p["sb"] * (self.spkr == hit[0])
        if p["wdate"]:
            qd = query_dates(q)
            if qd:
                dm = np.array([date_match(qd, d, p["date_tau"]) for d in self.sdate], np.float32)
                F = F + p["wdate"] * dm
        if p["div"]:
            F = self.diversify(F, p)
        return F

    def diversify(self, F, p):
        """greedy re-ranking of the top div_n: a candidate loses `div` for each already chosen
        turn of the same session within div_win positions."""
        n = p["div_n"]
        top = list(np.argsort(-F, kind="stable")[:n])
        chosen = []
        base = F.copy()
        out = F.copy()
        lo = F[top[-1]] if top else 0
        rank_scores = []
        while top:
            best, bi = None, None
            for k, i in enumerate(top):
                pen = sum(1 for j in chosen if self.sess[j] == self.sess[i] and abs(j - i) <= p["div_win"])
                s = base[i] - p["div"] * pen
                if best is None or s > best:
                    best, bi = s, k
            chosen.append(top.pop(bi))
        for r, i in enumerate(chosen):
            out[i] = lo + (n - r)  # keeps the chosen order above everything else
        return out

    def prf(self, s, terms, p):
        top = np.argsort(-s, kind="stable")[: p["prf_docs"]]
        # term weights: sum of normalised tf*idf in the top docs (own text only)
        T = self.T[top]
        w = (T / np.maximum(T.sum(1, keepdims=True), 1)).sum(0) * self.idf
        for t in terms:
            j = self.vocab.get(t)
            if j is not None:
                w[j] = 0
        sel = np.argsort(-w)[: p["prf_terms"]]
        v = np.zeros(len(self.vocab), np.float32)
        if w[sel].max() > 0:
            v[sel] = w[sel] / w[sel].max()
        return s + p["prf_w"] * (self.W @ v)


def _rrf(s, k):
    r = np.empty(len(s))
    r[np.argsort(-s, kind="stable")] = np.arange(len(s))
    return 1.0 / (k + r + 1)


def _norm(s, how):
    if how == "z":
        return (s - s.mean()) / (s.std() + 1e-9)
    if how == "minmax":
        return (s - s.min()) / (s.max() - s.min() + 1e-9)
    raise ValueError(how)


class Runner:
    """Caches ConvIndex objects; evaluates a parameter dict over conversations."""

    STRUCT_KEYS = ("spk_prefix", "caption", "dstop", "dcap", "stem")

    def __init__(self, convs, emb=None):
        self.convs = convs
        self.emb = emb if emb is not None else Emb()
        self.idx = {}

    def index(self, c, p):
        key = (c["id"],) + tuple(p[k] for k in self.STRUCT_KEYS)
        ci = self.idx.get(key)
        if ci is None:
            ci = self.idx[key] = ConvIndex(c, p, self.emb)
        ci.build(p)
        return ci

    def score_fn(self, p):
        def f(c):
            ci = self.index(c, p)
            return np.stack([ci.score(q["question"], p) for q in c["qa"]])
        return f
