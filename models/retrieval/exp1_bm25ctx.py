"""Experiment 1: BM25 with context fields (prev/next turn, session date), speaker handling."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *

convs = load()


def prep(c, cap=True, spk=True):
    toks = []
    for t in c["turns"]:
        s = (t["speaker"] + ": " if spk else "") + t["text"]
        if cap and t.get("blip_caption"):
            s += " " + t["blip_caption"]
        toks.append(words(s))
    vocab = {}
    for d in toks:
        for w in d:
            vocab.setdefault(w, len(vocab))
    N, V = len(toks), len(vocab)
    T = np.zeros((N, V), np.float32)
    for i, d in enumerate(toks):
        for w, n in Counter(d).items():
            T[i, vocab[w]] = n
    sess = np.array([t["session"] for t in c["turns"]])
    P = np.zeros_like(T); P[1:] = T[:-1]; P[1:][sess[1:] != sess[:-1]] = 0
    Nx = np.zeros_like(T); Nx[:-1] = T[1:]; Nx[:-1][sess[:-1] != sess[1:]] = 0
    # date field
    dvocab = vocab
    D = np.zeros_like(T)
    for i, t in enumerate(c["turns"]):
        for w in words(t["date"]):
            if w in dvocab:
                D[i, dvocab[w]] += 1
    spkr = np.array([c["speakers"].index(t["speaker"]) if t["speaker"] in c["speakers"] else -1 for t in c["turns"]])
    return dict(T=T, P=P, N=Nx, D=D, vocab=vocab, sess=sess, spkr=spkr)


def scores(c, X, k1=1.2, b=0.75, wp=0.0, wn=0.0, wd=0.0, qstop=False, spk_boost=0.0, prop_p=0.0, prop_n=0.0, idf_from="own"):
    T = X["T"]
    TF = T + wp * X["P"] + wn * X["N"] + wd * X["D"]
    dl = TF.sum(1); avg = dl.mean()
    df = ((T if idf_from == "own" else TF) > 0).sum(0)
    Nd = len(T)
    idf = np.log((Nd - df + 0.5) / (df + 0.5)); idf = np.where(idf <= 0, 1e-6, idf)
    W = TF * (k1 + 1) / (TF + k1 * (1 - b + b * dl / avg)[:, None]) * idf[None]
    out = []
    names = [n.lower() for n in c["speakers"]]
    for q in c["qa"]:
        qw = words(q["question"])
        if qstop:
            raw = words(q["question"], False)
            qw = [s for s, r in zip(qw, raw) if r not in STOP]
        v = np.zeros(len(X["vocab"]), np.float32)
        for w in qw:
            j = X["vocab"].get(w)
            if j is not None:
                v[j] = 1
        s = W @ v
        if prop_p or prop_n:
            s2 = s.copy()
            same_p = np.r_[False, X["sess"][1:] == X["sess"][:-1]]
            same_n = np.r_[X["sess"][:-1] == X["sess"][1:], False]
            s2[1:] += prop_p * s[:-1] * same_p[1:]
            s2[:-1] += prop_n * s[1:] * same_n[:-1]
            s = s2
        if spk_boost:
            raw = set(words(q["question"], False))
            hit = [i for i, n in enumerate(names) if n in raw]
            if len(hit) == 1:
                s = s + spk_boost * (X["spkr"] == hit[0]) * s.max()
        out.append(s)
    return np.stack(out)


def run(label, cap=True, spk=True, **kw):
    cache = {}
    def f(c):
        key = (c["id"], cap, spk)
        if key not in cache:
            cache[key] = prep(c, cap, spk)
        return scores(c, cache[key], **kw)
    r = summarize(evaluate(convs, f))
    print(f"{label:50s} any@10={r['any@10']:.3f} all@10={r['all@10']:.3f}", flush=True)
    return r


if __name__ == "__main__":
    run("base spk+cap")
    run("no spk", spk=False)
    run("qstop", qstop=True)
    for wp in (0.3, 0.5, 1.0):
        run(f"wp={wp}", wp=wp)
    for wn in (0.3, 0.5, 1.0):
        run(f"wn={wn}", wn=wn)
    for wp, wn in ((0.5, 0.3), (0.5, 0.5), (1, 0.5), (1, 1)):
        run(f"wp={wp} wn={wn}", wp=wp, wn=wn)
    for wd in (0.5, 1, 2):
        run(f"wd={wd}", wd=wd)
    for pp, pn in ((0.3, 0), (0.5, 0), (0.5, 0.3), (0.7, 0.3), (0.3, 0.3)):
        run(f"prop p={pp} n={pn}", prop_p=pp, prop_n=pn)
    for sb in (0.1, 0.2, 0.3, 0.5):
        run(f"spk_boost={sb}", spk_boost=sb)
    for k1 in (0.6, 0.9, 1.5, 2.0):
        run(f"k1={k1}", k1=k1)
    for b in (0.3, 0.5, 0.9, 1.0):
        run(f"b={b}", b=b)
