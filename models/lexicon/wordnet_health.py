"""Writes `health_terms.txt`: the names of conditions, symptoms, injuries, treatments and
medicines in English, read from WordNet 3.0 (Princeton University; its licence is in
`LICENSE`), which the policy gate reads as health (SPEC §3.3) wherever a text names one.

A word or phrase is listed when:
- its first noun sense (WordNet orders senses by how often they were tagged) lies under one
  of the roots below: a physical condition (illnesses, disorders, pregnancy, addiction), a
  symptom, an injury, medical care, a medicine, drug addiction;
- at least half of its noun senses lie there too, or its first sense was tagged at least
  twice and at least twice as often as all its other noun senses together ("injury",
  "nausea"), so a word whose other readings are as likely ("dose", "pest") stays out;
- it is not read more often as a verb or an adjective (tagged counts in `cntlist.rev`:
  "cold" is mostly the weather's);
- it is written in lowercase in WordNet (no names or abbreviations: "Amelia", "MS") and has
  four letters or more;
- it is not one of the few everyday words below whose first WordNet sense is medical but
  whose everyday reading is not ("hunger", "congestion", "spots").

Each output line is one term, lowercase, its words separated by single spaces (WordNet's
underscores and hyphens, which the gate splits words at, become spaces).

Reproduce (Debian's `wordnet-base` package holds the database):

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wordnet
    python3 models/lexicon/wordnet_health.py /tmp/wordnet/usr/share/wordnet > models/lexicon/health_terms.txt
"""

import collections
import pathlib
import sys

# (lemma, sense index among its noun senses) of each root.
ROOTS = [
    ("physical_condition", 0),
    ("symptom", 0),
    ("injury", 0),
    ("medical_care", 0),
    ("medicine", 1),
    ("drug_addiction", 0),
]

# Branches under the roots that are no one's health: plants' and animals' diseases, good
# health and fitness, sleep and arousal, toiletries.
OTHER_BRANCHES = [
    ("plant_disease", 0),
    ("animal_disease", 0),
    ("good_health", 0),
    ("sleep", 0),
    ("drive", 8),
    ("sexual_arousal", 0),
    ("suspended_animation", 0),
    ("toiletry", 0),
]

# Everyday words and idioms whose first WordNet sense is medical but whose common reading
# is not.
EVERYDAY = {
    "bends", "choking", "congestion", "cupping", "dose", "flooding", "frenzy", "hunger",
    "hurting", "hysteria", "pest", "piles", "scar", "spots", "thirst", "wasting",
    "aberration", "physic", "elixir of life", "founder", "hard on", "fever pitch",
    "chicken breast", "crack up", "cure all", "magic bullet", "side effect", "tunnel vision",
    "tin ear", "yellow jacket", "red devil", "blue angel", "atomic cocktail", "arrested development",
    "poison ivy", "poison oak", "love bite", "knock knee", "bull nose", "little potato",
    "cotton ball", "crystal violet", "red water", "token economy", "rubbing alcohol",
    "dry mustard", "wasting away", "mal de mer", "crisis intervention", "depth psychology",
    "ethical drug", "blocking agent", "quarter crack", "sand crack", "toe crack",
}


def synsets(wordnet):
    """Noun synsets by offset: (words as written, pointers)."""
    out = {}
    for line in (wordnet / "data.noun").read_text(errors="replace").splitlines():
        if line.startswith("  "):
            continue
        fields = line.split(" ")
        count = int(fields[3], 16)
        words = [fields[4 + 2 * i] for i in range(count)]
        at = 4 + 2 * count
        pointers = [tuple(fields[at + 1 + 4 * i : at + 4 + 4 * i]) for i in range(int(fields[at]))]
        out[fields[0]] = (words, pointers)
    return out


def senses(wordnet, pos):
    """Each lemma's synset offsets, most frequent first."""
    out = {}
    for line in (wordnet / f"index.{pos}").read_text().splitlines():
        if line.startswith(" "):
            continue
        fields = line.split()
        pointer_kinds = int(fields[3])
        out[fields[0]] = fields[4 + pointer_kinds + 2 :]
    return out


def main(wordnet):
    wordnet = pathlib.Path(wordnet)
    nouns = synsets(wordnet)
    noun_senses = senses(wordnet, "noun")
    other_pos = set(senses(wordnet, "verb")) | set(senses(wordnet, "adj"))
    tagged = collections.Counter()
    tagged_first = collections.Counter()
    for line in (wordnet / "cntlist.rev").read_text().splitlines():
        key, sense_number, count = line.split()
        lemma, sense = key.split("%", 1)
        tagged[lemma, sense[0]] += int(count)
        if sense.startswith("1:") and sense_number == "1":
            tagged_first[lemma] += int(count)
    def subtree(roots):
        found = {noun_senses[lemma][i] for lemma, i in roots}
        stack = list(found)
        while stack:
            for symbol, target, pos in nouns[stack.pop()][1]:
                if symbol in ("~", "~i") and pos == "n" and target not in found:
                    found.add(target)
                    stack.append(target)
        return found

    below = subtree(ROOTS) - subtree(OTHER_BRANCHES)
    terms = set()
    for lemma, offsets in noun_senses.items():
        as_noun = tagged[lemma, "1"]
        first = tagged_first[lemma]
        mostly = 2 * sum(o in below for o in offsets) >= len(offsets)
        dominant = first >= 2 and 3 * first >= 2 * as_noun
        if offsets[0] not in below or not (mostly or dominant):
            continue
        as_other = tagged[lemma, "2"] + tagged[lemma, "3"] + tagged[lemma, "5"]
        if lemma in other_pos and as_other >= as_noun:
            continue
        written = [w for w in nouns[offsets[0]][0] if w.lower() == lemma]
        if not written or written[0] != lemma or len(lemma) < 4:
            continue
        term = " ".join(lemma.replace("_", " ").replace("-", " ").split())
        if term not in EVERYDAY:
            terms.add(term)
    for term in sorted(terms):
        print(term)


if __name__ == "__main__":
    main(sys.argv[1])
