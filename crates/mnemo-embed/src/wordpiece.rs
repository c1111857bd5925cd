//! BERT's uncased WordPiece tokenizer: text cleaning, CJK splitting, lowercasing with accent
//! stripping, punctuation splitting, then greedy longest-match WordPiece with `##`
//! continuations. It matches the reference tokenizer id for id on the model's fixtures.

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Words longer than this many characters become `[UNK]`.
const MAX_CHARS_PER_WORD: usize = 100;

/// A WordPiece vocabulary and tokenizer.
#[derive(Debug, Clone)]
pub struct WordPiece {
    ids: HashMap<String, u32>,
    unk_id: u32,
}

impl WordPiece {
    /// Builds a tokenizer from a `vocab.txt` (one token per line; line index = id).
    pub fn from_vocab(vocab: &str, unk_token: &str) -> Option<Self> {
        let ids: HashMap<String, u32> =
            vocab.lines().enumerate().map(|(i, t)| (t.to_owned(), i as u32)).collect();
        let unk_id = *ids.get(unk_token)?;
        Some(Self { ids, unk_id })
    }

    /// The number of tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Token ids of `text`, without special tokens.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for word in basic_tokens(text) {
            self.word_pieces(&word, &mut out);
        }
        out
    }

    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_CHARS_PER_WORD {
            out.push(self.unk_id);
            return;
        }
        let start_len = out.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.extend(&chars[start..end]);
                if let Some(&id) = self.ids.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(start_len);
                    out.push(self.unk_id);
                    return;
                }
            }
        }
    }
}

fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Unassigned
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    )
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
        || get_general_category(c) == GeneralCategory::SpaceSeparator
}

fn is_punctuation(c: char) -> bool {
    let code = c as u32;
    if (33..=47).contains(&code)
        || (58..=64).contains(&code)
        || (91..=96).contains(&code)
        || (123..=126).contains(&code)
    {
        return true;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::ConnectorPunctuation
            | GeneralCategory::DashPunctuation
            | GeneralCategory::OpenPunctuation
            | GeneralCategory::ClosePunctuation
            | GeneralCategory::InitialPunctuation
            | GeneralCategory::FinalPunctuation
            | GeneralCategory::OtherPunctuation
    )
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// BERT's basic tokenizer: cleaned, CJK-split, lowercased, accent-stripped words split on
/// punctuation.
fn basic_tokens(text: &str) -> Vec<String> {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{FFFD}' || is_control(c) {
            continue;
        }
        if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else if is_whitespace(c) {
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let mut words = Vec::new();
    for word in cleaned.split(' ').filter(|w| !w.is_empty()) {
        let lowered: String = word
            .to_lowercase()
            .nfd()
            .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
            .collect();
        let mut current = String::new();
        for c in lowered.chars() {
            if is_punctuation(c) {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
                words.push(c.to_string());
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_tokenizer_lowercases_strips_accents_and_splits_punctuation() {
        assert_eq!(
            basic_tokens("Café, don't\u{200B}STOP!"),
            ["cafe", ",", "don", "'", "tstop", "!"]
        );
        assert_eq!(basic_tokens("a\u{00A0}b\t\n c"), ["a", "b", "c"]);
        assert_eq!(basic_tokens("東京 tower"), ["東", "京", "tower"]);
    }

    #[test]
    fn wordpiece_matches_longest_pieces_and_falls_back_to_unk() {
        let vocab = "[PAD]\n[UNK]\nplay\n##ing\n##s\nun\n##play\n";
        let wp = WordPiece::from_vocab(vocab, "[UNK]").unwrap();
        assert_eq!(wp.encode("playing plays unplay"), [2, 3, 2, 4, 5, 6]);
        assert_eq!(wp.encode("playx"), [1]);
        assert_eq!(wp.encode(&"p".repeat(101)), [1]);
    }
}
