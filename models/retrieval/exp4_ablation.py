"""Ablations around the final method (proto.PARAMS), measured with the configurable pipeline.
Prints markdown tables: cumulative build-up, leave-one-component-out, variants tried on top."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *  # noqa
from pipeline import DEFAULT, Runner

import proto

convs = load()
R = Runner(convs)
FINAL = dict(DEFAULT)
FINAL.update(proto.PARAMS)
FINAL["dwp"] = 0.0
FINAL["spk_prefix"] = False


def m(p):
    rows = evaluate(convs, R.score_fn(p))
    return summarize(rows, ("any@10", "all@10", "any@5", "ndcg@10"))


def line(name, r, ref=None):
    d = ""
    if ref is not None:
        d = f" | {r['any@10'] - ref['any@10']:+.3f} | {r['all@10'] - ref['all@10']:+.3f}"
    else:
        d = " | | "
    return f"| {name} | {r['any@10']:.3f} | {r['all@10']:.3f}{d} | {r['ndcg@10']:.3f} |"


HDR = "| step | any@10 | all@10 | Δany@10 | Δall@10 | ndcg@10 |\n|---|---:|---:|---:|---:|---:|"

if __name__ == "__main__":
    final = m(FINAL)
    print("## Cumulative build-up (each row adds one idea to the row above)\n")
    print(HDR)
    p = dict(FINAL)
    p.update(spk_prefix=True, caption=False, qstop=False, wp=0.0, wn=0.0, wp2=0.0, b=0.75, sb=0.0, alpha=0.0, wdate=0.0, gamma=0.0)
    steps = [
        ("BM25 'Speaker: text', porter, k1=1.2 b=0.75, all query tokens", {}),
        ("+ image caption in the turn text", dict(caption=True)),
        ("+ query stopword removal", dict(qstop=True)),
        ("+ previous turn as a field, wp=1.0", dict(wp=1.0)),
        ("+ next turn field, wn=0.5", dict(wn=0.5)),
        ("+ turn-before-previous field, wp2=0.5", dict(wp2=0.5)),
        ("+ b=0.5", dict(b=0.5)),
        ("+ speaker bonus sb=1.5 (z units)", dict(sb=1.5)),
        ("- speaker name prefix from the lexical text (the bonus replaces it)", dict(spk_prefix=False)),
        ("+ dense static embedding, alpha=0.4 (z-score fusion)", dict(alpha=0.4)),
        ("+ date bonus wdate=1.5, tau=3 d", dict(wdate=1.5)),
        ("+ session-level BM25, gamma=0.4  (= final)", dict(gamma=0.4)),
    ]
    prev = None
    for name, upd in steps:
        p.update(upd)
        r = m(p)
        print(line(name, r, prev))
        prev = r

    print("\n## Leave one component out of the final method (Δ vs final)\n")
    print(HDR)
    print(line("final", final))
    for name, upd in [
        ("- image caption (lexical and dense)", dict(caption=False, dcap=False)),
        ("- query stopword removal", dict(qstop=False)),
        ("- all neighbour fields (wp=wp2=wn=0)", dict(wp=0.0, wp2=0.0, wn=0.0)),
        ("- previous turn field (wp=0)", dict(wp=0.0)),
        ("- turn-before-previous field (wp2=0)", dict(wp2=0.0)),
        ("- next turn field (wn=0)", dict(wn=0.0)),
        ("- speaker bonus (sb=0)", dict(sb=0.0)),
        ("- dense (alpha=0)", dict(alpha=0.0)),
        ("- date bonus (wdate=0)", dict(wdate=0.0)),
        ("- session BM25 (gamma=0)", dict(gamma=0.0)),
        ("- porter stemming", dict(stem=False)),
        ("+ speaker name prefix in the lexical text ('Speaker: text')", dict(spk_prefix=True)),
        ("b=0.75 (FTS5 default)", dict(b=0.75)),
    ]:
        q = dict(FINAL); q.update(upd)
        print(line(name, m(q), final))

    print("\n## Variants tried on top of the final method and not kept (Δ vs final)\n")
    print(HDR)
    for name, upd in [
        ("Lucene idf log(1+(N-n+.5)/(n+.5)) instead of FTS5 idf", dict(idf="lucene")),
        ("stopwords also removed from the documents", dict(dstop=True)),
        ("speaker names removed from the BM25 query", dict(qnames="drop")),
        ("query stopwords also removed for the dense query", dict(dqstop=True)),
        ("dense turn vector + 0.5 x previous turn (dwp=0.5)", dict(dwp=0.5)),
        ("dense turn vector + 0.5 x next turn (dwn=0.5)", dict(dwn=0.5)),
        ("RRF fusion (k=60) of BM25F and dense instead of z-scores", dict(fusion="rrf", rrf_k=60)),
        ("RRF fusion (k=20)", dict(fusion="rrf", rrf_k=20)),
        ("min-max instead of z-score normalisation (sb .3, wdate .3, gamma .1)",
         dict(norm="minmax", sb=0.3, wdate=0.3, gamma=0.1)),
        ("RM3-like PRF: 10 top turns, 10 terms, weight 0.3", dict(prf_docs=10, prf_terms=10, prf_w=0.3)),
        ("neighbour score propagation +0.2 prev, +0.1 next", dict(prop_p=0.2, prop_n=0.1)),
        ("session dense score (mean vector of the session), 0.2", dict(dgamma=0.2)),
        ("adjacency diversification (greedy, -0.5 per chosen neighbour)", dict(div=0.5)),
        ("k1=0.8", dict(k1=0.8)),
        ("k1=2.0", dict(k1=2.0)),
    ]:
        q = dict(FINAL); q.update(upd)
        print(line(name, m(q), final))
