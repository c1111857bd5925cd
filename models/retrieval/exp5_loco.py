"""Leave-one-conversation-out: choose the parameters by coordinate descent on 4 conversations
(criterion: any@10 + all@10, micro-averaged over their questions), test on the 5th.
Also: one-at-a-time sensitivity of every parameter around the final values."""
import itertools
import json
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
FINAL.update(dwp=0.0, spk_prefix=False)

GRID = {
    "wp": [0.0, 0.5, 0.75, 1.0, 1.5],
    "wp2": [0.0, 0.25, 0.5, 0.75, 1.0],
    "wn": [0.0, 0.25, 0.5, 0.75, 1.0],
    "b": [0.3, 0.5, 0.75, 0.9],
    "alpha": [0.0, 0.2, 0.3, 0.4, 0.5, 0.6],
    "dwp": [0.0, 0.25, 0.5, 1.0],
    "sb": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
    "wdate": [0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
    "gamma": [0.0, 0.2, 0.4, 0.6, 0.8],
}
_cache = {}


def rows_for(p):
    key = tuple(sorted((k, v) for k, v in p.items()))
    if key not in _cache:
        _cache[key] = evaluate(convs, R.score_fn(p))
    return _cache[key]


def crit(rows, cids):
    rs = [r for r in rows if r["conv"] in cids]
    return np.mean([r["any@10"] for r in rs]) + np.mean([r["all@10"] for r in rs])


def coord_descent(cids, start, passes=3):
    p = dict(start)
    best = crit(rows_for(p), cids)
    for _ in range(passes):
        changed = False
        for k, vals in GRID.items():
            for v in vals:
                q = dict(p); q[k] = v
                s = crit(rows_for(q), cids)
                if s > best + 1e-9:
                    best, p, changed = s, q, True
        if not changed:
            break
    return p, best


def main():
    ids = [c["id"] for c in convs]
    naive = dict(FINAL)
    naive.update(wp=0.0, wp2=0.0, wn=0.0, b=0.75, alpha=0.0, dwp=0.0, sb=0.0, wdate=0.0, gamma=0.0)
    out = {"folds": []}
    final_rows = rows_for(FINAL)
    print("LOCO (params chosen on the other 4 conversations by coordinate descent from a neutral start)")
    print("| held-out | n | any@10 (LOCO) | all@10 (LOCO) | any@10 (final params) | all@10 (final params) | chosen params |")
    print("|---|---:|---:|---:|---:|---:|---|")
    loco_rows = []
    for h in ids:
        train = set(ids) - {h}
        p, _ = coord_descent(train, naive)
        rs = [r for r in rows_for(p) if r["conv"] == h]
        fr = [r for r in final_rows if r["conv"] == h]
        loco_rows += rs
        ch = {k: p[k] for k in GRID}
        out["folds"].append({"held_out": h, "params": ch, **summarize(rs)})
        print(f"| {h} | {len(rs)} | {summarize(rs)['any@10']:.3f} | {summarize(rs)['all@10']:.3f} | "
              f"{summarize(fr)['any@10']:.3f} | {summarize(fr)['all@10']:.3f} | {json.dumps(ch)} |", flush=True)
    s = summarize(loco_rows); f = summarize(final_rows)
    print(f"| pooled | {len(loco_rows)} | {s['any@10']:.3f} | {s['all@10']:.3f} | {f['any@10']:.3f} | {f['all@10']:.3f} | |")
    p_all, _ = coord_descent(set(ids), naive)
    print("coordinate descent on all 5 from the neutral start:", json.dumps({k: p_all[k] for k in GRID}),
          summarize(rows_for(p_all)))
    out["pooled"] = s
    # sensitivity
    print("\nSensitivity: one parameter changed, others at the final values (any@10 / all@10 on all 760)")
    print("| param | final | " + " | ".join(["values ..."]) + " |")
    for k, vals in GRID.items():
        cells = []
        for v in vals:
            q = dict(FINAL); q[k] = v
            r = summarize(rows_for(q))
            mark = "**" if v == FINAL[k] else ""
            cells.append(f"{mark}{v}: {r['any@10']:.3f}/{r['all@10']:.3f}{mark}")
        print(f"| {k} | {FINAL[k]} | " + " · ".join(cells) + " |", flush=True)
    Path("/tmp/loco.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
