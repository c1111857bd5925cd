"""Experiment 3: fusion of context-BM25 and context-dense, speaker boost after fusion."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *
import exp1_bm25ctx as X1
import exp2_dense as X2

convs = X1.convs
_cache = {}


def comps(c, bkw, dkw):
    key = (c["id"], tuple(sorted(bkw.items())), tuple(sorted(dkw.items())))
    if key not in _cache:
        if ("prep", c["id"]) not in _cache:
            _cache[("prep", c["id"])] = X1.prep(c)
        B = X1.scores(c, _cache[("prep", c["id"])], **bkw)
        D = X2.dense_scores(c, **dkw)
        _cache[key] = (B, D)
    return _cache[key]


def norm(S, how):
    if how == "z":
        return (S - S.mean(1, keepdims=True)) / (S.std(1, keepdims=True) + 1e-9)
    if how == "minmax":
        mn, mx = S.min(1, keepdims=True), S.max(1, keepdims=True)
        return (S - mn) / (mx - mn + 1e-9)
    if how == "max":
        return S / (S.max(1, keepdims=True) + 1e-9)
    raise ValueError(how)


def rrf(S, k):
    order = np.argsort(-S, axis=1, kind="stable")
    R = np.empty_like(order); rows = np.arange(S.shape[0])[:, None]
    R[rows, order] = np.arange(S.shape[1])[None]
    return 1.0 / (k + R + 1)


def speaker_mask(c):
    names = [x.lower() for x in c["speakers"]]
    spkr = np.array([c["speakers"].index(t["speaker"]) if t["speaker"] in c["speakers"] else -1 for t in c["turns"]])
    M = np.zeros((len(c["qa"]), len(c["turns"])), np.float32)
    for qi, q in enumerate(c["qa"]):
        raw = set(words(q["question"], False))
        hit = [i for i, nm in enumerate(names) if nm in raw]
        if len(hit) == 1:
            M[qi] = spkr == hit[0]
    return M


def fused(c, bkw, dkw, alpha=0.3, how="z", sb=0.0, rrf_k=None):
    B, D = comps(c, bkw, dkw)
    if rrf_k:
        F = (1 - alpha) * rrf(B, rrf_k) + alpha * rrf(D, rrf_k)
        F = norm(F, "z")
    else:
        F = (1 - alpha) * norm(B, how) + alpha * norm(D, how)
    if sb:
        F = F + sb * speaker_mask(c)
    return F


def run(label, rows_out=False, **kw):
    rows = evaluate(convs, lambda c: fused(c, **kw))
    r = summarize(rows)
    print(f"{label:55s} any@10={r['any@10']:.3f} all@10={r['all@10']:.3f}", flush=True)
    return rows if rows_out else r


if __name__ == "__main__":
    bkw = dict(qstop=True, wp=1.0, wn=0.5, b=0.5)
    dkw = dict(wp=0.5)
    run("bm25 only, no sb", bkw=bkw, dkw=dkw, alpha=0)
    for sb in (0.5, 1.0, 1.5, 2.0):
        run(f"bm25 only z sb={sb}", bkw=bkw, dkw=dkw, alpha=0, sb=sb)
    for how in ("z", "minmax"):
        for a in (0.1, 0.2, 0.3, 0.4, 0.5):
            for sb in ((0.5, 1.0, 1.5) if how == "z" else (0.1, 0.2, 0.3)):
                run(f"{how} alpha={a} sb={sb}", bkw=bkw, dkw=dkw, alpha=a, how=how, sb=sb)
    for k in (10, 30, 60):
        for a in (0.3, 0.5):
            run(f"rrf k={k} a={a} sb=1", bkw=bkw, dkw=dkw, alpha=a, rrf_k=k, sb=1.0)
