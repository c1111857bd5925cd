"""Porter (1980) stemmer, following Martin Porter's reference ANSI-C version, which is what
SQLite FTS5's `porter` tokenizer implements (step 2 includes bli->ble and logi->log).
Input: a lowercase token. Tokens shorter than 3 chars are returned unchanged (FTS5 does the same).
"""

VOWELS = set("aeiou")


def _cons(b, i):
    ch = b[i]
    if ch in VOWELS:
        return False
    if ch == "y":
        return True if i == 0 else not _cons(b, i - 1)
    return True


def _m(b, j):
    """number of VC sequences in b[0..j]"""
    n = 0
    i = 0
    while True:
        if i > j:
            return n
        if not _cons(b, i):
            break
        i += 1
    i += 1
    while True:
        while True:
            if i > j:
                return n
            if _cons(b, i):
                break
            i += 1
        i += 1
        n += 1
        while True:
            if i > j:
                return n
            if not _cons(b, i):
                break
            i += 1
        i += 1


def _vowel_in(b, j):
    return any(not _cons(b, i) for i in range(j + 1))


def _doublec(b, j):
    return j >= 1 and b[j] == b[j - 1] and _cons(b, j)


def _cvc(b, i):
    if i < 2 or not _cons(b, i) or _cons(b, i - 1) or not _cons(b, i - 2):
        return False
    return b[i] not in "wxy"


def stem(w: str) -> str:
    if len(w) < 3:
        return w
    b = w
    # step 1a
    if b.endswith("sses"):
        b = b[:-2]
    elif b.endswith("ies"):
        b = b[:-2]
    elif b.endswith("ss"):
        pass
    elif b.endswith("s"):
        b = b[:-1]
    # step 1b
    flag = False
    if b.endswith("eed"):
        if _m(b, len(b) - 4) > 0:
            b = b[:-1]
    elif b.endswith("ed") and _vowel_in(b, len(b) - 3):
        b = b[:-2]
        flag = True
    elif b.endswith("ing") and _vowel_in(b, len(b) - 4):
        b = b[:-3]
        flag = True
    if flag:
        if b.endswith("at") or b.endswith("bl") or b.endswith("iz"):
            b = b + "e"
        elif _doublec(b, len(b) - 1):
            if b[-1] not in "lsz":
                b = b[:-1]
        elif _m(b, len(b) - 1) == 1 and _cvc(b, len(b) - 1):
            b = b + "e"
    # step 1c
    if b.endswith("y") and _vowel_in(b, len(b) - 2):
        b = b[:-1] + "i"
    # step 2
    for suf, rep in (
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
        ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
        ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
        ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
        ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
    ):
        if b.endswith(suf):
            if _m(b, len(b) - len(suf) - 1) > 0:
                b = b[: len(b) - len(suf)] + rep
            break
    # step 3
    for suf, rep in (
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"),
        ("ical", "ic"), ("ful", ""), ("ness", ""),
    ):
        if b.endswith(suf):
            if _m(b, len(b) - len(suf) - 1) > 0:
                b = b[: len(b) - len(suf)] + rep
            break
    # step 4
    for suf in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
                "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"):
        if b.endswith(suf):
            j = len(b) - len(suf) - 1
            if suf == "ion" and not (j >= 0 and b[j] in "st"):
                break
            if _m(b, j) > 1:
                b = b[: j + 1]
            break
    # step 5a
    if b.endswith("e"):
        j = len(b) - 2
        a = _m(b, j)
        if a > 1 or (a == 1 and not _cvc(b, j)):
            b = b[:-1]
    # step 5b
    if b.endswith("ll") and _m(b, len(b) - 1) > 1:
        b = b[:-1]
    return b
