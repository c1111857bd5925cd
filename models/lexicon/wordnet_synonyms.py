"""Writes `noun_synonyms.txt`: groups of common English nouns that name the same thing in
their most frequent sense, read from WordNet 3.0 (Princeton University; its licence is in
`LICENSE`).

A word joins a group when:
- it is a single lowercase word that the built-in embedder's vocabulary holds whole
  (`models/minilm-l6-m2v-256/vocab.txt`), which keeps the list to common words;
- its first noun sense (WordNet orders senses by how often they were tagged) was tagged at
  least once in the SemCor corpus (`cntlist.rev`), so rare readings such as "rex" for "king"
  stay out;
- it is not a stopword of the search index or a number word ("one" is not "ace"), has three
  letters or more, and is not mostly a name (written capitalised in at least as many senses as not: "John",
  "America");
- its senses as a noun were tagged at least as often as its senses as a verb, so that a
  word read mostly as a verb ("miss", "play", "hold") is not taken for a noun, and it is
  not an inflected form of another word ("works", "lost", "men");
- another such word has the same first sense.

Each output line is one group, its first word the name the group is compared by; irregular
plurals of its words (`noun.exc`: "children" for "child") follow the words they belong to.

Reproduce (Debian's `wordnet-base` package holds the database):

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wordnet
    python3 models/lexicon/wordnet_synonyms.py /tmp/wordnet/usr/share/wordnet > models/lexicon/noun_synonyms.txt
"""

import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
NUMBER_WORDS = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "hundred", "thousand", "million", "billion", "dozen", "half", "quarter", "first", "second",
    "third",
}


def stopwords():
    source = (ROOT / "crates/mnemo-core/src/retrieval.rs").read_text()
    listing = re.search(r"const STOPWORDS: &\[&str\] = &\[(.*?)\];", source, re.S)
    return set(re.findall(r'"([^"]+)"', listing.group(1)))


def main(wordnet):
    wordnet = pathlib.Path(wordnet)
    vocab = set((ROOT / "models/minilm-l6-m2v-256/vocab.txt").read_text().split())
    excluded = stopwords() | NUMBER_WORDS
    tagged_first = {}
    tagged = collections.Counter()
    for line in (wordnet / "cntlist.rev").read_text().splitlines():
        key, sense_number, count = line.split()
        lemma, sense = key.split("%", 1)
        if sense.startswith("1:") and sense_number == "1":
            tagged_first[lemma] = int(count)
        tagged[lemma, sense[0]] += int(count)
    written = collections.Counter()
    for line in (wordnet / "data.noun").read_text().splitlines():
        if line.startswith(" "):
            continue
        fields = line.split()
        word_count = int(fields[3], 16)
        for word in fields[4 : 4 + 2 * word_count : 2]:
            written[word.lower(), word != word.lower()] += 1
    inflected = set()
    for name in ("noun.exc", "verb.exc"):
        inflected |= {line.split()[0] for line in (wordnet / name).read_text().splitlines()}

    def an_inflection(lemma):
        if lemma in inflected:
            return True
        for suffix, ending in (("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"),
                               ("ing", ""), ("ing", "e")):
            if lemma.endswith(suffix) and len(lemma) > len(suffix) + 2:
                base = lemma[: -len(suffix)] + ending
                if tagged[base, "1"] + tagged[base, "2"] > tagged[lemma, "1"]:
                    return True
        return False

    first_sense = {}
    for line in (wordnet / "index.noun").read_text().splitlines():
        if line.startswith(" "):
            continue
        fields = line.split()
        lemma, pointer_count = fields[0], int(fields[3])
        offsets = fields[4 + pointer_count + 2:]
        if (
            re.fullmatch(r"[a-z]+", lemma)
            and lemma in vocab
            and lemma not in excluded
            and len(lemma) >= 3
            and tagged_first.get(lemma, 0) >= 1
            and tagged[lemma, "1"] >= tagged[lemma, "2"]
            and written[lemma, True] < written[lemma, False]
            and not an_inflection(lemma)
        ):
            first_sense[lemma] = offsets[0]
    plurals = collections.defaultdict(list)
    for line in (wordnet / "noun.exc").read_text().splitlines():
        inflected, base = line.split()[:2]
        if re.fullmatch(r"[a-z]+", inflected) and inflected not in excluded:
            plurals[base].append(inflected)
    groups = collections.defaultdict(list)
    for lemma, offset in first_sense.items():
        groups[offset].append(lemma)
    for words in sorted(sorted(g) for g in groups.values() if len(g) > 1):
        line = []
        for word in words:
            line.append(word)
            line.extend(sorted(plurals.get(word, [])))
        print(" ".join(line))


if __name__ == "__main__":
    main(sys.argv[1])
