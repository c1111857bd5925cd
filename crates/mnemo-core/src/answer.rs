//! What kind of answer a question asks for, and which kinds of answer a text could give.
//!
//! A question's wh-word says what its answer is: "when" a time, "who" and "where" a name,
//! "how many" or "how old" an amount. A statement that holds something of that kind (a
//! date or clock time, a name written with a capital, a number) can answer it; one that
//! shares the question's words without holding one ("I need to get a quarterly report
//! done" for "who do I report to?") cannot. Retrieval gives the first a bonus
//! ([`crate::retrieval::RetrievalConfig::answer_kind_bonus`]). Both sides are read from the
//! text's form (wh-words, capitals, digits, calendar words), not from lists of subjects.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::retrieval::{MONTH_NAMES, WEEKDAY_NAMES, year_number};

/// A kind of answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// A date, a day, a clock time or a time relative to now ("when", "what day").
    Time,
    /// A name: of a person, place, organisation or thing ("who", "where").
    Name,
    /// A number or a frequency ("how many", "how old", "how often").
    Amount,
}

impl AnswerKind {
    fn bit(self) -> u8 {
        match self {
            Self::Time => 1,
            Self::Name => 2,
            Self::Amount => 4,
        }
    }
}

/// The kinds of answer a text holds, as a set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerKinds(u8);

impl AnswerKinds {
    /// Whether the text holds an answer of this kind.
    pub fn has(self, kind: AnswerKind) -> bool {
        self.0 & kind.bit() != 0
    }

    fn add(&mut self, kind: AnswerKind) {
        self.0 |= kind.bit();
    }
}

/// Words that are a time by themselves (seasons too; "fall" only after "last", "next"...).
const TIME_WORDS: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "ago",
    "weekend",
    "weekends",
    "spring",
    "summer",
    "autumn",
    "winter",
];

/// Words that make a unit of time after them a time ("last week", "every morning").
pub(crate) const TIME_OPENERS: [&str; 5] = ["last", "next", "this", "every", "each"];

/// Units of time that name a time after one of [`TIME_OPENERS`].
pub(crate) const TIME_UNITS: &[&str] = &[
    "day",
    "week",
    "month",
    "year",
    "morning",
    "afternoon",
    "evening",
    "night",
    "spring",
    "summer",
    "autumn",
    "fall",
    "winter",
];

/// Words that say how often, an amount of times.
const FREQUENCY_WORDS: &[&str] = &["daily", "weekly", "monthly", "yearly", "annually"];

/// Words after "how" that ask for an amount.
const HOW_AMOUNT: &[&str] = &["many", "much", "old", "long", "often", "far", "tall", "big"];

/// Words after "what" or "which" that ask for a time.
const WHAT_TIME: &[&str] = &["time", "day", "date", "year", "month", "weekday"];

/// Lowercase words of a text: maximal runs of letters, digits and apostrophes.
fn lower_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The kind of answer a question asks for, read from its wh-word (the first among its
/// first three words) and the word after it, or a name when it asks what something is
/// named or called ("what's my dog called?", "user's partner name"); `None` when it says
/// neither ("what do I drink", "user home city").
pub fn asked_for(query: &str) -> Option<AnswerKind> {
    let words = lower_words(query);
    let asks_a_name = words.iter().any(|w| {
        matches!(w.trim_end_matches("'s").trim_end_matches("’s"), "name" | "named" | "called")
    });
    if asks_a_name {
        return Some(AnswerKind::Name);
    }
    let at = words.iter().take(3).position(|w| {
        matches!(
            w.as_str(),
            "who"
                | "whom"
                | "whose"
                | "who's"
                | "where"
                | "where's"
                | "when"
                | "when's"
                | "how"
                | "what"
                | "what's"
                | "which"
        )
    })?;
    let next = words.get(at + 1).map_or("", |w| w.trim_end_matches("'s").trim_end_matches("’s"));
    match words[at].as_str() {
        "who" | "whom" | "whose" | "who's" | "where" | "where's" => Some(AnswerKind::Name),
        "when" | "when's" => Some(AnswerKind::Time),
        "how" if HOW_AMOUNT.contains(&next) => Some(AnswerKind::Amount),
        "what" | "which" if WHAT_TIME.contains(&next) => Some(AnswerKind::Time),
        "what" | "which" if next == "age" => Some(AnswerKind::Amount),
        _ => None,
    }
}

/// What a word says by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordKind {
    /// A time ("yesterday", "june", "noon").
    Time,
    /// A weekday, which "s" may follow ("friday", "fridays").
    Weekday,
    /// An amount ("three", "twice", "weekly").
    Amount,
}

/// The words that are a time or an amount by themselves, lowercase, looked up once per word
/// of every record an index reads. "May" is left out (a month only beside a number), and so
/// are "one" and "zero" (as often a pronoun, "the new one", as a number).
static WORD_KINDS: LazyLock<HashMap<&'static str, WordKind>> = LazyLock::new(|| {
    let times = TIME_WORDS.iter().chain(&MONTH_NAMES).chain(&["noon", "midday", "midnight"]);
    let amounts = crate::lifecycle::NUMBER_WORDS.iter().chain(FREQUENCY_WORDS);
    times
        .map(|w| (*w, WordKind::Time))
        .chain(WEEKDAY_NAMES.iter().map(|w| (*w, WordKind::Weekday)))
        .chain(amounts.map(|w| (*w, WordKind::Amount)))
        .filter(|(w, _)| !matches!(*w, "may" | "one" | "zero"))
        .collect()
});

/// The longest word [`WORD_KINDS`] or [`TIME_UNITS`] holds, with a plural "s".
const LONGEST_WORD: usize = 10;

/// A word in lowercase ASCII in `buffer`, without a copy on the heap; `None` for a word that
/// no list here holds (longer than [`LONGEST_WORD`], or not ASCII).
fn lowercase_in<'b>(word: &str, buffer: &'b mut [u8; LONGEST_WORD]) -> Option<&'b str> {
    let bytes = word.as_bytes();
    if bytes.len() > LONGEST_WORD || !word.is_ascii() {
        return None;
    }
    let lower = &mut buffer[..bytes.len()];
    lower.copy_from_slice(bytes);
    lower.make_ascii_lowercase();
    std::str::from_utf8(lower).ok()
}

/// What a lowercase word says by itself, a plural weekday ("fridays") included.
fn word_kind(word: &str) -> Option<WordKind> {
    // Every listed word has three letters or more: most words of a text are passed over here.
    if word.len() < 3 {
        return None;
    }
    WORD_KINDS.get(word).copied().or_else(|| {
        let singular = word.strip_suffix('s')?;
        WORD_KINDS.get(singular).copied().filter(|k| *k == WordKind::Weekday)
    })
}

/// Whether a word (lowercase) is a number: digits, possibly with separators.
fn is_number(word: &str) -> bool {
    word.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && word.bytes().all(|b| b.is_ascii_digit() || matches!(b, b',' | b'.' | b'%'))
}

/// Whether a word as written is a name: it starts with a capital and has a lowercase letter
/// after it ("Leeds", "GitHub"), is not "I" or one of its contractions, and is no month or
/// weekday ("June", "Fridays": those are times).
fn is_name(word: &str) -> bool {
    let mut chars = word.chars();
    let Some(first) = chars.next() else { return false };
    if !first.is_uppercase() || !chars.any(char::is_lowercase) {
        return false;
    }
    let mut buffer = [0; LONGEST_WORD];
    let calendar = lowercase_in(word, &mut buffer).is_some_and(|lower| {
        matches!(word_kind(lower), Some(WordKind::Weekday)) || MONTH_NAMES.contains(&lower)
    });
    !calendar && !matches!(word, "I'm" | "I've" | "I'd" | "I'll" | "I’m" | "I’ve" | "I’d" | "I’ll")
}

/// The kinds of answer a text holds: a time (a month or weekday, a season, a year, a clock
/// time, "yesterday", "last week", "every morning"), a name (a capitalised word that does
/// not open a sentence and is not a calendar name), an amount (a number, a number word above
/// one, "once", "twice", "weekly"). Read in one pass over the words as written, without a
/// copy on the heap: every record is read when its index is built.
pub fn answer_kinds(text: &str) -> AnswerKinds {
    let mut kinds = AnswerKinds::default();
    let mut opens_sentence = true;
    // Of the word before: whether it opens a time ("last", "every") or is a number.
    let (mut opens_time, mut after_number) = (false, false);
    let mut buffer = [0; LONGEST_WORD];
    let mut words = text.split_whitespace().peekable();
    while let Some(raw) = words.next() {
        let bare = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if !opens_sentence && is_name(bare) {
            kinds.add(AnswerKind::Name);
        }
        opens_sentence = raw.ends_with(['.', '!', '?', ':', ';', '"']);
        // "four-day", "9/11": each part is a word of its own.
        for part in bare.split(['-', '/']) {
            let Some(word) = lowercase_in(part, &mut buffer) else {
                (opens_time, after_number) = (false, false);
                continue;
            };
            let numeric = word.starts_with(|c: char| c.is_ascii_digit());
            let year = numeric && year_number(word).is_some();
            // "May" is a month only beside a number ("May 3", "3 May").
            let may = word == "may"
                && (after_number
                    || words
                        .peek()
                        .is_some_and(|next| next.starts_with(|c: char| c.is_ascii_digit())));
            let kind = word_kind(word);
            let time = year
                || may
                || matches!(kind, Some(WordKind::Time | WordKind::Weekday))
                || (numeric && crate::claims::clock(word).is_some())
                || (opens_time && TIME_UNITS.contains(&word.trim_end_matches('s')));
            if time {
                kinds.add(AnswerKind::Time);
            }
            if (numeric && !year && is_number(word)) || kind == Some(WordKind::Amount) {
                kinds.add(AnswerKind::Amount);
            }
            opens_time = TIME_OPENERS.contains(&word);
            after_number = numeric;
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_questions_wh_word_says_what_it_asks_for() {
        assert_eq!(asked_for("When's our morning sync?"), Some(AnswerKind::Time));
        assert_eq!(asked_for("What day was I born?"), Some(AnswerKind::Time));
        assert_eq!(asked_for("Who do I report to?"), Some(AnswerKind::Name));
        assert_eq!(asked_for("So where am I based these days?"), Some(AnswerKind::Name));
        assert_eq!(asked_for("How old's my grandma?"), Some(AnswerKind::Amount));
        assert_eq!(asked_for("How often do I swim?"), Some(AnswerKind::Amount));
        assert_eq!(asked_for("How do I get to the office?"), None);
        assert_eq!(asked_for("What do I drink?"), None);
        assert_eq!(asked_for("user home city"), None);
        assert_eq!(asked_for("What is the name of the user's dog?"), Some(AnswerKind::Name));
        assert_eq!(asked_for("what's my cat called"), Some(AnswerKind::Name));
        assert_eq!(asked_for("preferred name"), Some(AnswerKind::Name));
    }

    #[test]
    fn a_text_holds_times_names_and_amounts_by_their_form() {
        let kinds = answer_kinds("daily standup is at 9:45, keep that slot free pls");
        assert!(kinds.has(AnswerKind::Time));
        assert!(answer_kinds("My birthday's November 22.").has(AnswerKind::Time));
        assert!(
            answer_kinds("I hit the gym before work, usually around 6:30.").has(AnswerKind::Time)
        );
        assert!(answer_kinds("I went to a support group yesterday").has(AnswerKind::Time));
        assert!(answer_kinds("We go there every summer").has(AnswerKind::Time));
        assert!(answer_kinds("Autumn is my favourite season").has(AnswerKind::Time));
        assert!(
            answer_kinds("I work at Brightline Logistics, been there since 2021.")
                .has(AnswerKind::Time)
        );
        let manager = answer_kinds("My manager is Dana Okafor, she's really good.");
        assert!(manager.has(AnswerKind::Name));
        assert!(!manager.has(AnswerKind::Time));
        assert!(answer_kinds("My gran just turned 92.").has(AnswerKind::Amount));
        assert!(answer_kinds("I'm on call one week in every four.").has(AnswerKind::Amount));
        let report = answer_kinds("I need to get a quarterly report done soon. It matters");
        assert_eq!(report, AnswerKinds::default(), "a sentence's first word is no name");
        assert!(!answer_kinds("I may go. I'm tired").has(AnswerKind::Time));
        assert!(!answer_kinds("ordered a new lamp").has(AnswerKind::Time));
        assert!(!answer_kinds("We moved on Friday").has(AnswerKind::Name), "a weekday is a time");
    }

    proptest::proptest! {
        /// Any text is read without failing, and saying more never takes a kind away: what
        /// a text holds, it still holds with another sentence after it; a year adds a time.
        #[test]
        fn more_text_keeps_every_kind(first in "\\PC{0,60}", second in "\\PC{0,60}") {
            let _ = asked_for(&first);
            let before = answer_kinds(&first);
            let after = answer_kinds(&format!("{first} {second}"));
            for kind in [AnswerKind::Time, AnswerKind::Name, AnswerKind::Amount] {
                proptest::prop_assert!(!before.has(kind) || after.has(kind), "{kind:?}");
            }
            let dated = answer_kinds(&format!("{first} in 1999"));
            proptest::prop_assert!(dated.has(AnswerKind::Time));
        }
    }
}
