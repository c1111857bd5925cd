"""Experiment 7: two more query-analysis / re-ranking ideas on top of the final method:
 (a) temporal questions ('when ...', 'how long ...') favour turns containing a time expression;
 (b) MaxSim re-ranking: mean over query word-pieces (stopwords dropped) of the max cosine to the
     turn's word-pieces, with the static token vectors; added as a z-scored feature (all turns)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *  # noqa
import proto
from proto import Memory, StaticModel, z, l2n

TIME_RX = re.compile(r"\b(yesterday|today|tonight|tomorrow|ago|last|next|recently|week|weekend|month|year|"
                     r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                     r"january|february|march|april|may|june|july|august|september|october|november|december|"
                     r"(19|20)\d\d|since|earlier|later)\b", re.I)
TEMPORAL_Q = re.compile(r"^\s*(when|how long)\b", re.I)

convs = load()
model = StaticModel()


class M7(Memory):
    def __init__(self, turns, speakers, model, wt=0.0, wms=0.0):
        super().__init__(turns, speakers, model)
        self.wt, self.wms = wt, wms
        self.has_time = np.array([bool(TIME_RX.search(t["text"])) for t in turns], float)
        if wms:
            self.tokvecs = []
            for t in turns:
                s = t["text"] + (" [shares a photo: " + t["blip_caption"] + "]" if t.get("blip_caption") else "")
                ids = [i for i in proto.RE.tokenize(s, model.vocab) if i not in model.skip]
                self.tokvecs.append(l2n(model.table[ids]) if ids else np.zeros((1, model.table.shape[1])))

    def scores(self, q):
        F = super().scores(q)
        if self.wt and TEMPORAL_Q.search(q):
            F = F + self.wt * self.has_time
        if self.wms:
            words_ = [w for w in proto.raw_tokens(q) if w not in proto.STOP]
            ids = [i for i in proto.RE.tokenize(" ".join(words_), model.vocab) if i not in model.skip]
            if ids:
                Q = l2n(model.table[ids])
                ms = np.array([(Q @ T.T).max(1).mean() for T in self.tokvecs])
                F = F + self.wms * z(ms)
        return F


def run(label, **kw):
    def f(c):
        m = M7(c["turns"], c["speakers"], model, **kw)
        return np.stack([m.scores(q["question"]) for q in c["qa"]])
    rows = evaluate(convs, f)
    r = summarize(rows)
    r2 = summarize([x for x in rows if x["cat"] == 2])
    print(f"| {label} | {r['any@10']:.3f} | {r['all@10']:.3f} | {r2['any@10']:.3f} | {r2['all@10']:.3f} |", flush=True)


if __name__ == "__main__":
    print("| variant | any@10 | all@10 | cat2 any@10 | cat2 all@10 |\n|---|---:|---:|---:|---:|")
    run("final")
    for wt in (0.25, 0.5, 1.0):
        run(f"+ time-expression bonus {wt} for when/how-long questions", wt=wt)
    for wms in (0.1, 0.2, 0.4):
        run(f"+ MaxSim feature {wms}", wms=wms)
