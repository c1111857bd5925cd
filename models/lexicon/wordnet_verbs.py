"""Writes `common_verbs.txt`: common English verbs, each with its past forms, read from
WordNet 3.0 (Princeton University; its licence is in `LICENSE`). The extractor reads a word
after "and" in "I run a pottery studio and sell on Etsy" as a verb of the same subject when
it is one of these.

A word is listed when:
- it is a single lowercase word that the built-in embedder's vocabulary holds whole
  (`models/minilm-l6-m2v-256/vocab.txt`), which keeps the list to common words;
- its senses as a verb were tagged in the SemCor corpus (`cntlist.rev`) at least twice,
  and more often than its senses as a noun and as an adjective, so that a word read
  mostly as a thing ("dog", "roll", "fish") or a quality is not taken for a verb;
- it is not an auxiliary or a modal, nor an inflected form of another word.

Each output line is a verb, then its past forms: the regular one ("bake baked", "study
studied") and the irregular ones of `verb.exc` ("sell selled sold"; a regular form that is
no word is never met).

Reproduce (Debian's `wordnet-base` package holds the database):

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wordnet
    python3 models/lexicon/wordnet_verbs.py /tmp/wordnet/usr/share/wordnet > models/lexicon/common_verbs.txt
"""

import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
AUXILIARIES = {
    "be", "have", "do", "will", "shall", "can", "may", "might", "must", "should", "would",
    "could", "ought", "need", "dare", "let",
}
VOWELS = "aeiou"


def regular_past(verb):
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in VOWELS:
        return verb[:-1] + "ied"
    return verb + "ed"


def main(wordnet):
    wordnet = pathlib.Path(wordnet)
    vocab = set((ROOT / "models/minilm-l6-m2v-256/vocab.txt").read_text().split())
    tagged = collections.Counter()
    for line in (wordnet / "cntlist.rev").read_text().splitlines():
        key, _, count = line.split()
        lemma, sense = key.split("%", 1)
        pos = "3" if sense[0] == "5" else sense[0]
        tagged[lemma, pos] += int(count)
    irregular = collections.defaultdict(set)
    inflected = set()
    for line in (wordnet / "verb.exc").read_text().splitlines():
        form, base = line.split()[:2]
        inflected.add(form)
        if not form.endswith(("ing", "s")) or form.endswith("ss"):
            irregular[base].add(form)
    for line in (wordnet / "noun.exc").read_text().splitlines():
        inflected.add(line.split()[0])
    verbs = []
    for line in (wordnet / "index.verb").read_text().splitlines():
        if line.startswith(" "):
            continue
        lemma = line.split()[0]
        verb = tagged[lemma, "2"]
        if (
            re.fullmatch(r"[a-z]+", lemma)
            and lemma in vocab
            and lemma not in AUXILIARIES
            and lemma not in inflected
            and verb >= 2
            and verb > tagged[lemma, "1"]
            and verb > tagged[lemma, "3"]
        ):
            verbs.append(lemma)
    for lemma in sorted(verbs):
        pasts = sorted(irregular.get(lemma, set()) | {regular_past(lemma)})
        print(" ".join([lemma, *pasts]))


if __name__ == "__main__":
    main(sys.argv[1])
