"""Experiment 2: static-embedding (m2v) dense variants: speaker prefix, caption, neighbour context,
query stopword stripping, speaker boost."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *

convs = load()
E = Emb()


def turn_str(t, spk=True, cap=True):
    s = (t["speaker"] + ": " if spk else "") + t["text"]
    if cap and t.get("blip_caption"):
        s += " [shares a photo: " + t["blip_caption"] + "]"
    return s


def dense_scores(c, wp=0.0, wn=0.0, qstop=False, mode="sum", spk_boost=0.0, prop_p=0.0, prop_n=0.0):
    turns = c["turns"]
    S, n = E.sum_encode([turn_str(t) for t in turns])
    sess = np.array([t["session"] for t in turns])
    sp = np.r_[False, sess[1:] == sess[:-1]]
    sn = np.r_[sess[:-1] == sess[1:], False]
    own = l2n(S / np.maximum(n, 1)[:, None])
    if mode == "sum":  # mean over tokens of (own + w*neighbour), i.e. weighted token pooling
        A = S.copy(); A[1:] += wp * S[:-1] * sp[1:, None]; A[:-1] += wn * S[1:] * sn[:-1, None]
        D = l2n(A)
    else:  # mix of normalised vectors
        A = own.copy(); A[1:] += wp * own[:-1] * sp[1:, None]; A[:-1] += wn * own[1:] * sn[:-1, None]
        D = l2n(A)
    qs = []
    for q in c["qa"]:
        qq = q["question"]
        if qstop:
            qq = " ".join(w for w in words(qq, False) if w not in STOP)
        qs.append(qq)
    Q = E.encode(qs)
    Sc = Q @ D.T
    if prop_p or prop_n:
        S2 = Sc.copy()
        S2[:, 1:] += prop_p * Sc[:, :-1] * sp[1:]
        S2[:, :-1] += prop_n * Sc[:, 1:] * sn[:-1]
        Sc = S2
    if spk_boost:
        names = [x.lower() for x in c["speakers"]]
        spkr = np.array([c["speakers"].index(t["speaker"]) if t["speaker"] in c["speakers"] else -1 for t in turns])
        for qi, q in enumerate(c["qa"]):
            raw = set(words(q["question"], False))
            hit = [i for i, nm in enumerate(names) if nm in raw]
            if len(hit) == 1:
                Sc[qi] += spk_boost * (spkr == hit[0])
    return Sc


def run(label, **kw):
    r = summarize(evaluate(convs, lambda c: dense_scores(c, **kw)))
    print(f"{label:50s} any@10={r['any@10']:.3f} all@10={r['all@10']:.3f}", flush=True)
    return r


if __name__ == "__main__":
    run("dense spk+cap")
    run("qstop", qstop=True)
    for wp, wn in ((0.5, 0), (1, 0), (0.5, 0.3), (1, 0.5)):
        run(f"sum wp={wp} wn={wn}", wp=wp, wn=wn)
        run(f"vec wp={wp} wn={wn}", wp=wp, wn=wn, mode="vec")
    for sb in (0.02, 0.05, 0.1):
        run(f"wp1 wn.5 spk_boost={sb}", wp=1, wn=0.5, spk_boost=sb)
