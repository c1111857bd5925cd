//! Nouns that name the same thing: groups of common English nouns that share their most
//! frequent sense ("film" / "movie", "author" / "writer", "kid" / "child"), read from WordNet
//! 3.0 by `models/lexicon/wordnet_synonyms.py` and compiled in. The claims reader compares
//! slots and values through them, so "my favourite film" and "my favourite movie" are one
//! slot, and "two kids" and "three children" one count.

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
