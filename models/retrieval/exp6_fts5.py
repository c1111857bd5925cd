"""Can the lexical part run on SQLite FTS5's own bm25()?  FTS5's bm25(tbl, w_own, w_prev, w_prev2, w_next)
(fts5_aux.c) computes, per row:  sum_phrases idf * f*(k1+1)/(f + k1*(1-b+b*D/avgdl))  with
  f     = sum over columns of (column weight x occurrences in that column)   [BM25F-style]
  D     = row length in tokens over ALL columns, UNweighted; avgdl = mean of D
  idf   = log((N - nHit + 0.5)/(nHit + 0.5)), clamped to 1e-6 when <= 0, nHit = rows with the
          phrase in ANY column (so neighbour columns inflate df)
  k1=1.2, b=0.75 fixed.
This script emulates exactly that for the turn table (4 columns: text, prev, prev2, next) and for a
session table (1 column), and swaps them into the final method."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib import *  # noqa
import proto
from proto import Memory, StaticModel, query_terms, z, raw_tokens, query_dates, date_match


class FTS5Memory(Memory):
    def __init__(self, turns, speakers, model, P=proto.PARAMS, turn_fts5=True, sess_fts5=True, k1=1.2, b=0.75):
        super().__init__(turns, speakers, model, P)
        self.turn_fts5, self.sess_fts5, self.fk1, self.fb = turn_fts5, sess_fts5, k1, b
        # raw (unweighted) row length over all columns, and df over any column
        n = self.N
        lex = []
        for t in turns:
            s = t["text"] + (" [shares a photo: " + t["blip_caption"] + "]" if t.get("blip_caption") else "")
            lex.append(proto.doc_terms(s))
        own_len = np.array([len(x) for x in lex], float)
        D = own_len.copy()
        self.anydf = Counter()
        for i in range(n):
            terms = set(lex[i])
            for k, w in ((-1, P["wp"]), (-2, P["wp2"]), (1, P["wn"])):
                j = i + k
                if w and 0 <= j < n and self.sess[j] == self.sess[i]:
                    D[i] += own_len[j]
                    terms |= set(lex[j])
            self.anydf.update(terms)
        self.D_raw = D
        self.avg_raw = D.mean()

    def bm25(self, terms):
        if not self.turn_fts5:
            return super().bm25(terms)
        k1, b = self.fk1, self.fb
        s = np.zeros(self.N)
        for t in terms:
            nh = self.anydf.get(t, 0)
            if nh == 0:
                continue
            idf = math.log((self.N - nh + 0.5) / (nh + 0.5))
            idf = idf if idf > 0 else 1e-6
            for i, f in self.post.get(t, ()):
                s[i] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * self.D_raw[i] / self.avg_raw))
        return s

    def bm25_sessions(self, terms):
        if not self.sess_fts5:
            return super().bm25_sessions(terms)
        k1, b = self.fk1, self.fb
        s = np.zeros(self.ns)
        for t in terms:
            nh = self.sdf.get(t, 0)
            if nh == 0:
                continue
            idf = math.log((self.ns - nh + 0.5) / (nh + 0.5))
            idf = idf if idf > 0 else 1e-6
            for j, f in self.spost.get(t, ()):
                s[j] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * self.sdl[j] / self.savgdl))
        return s


import math  # noqa: E402

if __name__ == "__main__":
    convs = load()
    model = StaticModel()
    print("| lexical scoring | any@10 | all@10 | ndcg@10 |\n|---|---:|---:|---:|")
    for name, kw in [
        ("hand-written (final: weighted length, own-text df, b=0.5; Lucene idf for sessions)", None),
        ("FTS5 bm25() emulated for turns (k1 1.2, b .75), hand-written sessions", dict(turn_fts5=True, sess_fts5=False)),
        ("FTS5 for turns and sessions", dict(turn_fts5=True, sess_fts5=True)),
        ("FTS5 formula but b=0.5 (not settable in FTS5; for reference)", dict(turn_fts5=True, sess_fts5=False, b=0.5)),
    ]:
        def f(c):
            m = Memory(c["turns"], c["speakers"], model) if kw is None else FTS5Memory(c["turns"], c["speakers"], model, **kw)
            return np.stack([m.scores(q["question"]) for q in c["qa"]])
        r = summarize(evaluate(convs, f), ("any@10", "all@10", "ndcg@10"))
        print(f"| {name} | {r['any@10']:.3f} | {r['all@10']:.3f} | {r['ndcg@10']:.3f} |", flush=True)
