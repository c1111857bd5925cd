//! Word lists read from WordNet 3.0 and compiled in. Nouns that name the same thing: groups
//! of common English nouns that share their most frequent sense ("film" / "movie", "author"
//! / "writer", "kid" / "child"), written by `models/lexicon/wordnet_synonyms.py`; the claims
//! reader compares slots and values through them, so "my favourite film" and "my favourite
//! movie" are one slot, and "two kids" and "three children" one count. Common verbs with
//! their past forms, written by `models/lexicon/wordnet_verbs.py`: the extractor reads a
//! word after "and" as a verb of the same subject by them ("I run a pottery studio and sell
//! on Etsy").

use std::collections::HashMap;
use std::sync::LazyLock;

/// One group per line, its first word the name the group is compared by.
const GROUPS: &str = include_str!("../../../models/lexicon/noun_synonyms.txt");

/// The groups, each its words in order, and each grouped word's group.
struct Lexicon {
    groups: Vec<Vec<&'static str>>,
    group_of: HashMap<&'static str, usize>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| {
    let groups: Vec<Vec<&'static str>> = GROUPS
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect();
    let group_of = groups
        .iter()
        .enumerate()
        .flat_map(|(at, words)| words.iter().map(move |word| (*word, at)))
        .collect();
    Lexicon { groups, group_of }
});

/// The words of the group a lowercase noun belongs to, read through a regular plural
/// ("movies" → film, movie), or `None` when it has no synonym here.
pub fn synonyms(word: &str) -> Option<&'static [&'static str]> {
    let Lexicon { groups, group_of } = &*LEXICON;
    let find = |singular: &str| (singular.len() >= 3).then(|| group_of.get(singular)).flatten();
    let at = find(word)
        .or_else(|| word.strip_suffix("es").and_then(find))
        .or_else(|| word.strip_suffix('s').and_then(find))
        .or_else(|| word.strip_suffix("ies").and_then(|stem| find(&format!("{stem}y"))))
        .copied()?;
    Some(groups[at].as_slice())
}

/// The name of the group a lowercase noun belongs to (its first word), or `None`.
pub fn group_of(word: &str) -> Option<&'static str> {
    synonyms(word).and_then(|words| words.first().copied())
}

/// `word` as its group's name when it has one, else as it is.
pub fn canonical(word: &str) -> &str {
    group_of(word).unwrap_or(word)
}

/// One verb per line, then its past forms.
const VERBS: &str = include_str!("../../../models/lexicon/common_verbs.txt");

/// Each listed form (lowercase) and whether it is a past form.
static VERB_FORMS: LazyLock<HashMap<&'static str, bool>> = LazyLock::new(|| {
    let mut forms = HashMap::new();
    for line in VERBS.lines() {
        let mut words = line.split_whitespace();
        if let Some(base) = words.next() {
            forms.insert(base, false);
        }
        for past in words {
            forms.entry(past).or_insert(true);
        }
    }
    forms
});

/// Whether a lowercase word is a common verb as the speaker says it of themselves: its plain
/// form ("sell") or a past form ("sold", "baked").
pub fn is_verb(word: &str) -> bool {
    VERB_FORMS.contains_key(word)
}

/// Whether a lowercase word is a common verb in its plain form ("sell", not "sold").
pub fn is_plain_verb(word: &str) -> bool {
    VERB_FORMS.get(word) == Some(&false)
}

/// Whether a lowercase word is a common verb said of someone else in the present ("sells",
/// "teaches", "studies").
pub fn is_third_person_verb(word: &str) -> bool {
    let plain = |stem: &str| VERB_FORMS.get(stem) == Some(&false);
    word.strip_suffix("ies").is_some_and(|stem| plain(&format!("{stem}y")))
        || word.strip_suffix("es").is_some_and(|stem| {
            ["s", "sh", "ch", "x", "z", "o"].iter().any(|e| stem.ends_with(e)) && plain(stem)
        })
        || word.strip_suffix('s').is_some_and(|stem| !stem.ends_with('s') && plain(stem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_share_a_name_and_other_words_keep_theirs() {
        for (a, b) in [
            ("film", "movie"),
            ("movies", "film"),
            ("author", "writer"),
            ("kids", "children"),
            ("kid", "child"),
            ("car", "automobile"),
            ("spouse", "partner"),
            ("job", "occupation"),
        ] {
            assert_eq!(group_of(a), group_of(b), "{a} / {b}");
            assert!(group_of(a).is_some(), "{a}");
        }
        for (a, b) in [("breakfast", "lunch"), ("dog", "cat"), ("tea", "coffee"), ("film", "book")]
        {
            assert_ne!(canonical(a), canonical(b), "{a} / {b}");
        }
    }

    #[test]
    fn names_numbers_verbs_and_inflections_are_left_alone() {
        for word in ["john", "rex", "one", "us", "miss", "play", "works", "lost", "men", "kiss"] {
            assert_eq!(group_of(word), None, "{word}");
            assert_eq!(canonical(word), word);
        }
    }

    #[test]
    fn verbs_are_known_in_their_forms_and_things_are_not_verbs() {
        for word in ["sell", "sold", "carry", "carried", "taught", "print", "deploy", "swum"] {
            assert!(is_verb(word), "{word}");
        }
        for word in ["sells", "teaches", "carries", "works", "fixes", "watches"] {
            assert!(is_third_person_verb(word), "{word}");
            assert!(!is_verb(word), "{word}");
        }
        for word in ["dog", "fish", "coffee", "cat", "music", "have", "be", "will", "can"] {
            assert!(!is_verb(word), "{word}");
            assert!(!is_third_person_verb(&format!("{word}s")), "{word}s");
        }
    }

    #[test]
    fn every_group_has_two_words_and_each_word_one_group() {
        let mut seen = std::collections::HashSet::new();
        for line in GROUPS.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(words.len() >= 2, "{line}");
            for word in words {
                assert!(seen.insert(word), "{word} is in two groups");
                assert!(word.chars().all(|c| c.is_ascii_lowercase()), "{word}");
            }
        }
        assert!(seen.len() > 500, "{} words", seen.len());
    }
}
