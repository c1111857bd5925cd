//! What a statement claims, read from its structure, so that two statements without a
//! subject + attribute key can still be recognised as values of the same slot (SPEC §3: never
//! two contradictory active facts).
//!
//! A statement is split into clauses; each clause that speaks of someone yields a [`Claim`]:
//! its holder (the user, or someone named), its slot and its value. The slot is read from the
//! grammar, not from a list of attributes: in "my favourite drink is a flat white" or "iced
//! matcha has become my favourite drink" it is what follows "my" (an attribute, which holds
//! one value); in "I code in VS Code" it is the verb and its preposition (an activity, which
//! may hold several, so only a statement that says it changed replaces another); after a verb
//! of change ("I switched to Neovim") the slot is open, and the nearest stored statement fills
//! it. A statement that says it changed ("anymore", "instead", a verb of change, ending or
//! revision) replaces the stored statement it names or the one nearest to it in meaning,
//! however each words the slot; one that only implies it (a word of time such as "now" or
//! "again", "got promoted": "I eat meat again", "I'm on day shifts now") replaces a value of
//! the same slot, or the nearest statement when that one is close in meaning and of the same
//! kind. Markers of addition ("also", "too", "as well") and of the past ("used to") make a
//! statement compatible with what is stored, and so does a description beside a name ("my
//! car is red" / "my car is a Mazda").
//! A quantity a clause states ([`Measure`]: its dimension read from its unit, its amount, and
//! what it is of) is replaced by another amount of the same dimension of the same thing ("I
//! weigh 80 kg" / "I'm down to 72 kilos", "my gym days are Tuesdays and Thursdays now").
//!
//! Statements as the extractor rewrites them ("User's favourite food is sushi", "Lives in
//! Dallas") read the same as the user's own words.

use std::collections::HashSet;

/// Who a claim is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// The user.
    User,
    /// Someone or something else, by the words that name it ("wife", "rex").
    Other(String),
}

/// How a claim's slot was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// An attribute ("my favourite food is …", "… is my title"): one value at a time.
    Attribute,
    /// What the holder does or is ("I code in …", "I'm a …"): may hold several values.
    Activity,
    /// A verb of change with no slot of its own ("I switched to …"): the slot is open.
    Open,
}

/// One clause's claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Who it is about.
    pub holder: Holder,
    /// How the slot was read.
    pub kind: SlotKind,
    /// The slot's words, loosely stemmed (empty for an open slot).
    pub slot: Vec<String>,
    /// The value's content words, loosely stemmed.
    pub value: HashSet<String>,
    /// For an open slot, what changed, when named ("all my notes" in "I migrated all my
    /// notes to Obsidian"), loosely stemmed.
    pub topic: HashSet<String>,
    /// The head of what changed, when named ("handl" in "I swapped all the door handles for
    /// brass ones"): the words before it only describe it.
    pub topic_head: Option<String>,
    /// What took the place of what changed is another of the same ("brass ones" for "the
    /// door handles", "a new one" for "my kettle"): the statement speaks of that thing
    /// alone, so only a stored statement that names it no longer holds.
    pub in_kind: bool,
    /// What it says it takes the place of ("… called Biscuit now instead of Max", "tea
    /// instead of coffee"), loosely stemmed: a stored value among these no longer holds.
    pub replaced: HashSet<String>,
    /// Says it adds to what is known ("also", "too", "as well", "another").
    pub additive: bool,
    /// Says it no longer holds ("used to", "formerly").
    pub past: bool,
    /// Whether and how plainly it says something changed.
    pub change: Change,
    /// Negated ("don't", "no longer", "never").
    pub negated: bool,
    /// How the value is said, which tells an identity from a property.
    pub form: ValueForm,
    /// Tells of something that happened ("I unclogged the sink", "Rosa sold the shed last
    /// week") rather than of how things are: what happened stays true whatever changes
    /// later, so a later statement never replaces it.
    pub event: bool,
    /// The quantity the clause states, if it states one ("80 kg", "$1,500", "11pm").
    pub measure: Option<Measure>,
    /// The value is a proper name, every word of it capitalised where it is said ("in
    /// Brooklyn", "at Shopify", "at the University of Toronto"): it names a place, a
    /// person or an organisation, not a description of one ("in a flat", "at the shelter").
    pub proper: bool,
    /// Words of the value it says are absent ("sugar" in "black with no sugar", "milk" in
    /// "without milk"), loosely stemmed.
    pub denied: HashSet<String>,
}

/// What a quantity measures, read from its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// An amount of money ("$1,500", "£72,000", "40 euros").
    Money,
    /// A weight ("80 kg", "165 lbs").
    Mass,
    /// Someone's age ("29 years old", "I turned 30").
    Age,
    /// A time of day ("6am", "9:30", "noon").
    Clock,
    /// A length of time ("20 minutes", "an hour").
    Duration,
    /// A distance ("5 km", "3 miles").
    Distance,
    /// The days of the week something is done on ("on Mondays and Wednesdays", "every
    /// Friday"), one bit per day.
    Weekdays,
}

/// A quantity a clause states, and what it is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measure {
    /// What it measures.
    pub dimension: Dimension,
    /// The amount in the dimension's one unit (kilograms, minutes, kilometres, minutes after
    /// midnight, years, money as said), in hundredths; for weekdays, their bits.
    pub hundredths: i64,
    /// What it is of: the clause's content words other than the quantity, its unit and words
    /// of time, loosely stemmed ("rent" in "my rent is $1,500 a month"; nothing in "I'm 29
    /// years old", which is of the holder).
    pub of: HashSet<String>,
}

/// Whether a statement says that something changed, and how plainly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// It does not.
    None,
    /// With words that often say only when or how things are ("now", "these days",
    /// "lately", "again", "actually", "became", "got married"): enough to replace a value
    /// of the same slot, and to take the slot only of a stored statement close in meaning.
    Implied,
    /// With words that say nothing else ("switched", "moved to", "quit", "cancelled", "no
    /// longer", "anymore", "instead", "back to"): it may replace the stored statement it
    /// names or the one nearest in meaning, whatever words name the slot.
    Explicit,
}

/// How a value is said: "my car is a Mazda" names what the car is, "my car is red" and "my
/// flat is on the third floor" describe it, and the two hold together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueForm {
    /// A noun phrase with an article ("a Mazda 3", "an engineer").
    Named,
    /// A phrase opening with a preposition ("on the third floor", "in Leeds", "with Proton").
    Placed,
    /// A number alone ("70" in "my dad is 70"): an age or a count.
    Counted,
    /// Anything else ("red", "sushi", "Thai green curry").
    Bare,
}

impl ValueForm {
    fn of(value: &[String]) -> ValueForm {
        match value.first().map(String::as_str) {
            Some("a" | "an") => ValueForm::Named,
            Some(
                "on" | "in" | "at" | "with" | "for" | "near" | "by" | "from" | "under" | "above",
            ) => ValueForm::Placed,
            // "71 now": a word of time says when, not what.
            Some(number)
                if number.parse::<f64>().is_ok()
                    && value[1..].iter().all(|w| TIME_WORDS.contains(&w.as_str())) =>
            {
                ValueForm::Counted
            }
            _ => ValueForm::Bare,
        }
    }

    /// Whether two values of one attribute can both hold because one names the thing and
    /// the other describes it: a named value beside a one-word description, a place beside
    /// anything that is not one, or a number beside anything that is not one ("my dad is 70"
    /// / "my dad is retired").
    fn describes_apart(old: (ValueForm, usize), new: (ValueForm, usize)) -> bool {
        let (a, b) = (old.0, new.0);
        (a == ValueForm::Placed) != (b == ValueForm::Placed)
            || (a == ValueForm::Counted) != (b == ValueForm::Counted)
            || (a == ValueForm::Named && b == ValueForm::Bare && new.1 == 1)
            || (b == ValueForm::Named && a == ValueForm::Bare && old.1 == 1)
    }
}

/// Words that open a relative clause ("…, which makes …", "…, who lives …"): the clause is
/// about what it follows, not a claim of its own holder.
const RELATIVE_PRONOUNS: [&str; 5] = ["which", "who", "whom", "whose", "where"];

/// Words that join a copula to its value or slot.
const COPULAS: [&str; 8] = ["is", "are", "was", "were", "been", "become", "became", "remains"];

/// Auxiliaries and adverbs between a subject and its verb, skipped to find the verb.
const BETWEEN_SUBJECT_AND_VERB: [&str; 25] = [
    "have",
    "has",
    "had",
    "do",
    "does",
    "did",
    "will",
    "would",
    "just",
    "also",
    "still",
    "really",
    "now",
    "recently",
    "finally",
    "actually",
    "always",
    "usually",
    "mostly",
    "mainly",
    "only",
    "currently",
    "never",
    "not",
    "totally",
];

/// "Reply" for a form of "answer", "reply" or "respond", verb or noun ("responses"): one
/// sense in WordNet, so "answer me in English" / "reply to me in German" and "your answers"
/// / "your replies" are one request.
fn as_reply(word: &str) -> Option<String> {
    matches!(
        word,
        "answer"
            | "answers"
            | "answered"
            | "reply"
            | "replies"
            | "replied"
            | "respond"
            | "responds"
            | "responded"
            | "response"
            | "responses"
    )
    .then(|| "reply".to_owned())
}

/// The verb of a request of how to treat the user, compared loosely ([`as_reply`]).
fn request_verb(verb: &str) -> String {
    as_reply(verb).unwrap_or_else(|| loose(verb))
}

/// Verbs that give what they act on a colour ("dyed my hair blonde"), in their forms.
const COLOURING_VERBS: &[&str] = &[
    "dye",
    "dyes",
    "dyed",
    "paint",
    "paints",
    "painted",
    "repainted",
    "colour",
    "coloured",
    "color",
    "colored",
    "bleach",
    "bleached",
];

/// Verbs that give their subject an amount ("my commute takes 20 minutes").
const MEASURING_VERBS: [&str; 8] =
    ["takes", "took", "costs", "cost", "lasts", "lasted", "weighs", "weighed"];

/// Verbs whose object is a new value of something the holder had before.
const CHANGE_VERBS: [&str; 9] =
    ["switch", "move", "change", "transfer", "swap", "replace", "convert", "migrate", "relocate"];

/// Verbs that move an amount or a level to another when followed by "to", directly or after
/// "down", "up" or "back" ("I've dropped down to part-time hours", "I cut back to one coffee
/// a day", "I upgraded to the family plan"); without it they say something else ("I dropped
/// my phone", "I cut my finger").
const SHIFTING_VERBS: [&str; 7] = ["drop", "cut", "step", "scale", "bump", "upgrade", "downgrade"];

/// Verbs that end what held before ("I quit smoking", "I sold the Civic", "I cancelled
/// Netflix"): a statement using one says that what it names no longer holds.
const ENDING_VERBS: [&str; 8] =
    ["quit", "stop", "cancel", "close", "sell", "sold", "leave", "left"];

/// Verbs that replace what held before without naming the slot ("we renamed the puppy",
/// "Japanese has overtaken Italian"). Beginnings ("start", "join", "take up") are not among
/// them: starting one thing does not end another.
const REVISING_VERBS: [&str; 3] = ["rename", "overtake", "overtaken"];

/// Verbs that may say a state changed but as often say how one came about ("I became a
/// night owl" and "I'm trying to become fluent", "I turned 30" and "it turned out").
const BECOMING_VERBS: [&str; 3] = ["become", "became", "turned"];

/// Words of time that say nothing about a value.
const TIME_WORDS: [&str; 11] = [
    "now",
    "instead",
    "nowadays",
    "currently",
    "lately",
    "anymore",
    "today",
    "recently",
    "again",
    "moment",
    "everywhere",
];

/// The words of a lowercase clause: letters and digits with apostrophes, slashes and hyphens
/// inside them, and a number's comma, point or colon kept ("65,000", "9:30").
fn split_words(lower: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(at, c)) in chars.iter().enumerate() {
        let digit_around = |d: i64| {
            usize::try_from(k as i64 + d)
                .ok()
                .and_then(|i| chars.get(i))
                .is_some_and(|(_, c)| c.is_ascii_digit())
        };
        let inside = c.is_alphanumeric()
            || matches!(c, '\'' | '/' | '-')
            || (matches!(c, '$' | '£' | '€') && digit_around(1))
            || (matches!(c, ',' | '.' | ':') && digit_around(-1) && digit_around(1));
        match (inside, start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                words.push(&lower[from..at]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push(&lower[from..]);
    }
    words
}

/// Lowercase word tokens with contractions expanded and the extractor's third person ("the
/// user", "user's") read as the first.
fn tokens(clause: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let lower = clause.to_lowercase().replace('\u{2019}', "'");
    for raw in split_words(&lower) {
        let word = raw.trim_matches(['\'', '-']);
        if word.is_empty() {
            continue;
        }
        if let Some(base) = word.strip_suffix("n't") {
            let base = match base {
                "won" => "will",
                "can" | "ca" => "can",
                other => other,
            };
            out.extend([base.to_owned(), "not".to_owned()]);
            continue;
        }
        let (base, suffix) = match word.split_once('\'') {
            Some((base, suffix)) => (base, Some(suffix)),
            None => (word, None),
        };
        out.push(base.to_owned());
        match suffix {
            Some("m") => out.push("am".to_owned()),
            Some("ve") => out.push("have".to_owned()),
            Some("d") => out.push("would".to_owned()),
            Some("ll") => out.push("will".to_owned()),
            Some("re") => out.push("are".to_owned()),
            Some("s") => {
                if matches!(base, "it" | "that" | "he" | "she" | "there" | "what" | "who") {
                    out.push("is".to_owned());
                } else {
                    out.push("'s".to_owned());
                }
            }
            _ => {}
        }
    }
    // "the user's" / "user's" → "my"; "the user" → "i".
    let mut read: Vec<String> = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        let the = out[i] == "the" && out.get(i + 1).is_some_and(|w| w == "user");
        let at = if the { i + 1 } else { i };
        if out[at] == "user" {
            if out.get(at + 1).is_some_and(|w| w == "'s") {
                read.push("my".to_owned());
                i = at + 2;
            } else {
                read.push("i".to_owned());
                i = at + 1;
                // "the user and others", "the user and their wife": the extractor's "we",
                // read as the user, as "we" is.
                if out.get(i).is_some_and(|w| w == "and") {
                    match out.get(i + 1).map(String::as_str) {
                        Some("others") => i += 2,
                        Some("their") if out.len() > i + 2 => i += 3,
                        _ => {}
                    }
                }
            }
            continue;
        }
        // "my husband's name is" is "my husband is".
        if read.last().is_some_and(|w| w != "my")
            && out[i] == "'s"
            && out.get(i + 1).is_some_and(|w| w == "name")
            && read.len() >= 2
            && read[read.len() - 2] == "my"
        {
            i += 2;
            continue;
        }
        // "we" and "our" speak for the user's household: "our puppy" is the user's.
        if matches!(out[i].as_str(), "we" | "our") {
            read.push(if out[i] == "we" { "i" } else { "my" }.to_owned());
            // "we are" is read as "I am".
            let verb = match out.get(i + 1).map(String::as_str) {
                Some("are") if out[i] == "we" => Some("am"),
                Some("were") if out[i] == "we" => Some("was"),
                _ => None,
            };
            if let Some(verb) = verb {
                read.push(verb.to_owned());
                i += 1;
            }
            i += 1;
            continue;
        }
        // "these days" is "nowadays".
        if out[i] == "these" && out.get(i + 1).is_some_and(|w| w == "days") {
            read.push("nowadays".to_owned());
            i += 2;
            continue;
        }
        read.push(out[i].clone());
        i += 1;
    }
    read
}

/// A word compared loosely: a plural or third-person `s` (or `es`, `ies`) and an `ed` dropped,
/// then a final `e`, so a word and its `s` form compare alike ("cycle", "cycles" → "cycl";
/// "watch", "watches" → "watch").
pub(crate) fn loose(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() >= 3) {
        return format!("{stem}y");
    }
    if let Some(stem) = word.strip_suffix("ed").filter(|s| s.len() >= 3) {
        return stem.strip_suffix(|c: char| c == 'e').unwrap_or(stem).to_owned();
    }
    let word = word.strip_suffix('s').filter(|s| s.len() >= 3 && !s.ends_with('s')).unwrap_or(word);
    word.strip_suffix('e').filter(|s| s.len() >= 3).unwrap_or(word).to_owned()
}

/// A verb's base, compared across its forms: `ing`, `ed` and `s` dropped, a doubled final
/// consonant and a final `e` undone ("smoking", "smokes", "smoke" → "smok"; "cancelled" →
/// "cancel"; "stopped" → "stop").
fn verb_base(word: &str) -> String {
    let stem = ["ing", "ed", "es", "s"]
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix).filter(|s| s.len() >= 3))
        .unwrap_or(word);
    let bytes = stem.as_bytes();
    let doubled = bytes.len() >= 4
        && bytes[bytes.len() - 1] == bytes[bytes.len() - 2]
        && !b"aeious".contains(&bytes[bytes.len() - 1]);
    let stem = if doubled { &stem[..stem.len() - 1] } else { stem };
    stem.strip_suffix('e').filter(|s| s.len() >= 3).unwrap_or(stem).to_owned()
}

/// The bases of a list of verbs, computed once.
type VerbBases = std::sync::LazyLock<Vec<String>>;

static CHANGE_BASES: VerbBases =
    std::sync::LazyLock::new(|| CHANGE_VERBS.iter().map(|v| verb_base(v)).collect());
static SHIFTING_BASES: VerbBases =
    std::sync::LazyLock::new(|| SHIFTING_VERBS.iter().map(|v| verb_base(v)).collect());
static ENDING_BASES: VerbBases =
    std::sync::LazyLock::new(|| ENDING_VERBS.iter().map(|v| verb_base(v)).collect());
static REVISING_BASES: VerbBases =
    std::sync::LazyLock::new(|| REVISING_VERBS.iter().map(|v| verb_base(v)).collect());

/// Whether `word` is a form of one of the verbs whose bases are `bases`.
fn is_form_of(word: &str, bases: &[String]) -> bool {
    let word = verb_base(word);
    bases.contains(&word)
}

fn is_change_verb(word: &str) -> bool {
    is_form_of(word, &CHANGE_BASES)
}

/// Whether `words[k]` moves something to another amount or level: a verb of
/// [`SHIFTING_VERBS`] followed by "to", directly or after "down", "up" or "back".
fn shifts_to(words: &[String], k: usize) -> bool {
    let to_at = |at: usize| words.get(at).is_some_and(|w| w == "to");
    is_form_of(&words[k], &SHIFTING_BASES)
        && (to_at(k + 1)
            || (words.get(k + 1).is_some_and(|w| matches!(w.as_str(), "down" | "up" | "back"))
                && to_at(k + 2)))
}

fn is_ending_verb(word: &str) -> bool {
    is_form_of(word, &ENDING_BASES)
}

fn is_revising_verb(word: &str) -> bool {
    is_form_of(word, &REVISING_BASES)
}

/// Whether a clause says that something changed. Explicitly: a verb of change, ending or
/// replacement, "anymore", "instead", "no longer", "back to". Implied: a word of time ("now",
/// "these days", "lately", "again"), a correction ("actually"), a verb of becoming, or a
/// change of state in the passive ("got promoted", "got engaged").
fn says_it_changed(words: &[String]) -> Change {
    // A verb of change says that something changed when it is what the clause asserts, not
    // when it is wanted, planned or described ("I have to replace the curtain", "trying to
    // become fluent", "a habit of leaving my shoes", "when people leave doors open").
    let asserted = |k: usize| {
        !words[k.saturating_sub(4)..k].iter().any(|w| {
            matches!(
                w.as_str(),
                "to" | "will"
                    | "would"
                    | "should"
                    | "could"
                    | "might"
                    | "must"
                    | "may"
                    | "can"
                    | "of"
                    | "about"
                    | "without"
                    | "when"
                    | "if"
                    | "get"
            )
        })
    };
    // A verb of change changes a value, not when it alternates ("I switch between sitting
    // and standing") or renews a worn thing with no new value named ("I replaced the
    // batteries in the smoke alarm", against "I replaced my phone with a Pixel 8").
    let changes_a_value = |k: usize, w: &str| {
        if words.get(k + 1).is_some_and(|next| next == "between") {
            return false;
        }
        verb_base(w) != verb_base("replace")
            || words[k + 1..].iter().any(|n| matches!(n.as_str(), "with" | "by" | "as" | "for"))
    };
    // After a possessive the word names a thing someone has ("on my Switch", "her leave"),
    // not what they did.
    let owned = |k: usize| k > 0 && is_possessive(&words[k - 1]);
    let explicit = words.iter().enumerate().any(|(k, w)| {
        matches!(w.as_str(), "anymore" | "instead")
            || (is_change_verb(w) && changes_a_value(k, w) && asserted(k) && !owned(k))
            || (shifts_to(words, k) && asserted(k) && !owned(k))
            || ((is_ending_verb(w) || is_revising_verb(w)) && asserted(k) && !owned(k))
    }) || has_phrase(words, &["back", "to"])
        || has_phrase(words, &["any", "more"])
        || has_phrase(words, &["no", "longer"])
        || ends_a_relationship(words);
    // "For six years now" says how long something has held, not that it changed.
    let after_a_span = |k: usize| {
        k > 0
            && matches!(
                words[k - 1].as_str(),
                "years" | "months" | "weeks" | "days" | "decade" | "decades" | "ages" | "while"
            )
            && words[k.saturating_sub(5)..k].iter().any(|w| w == "for")
    };
    let implied = words.iter().enumerate().any(|(k, w)| {
        (w == "now" && !after_a_span(k))
            || matches!(w.as_str(), "nowadays" | "lately" | "again" | "actually")
            || (BECOMING_VERBS.contains(&w.as_str()) && asserted(k))
    }) || words.windows(2).any(|w| {
        matches!(w[0].as_str(), "got" | "get" | "getting") && w[1].len() > 4 && w[1].ends_with("ed")
    });
    if explicit {
        Change::Explicit
    } else if implied {
        Change::Implied
    } else {
        Change::None
    }
}

/// Whether a clause ends a relationship ("we broke up", "Daniel and I split up").
fn ends_a_relationship(words: &[String]) -> bool {
    words.windows(2).any(|w| {
        matches!(w[0].as_str(), "split" | "splitting" | "broke" | "break" | "breaking")
            && w[1] == "up"
    })
}

/// Common verbs whose simple past does not end in `-ed` (and differs from the present).
pub(crate) const IRREGULAR_PAST: [&str; 108] = [
    "arose", "ate", "awoke", "began", "bent", "bit", "bled", "blew", "bought", "bred", "broke",
    "brought", "built", "burnt", "came", "caught", "chose", "clung", "crept", "dealt", "did",
    "drank", "dreamt", "drew", "drove", "dug", "fed", "fell", "felt", "fled", "flew", "flung",
    "forgave", "forgot", "fought", "found", "froze", "gave", "got", "grew", "heard", "held", "hid",
    "hung", "kept", "knelt", "knew", "leapt", "learnt", "led", "left", "lent", "lit", "lost",
    "made", "meant", "met", "mistook", "overcame", "paid", "ran", "rang", "rode", "rose", "said",
    "sang", "sank", "sat", "saw", "sent", "shone", "shook", "shot", "shrank", "slept", "slid",
    "sold", "sought", "spelt", "spent", "spoke", "sprang", "spun", "stank", "stole", "stood",
    "struck", "stuck", "stung", "swam", "swept", "swore", "swung", "taught", "thought", "threw",
    "told", "took", "tore", "trod", "went", "wept", "withdrew", "woke", "won", "wore", "wove",
    "wrote",
];

/// Words that place a clause in the past ("yesterday", "two weeks ago", "last weekend").
fn placed_in_the_past(words: &[String]) -> bool {
    words.iter().any(|w| matches!(w.as_str(), "yesterday" | "ago" | "once"))
        || words.windows(2).any(|w| {
            w[0] == "last"
                && matches!(
                    w[1].as_str(),
                    "night" | "week" | "weekend" | "month" | "year" | "summer" | "winter"
                )
        })
        || has_phrase(words, &["this", "morning"])
}

/// Whether a verb form is a simple past ("unclogged", "sold").
fn simple_past(verb: &str) -> bool {
    let irregular = |v: &str| IRREGULAR_PAST.contains(&v);
    (verb.len() > 4 && verb.ends_with("ed"))
        || irregular(verb)
        || verb.strip_prefix("re").is_some_and(irregular)
}

/// Whether a clause tells of something that happened: its first verb after the subject is
/// in the simple past (not "have …ed", which says how things stand), or a word of time
/// places it in the past.
fn tells_an_event(words: &[String]) -> bool {
    if placed_in_the_past(words) {
        return true;
    }
    // "I …", "she …", or a name and its verb ("Rosa sold …").
    let subject = match words.first().map(String::as_str) {
        Some("i" | "he" | "she" | "they") => 1,
        _ if words.get(1).is_some_and(|w| simple_past(w)) => 1,
        _ => return false,
    };
    let mut perfect = false;
    for w in &words[subject..] {
        match w.as_str() {
            "have" | "has" | "had" | "am" | "is" | "are" | "be" | "been" => perfect = true,
            "just" | "recently" | "finally" | "also" | "actually" | "really" | "never"
            | "always" => {}
            verb => return !perfect && simple_past(verb),
        }
    }
    false
}

fn is_stopword(word: &str) -> bool {
    crate::retrieval::is_stopword(word)
}

/// A slot's or value's word as it is compared: a noun by the name of its synonyms' group
/// ("movies" and "film" alike), then loosely stemmed; a number word as it is.
fn term(word: &str) -> String {
    if crate::lifecycle::is_number_word(word) {
        return word.to_owned();
    }
    if let Some(count) = count_of_ordinal(word) {
        return count.to_owned();
    }
    loose(crate::lexicon::canonical(word))
}

/// The count an ordinal says there is ("our third child": three children; "the fourth
/// floor" is another number than "the third floor"). "First" and "second" are left as said:
/// they as often mean "earliest" or a length of time.
fn count_of_ordinal(word: &str) -> Option<&'static str> {
    const ORDINALS: [(&str, &str); 8] = [
        ("third", "three"),
        ("fourth", "four"),
        ("fifth", "five"),
        ("sixth", "six"),
        ("seventh", "seven"),
        ("eighth", "eight"),
        ("ninth", "nine"),
        ("tenth", "ten"),
    ];
    ORDINALS.iter().find(|(ordinal, _)| *ordinal == word).map(|(_, count)| *count)
}

/// Whether a lowercase word is a possessive determiner ("my", "their").
fn is_possessive(word: &str) -> bool {
    matches!(word, "my" | "your" | "his" | "her" | "its" | "our" | "their")
}

/// The content words of a value, compared as [`term`]s, time words left out.
fn value_words(words: &[String]) -> HashSet<String> {
    words
        .iter()
        .enumerate()
        // "Back" says one returned ("I'm back", "back to light mode") unless something owns
        // it or it is one ("my back", "a back room").
        .filter(|(k, w)| {
            *w != "back"
                || k.checked_sub(1).is_some_and(|before| {
                    let before = words[before].as_str();
                    is_possessive(before) || matches!(before, "the" | "a" | "an")
                })
        })
        .map(|(_, w)| w)
        .filter(|w| !is_stopword(w) && !TIME_WORDS.contains(&w.as_str()) && *w != "'s")
        // "ones" stands for the noun before it ("brass ones", "black ones").
        .filter(|w| {
            !matches!(w.as_str(), "called" | "named" | "go" | "favourite" | "favorite" | "ones")
        })
        .map(|w| term(w))
        .collect()
}

/// A subject's words without the auxiliaries before its copula ("my favourite fruit has
/// been cherries": the slot is "favourite fruit").
fn without_auxiliaries(words: &[String]) -> &[String] {
    let end = words.iter().rposition(|w| !matches!(w.as_str(), "has" | "have" | "had"));
    &words[..end.map_or(0, |e| e + 1)]
}

/// Words that frame what is said without being part of it ("honestly", "please", "ok").
fn is_interjection(word: &str) -> bool {
    matches!(
        word,
        "actually"
            | "honestly"
            | "oh"
            | "ok"
            | "okay"
            | "sorry"
            | "yes"
            | "yeah"
            | "anyway"
            | "btw"
            | "please"
            | "thanks"
            | "thank"
            | "cheers"
            | "hi"
            | "hello"
            | "hey"
    )
}

/// The words of a slot phrase, compared as [`term`]s; adverbs of time and degree, and
/// framing read after the clause ("… my go-to drink, honestly"), left out.
fn slot_words(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| !TIME_WORDS.contains(&w.as_str()) && !matches!(w.as_str(), "the" | "a" | "an"))
        .filter(|w| !is_interjection(w))
        .map(|w| term(w))
        .collect()
}

/// A noun phrase's words, up to a preposition that adds when, where or with whom ("my mobile
/// for about a year" is "my mobile"); "of" and "to" stay ("kind of music", "sport to watch").
fn noun_phrase(words: &[String]) -> &[String] {
    let end = words
        .iter()
        .position(|w| {
            matches!(
                w.as_str(),
                "for"
                    | "since"
                    | "in"
                    | "at"
                    | "on"
                    | "from"
                    | "with"
                    | "during"
                    | "until"
                    | "till"
            )
        })
        .unwrap_or(words.len());
    &words[..end]
}

/// The noun a slot is about: its last word, or the last before `of` ("shade of blue") or
/// before an infinitive ("sport to watch").
fn head(slot: &[String]) -> Option<&str> {
    let end = slot.iter().position(|w| w == "of" || w == "to").unwrap_or(slot.len());
    let before = slot[..end].last().map(String::as_str);
    // "favourite kind of music" is about music: a noun of kind yields to the noun after "of".
    let of_kind = before.is_some_and(|w| KIND_TERMS.iter().any(|k| k == w));
    match slot.get(end) {
        Some(of) if of == "of" && of_kind => slot.last().map(String::as_str).or(before),
        _ => before,
    }
}

/// Nouns that name a kind of something rather than a thing ("kind of music", "type of
/// coffee").
const KIND_NOUNS: [&str; 4] = ["kind", "sort", "type", "genre"];

/// [`KIND_NOUNS`] as [`term`]s, computed once: a slot's head is read for every pair compared.
static KIND_TERMS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| KIND_NOUNS.iter().map(|k| term(k)).collect());

fn has_phrase(words: &[String], phrase: &[&str]) -> bool {
    words.windows(phrase.len()).any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}

/// A clause's words, and the framing phrase set off before it ("From now on", "After
/// rewatching it"), which tells when or how but names no slot or value.
struct Clause {
    words: Vec<String>,
    framing: Vec<String>,
}

/// The clauses of a statement: split at punctuation inside sentences and at conjunctions. A
/// short phrase set off by a comma with no subject of its own ("From now on, …", "After
/// rewatching it, …") frames the clauses after it.
fn clauses(statement: &str) -> Vec<Clause> {
    let mut out: Vec<Clause> = Vec::new();
    for (sentence, question) in crate::extract::sentences(statement) {
        // A question claims nothing.
        if question {
            continue;
        }
        let mut framing: Vec<String> = Vec::new();
        let sentence_start = out.len();
        for part in split_outside_numbers(&sentence) {
            let mut words = tokens(part);
            if words.is_empty() {
                continue;
            }
            let subject = words.iter().any(|w| matches!(w.as_str(), "i" | "my" | "me"));
            // "I prefer long, detailed answers from you": a part without a subject that
            // names a thing "from you" goes on the parts before it, in this sentence.
            let continues = !subject && ends_from_you(part);
            if continues {
                let mut joined = std::mem::take(&mut framing);
                joined.append(&mut words);
                if out.len() > sentence_start
                    && let Some(before) = out.last_mut()
                {
                    before.words.extend(joined);
                    continue;
                }
                words = joined;
            }
            if words.len() <= 3 && !subject {
                framing.extend(words);
                continue;
            }
            let framing = std::mem::take(&mut framing);
            out.extend(
                split_at_conjunctions(&words)
                    .into_iter()
                    .map(|words| Clause { words, framing: framing.clone() }),
            );
        }
        if !framing.is_empty() {
            out.push(Clause { words: framing, framing: Vec::new() });
        }
    }
    out
}

/// Whether a text ends by naming something "from you", the two words whole ("from YouTube"
/// does not), with at most words of time or "please" after them ("detailed answers from
/// you now", "… from you from now on").
pub(crate) fn ends_from_you(text: &str) -> bool {
    let words = tokens(text);
    words.windows(2).rposition(|w| w[0] == "from" && w[1] == "you").is_some_and(|at| {
        words[at + 2..].iter().all(|w| {
            TIME_WORDS.contains(&w.as_str())
                || matches!(w.as_str(), "please" | "these" | "days" | "from" | "on")
        })
    })
}

/// A sentence's parts between commas, colons and brackets, except a comma or colon inside a
/// number ("$65,000", "9:30").
fn split_outside_numbers(sentence: &str) -> Vec<&str> {
    let bytes = sentence.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    for (at, c) in sentence.char_indices() {
        let inside_number = matches!(c, ',' | ':')
            && at > 0
            && bytes[at - 1].is_ascii_digit()
            && bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
        if matches!(c, ',' | ':' | '(' | ')') && !inside_number {
            parts.push(&sentence[start..at]);
            start = at + 1;
        }
    }
    parts.push(&sentence[start..]);
    parts
}

/// A conjunction ends a clause when a new subject or predicate follows it ("… and I love
/// chess", "… and now drive a Tesla"), not inside a list ("Mondays and Wednesdays").
fn split_at_conjunctions(words: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    // "Daniel and I split up" is "I split up with Daniel": one subject, not two clauses.
    let mut companion: Option<&String> = None;
    let mut skip = 0;
    for (k, word) in words.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        if k == 1
            && word == "and"
            && words.get(2).is_some_and(|w| w == "i")
            && !is_stopword(&words[0])
            && !matches!(words[0].as_str(), "he" | "she" | "they" | "it" | "you")
        {
            companion = Some(&words[0]);
            current = vec!["i".to_owned()];
            skip = 1;
            continue;
        }
        let conjunction =
            matches!(word.as_str(), "and" | "but" | "so" | "because" | "though" | "although");
        let next_starts = words.get(k + 1).is_some_and(|n| {
            matches!(
                n.as_str(),
                "i" | "my"
                    | "we"
                    | "our"
                    | "he"
                    | "she"
                    | "they"
                    | "it"
                    | "now"
                    | "then"
                    | "also"
                    | "still"
                    | "never"
                    | "just"
            )
        });
        if conjunction && next_starts && !current.is_empty() {
            if let Some(name) = companion.take() {
                current.extend(["with".to_owned(), name.clone()]);
            }
            out.push(std::mem::take(&mut current));
            continue;
        }
        current.push(word.clone());
    }
    if let Some(name) = companion {
        current.extend(["with".to_owned(), name.clone()]);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Leading words that only frame a clause ("actually", "honestly", "these days").
fn skip_framing(words: &[String]) -> &[String] {
    let mut start = 0;
    while let Some(w) = words.get(start) {
        let framing = is_interjection(w)
            || matches!(
                w.as_str(),
                "well" | "then" | "still" | "really" | "also" | "plus" | "and" | "but" | "so"
            )
            || TIME_WORDS.contains(&w.as_str());
        if !framing {
            break;
        }
        start += 1;
    }
    let words = &words[start..];
    // "Since the move I'm on Eastern time", "After the reorg I report to Tom": an adverbial
    // phrase before the subject.
    let adverbial = words.first().is_some_and(|w| {
        matches!(
            w.as_str(),
            "since"
                | "after"
                | "before"
                | "when"
                | "once"
                | "following"
                | "from"
                | "in"
                | "at"
                | "on"
                | "for"
                | "during"
                | "over"
                | "until"
                | "somewhere"
        )
    });
    match words.iter().take(6).position(|w| w == "i" || w == "my") {
        Some(subject) if adverbial => &words[subject..],
        _ => words,
    }
}

/// What a clause asks of the assistant's own things: the thing ("answers") and how the user
/// wants it ("short"), from a standing request ("keep your answers short", "write your code
/// examples in Python") or a statement of what the user prefers ("I'd like shorter answers
/// from you", "I want your replies in bullet points"). A one-off task ("rewrite your answer
/// in Spanish", "check your email"), a compliment ("I like your answers") or a need ("I
/// need your help") asks for nothing that stands.
fn of_the_assistant(words: &[String]) -> Option<(&str, &[String])> {
    let first = words.first()?.as_str();
    // "Keep your answers short": a verb that sets how things are to be, then the
    // assistant's thing and how it should be.
    if matches!(
        first,
        "keep" | "make" | "write" | "format" | "give" | "put" | "start" | "end" | "limit" | "cap"
    ) && words.get(1).is_some_and(|w| w == "your")
    {
        return thing_and_how(&words[2..]);
    }
    // "I'd like …", "I want …", or the extractor's "Prefers …" about the user.
    let (verb, wants) = match first {
        "i" => {
            let between = words[1..]
                .iter()
                .take_while(|w| BETWEEN_SUBJECT_AND_VERB.contains(&w.as_str()))
                .count();
            let verb = 1 + between;
            let would = words[1..verb].iter().any(|w| w == "would");
            let wants = match words.get(verb).map(String::as_str) {
                Some("prefer" | "want") => true,
                Some("like") => would,
                _ => false,
            };
            (verb, wants)
        }
        "prefers" | "wants" => (0, true),
        _ => return None,
    };
    if !wants {
        return None;
    }
    let object = verb + 1;
    // "I want your replies in bullet points".
    if words.get(object).is_some_and(|w| w == "your") {
        return thing_and_how(&words[object + 1..]);
    }
    // "I prefer long, detailed answers from you": the words before the thing describe it.
    let from_you = words.windows(2).position(|w| w[0] == "from" && w[1] == "you")?;
    (from_you > object + 1).then(|| (words[from_you - 1].as_str(), &words[object..from_you - 1]))
}

/// A thing and how it should be, from the words after "your": before a preposition that
/// says how ("code examples" in "code examples in Python"), the words name the thing;
/// otherwise the last of them is how it should be ("code comments short", "answers short
/// from now on").
fn thing_and_how(words: &[String]) -> Option<(&str, &[String])> {
    let cut = words.iter().position(|w| {
        matches!(
            w.as_str(),
            "in" | "at"
                | "on"
                | "for"
                | "with"
                | "to"
                | "as"
                | "like"
                | "under"
                | "without"
                | "from"
                | "and"
                | "or"
                | "but"
        )
    });
    let (named, rest) = words.split_at(cut.unwrap_or(words.len()));
    let says_how = rest.first().is_some_and(|w| !matches!(w.as_str(), "and" | "or" | "but"))
        && !value_words(rest).is_empty();
    let thing_end = if says_how {
        named.len()
    } else {
        // Words of time say when, not how ("short now").
        named.iter().rposition(|w| !TIME_WORDS.contains(&w.as_str()) && w != "please")?
    };
    let thing = named[..thing_end].last()?;
    let how = &words[thing_end..];
    (!value_words(how).is_empty()).then_some((thing.as_str(), how))
}

/// The claim of a clause: its words, and the phrase that frames it (read for what it says
/// of change, addition and the past, not for the slot or value).
fn claim_of(clause: &[String], framing: &[String]) -> Option<Claim> {
    let all: Vec<String> = clause.iter().chain(framing).cloned().collect();
    let all = all.as_slice();
    let additive = all
        .iter()
        .any(|w| matches!(w.as_str(), "also" | "too" | "another" | "additionally" | "both"))
        || has_phrase(all, &["as", "well"]);
    let change = says_it_changed(all);
    let past = has_phrase(all, &["used", "to"])
        || all.iter().any(|w| matches!(w.as_str(), "formerly" | "previously"));
    // "I don't get up until 8" says when the user gets up, not that they don't ("I'm not
    // drinking until my birthday" does say they don't).
    let not_until = all.windows(2).any(|w| {
        matches!(w[0].as_str(), "until" | "till")
            && (clock(&w[1]).is_some() || bare_hour(&w[1]).is_some())
    });
    let negated = (!not_until && all.iter().any(|w| matches!(w.as_str(), "not" | "never")))
        || (change == Change::Explicit && all.iter().any(|w| is_ending_verb(w)))
        || ends_a_relationship(all)
        || has_phrase(all, &["no", "longer"]);
    let event = tells_an_event(skip_framing(all));
    let words = skip_framing(clause);
    let first = words.first()?;
    let claim = |holder, kind, slot: Vec<String>, value: &[String]| {
        let measure = measure_of(words, &slot, value);
        Claim {
            holder,
            kind,
            slot,
            value: value_words(value),
            topic: HashSet::new(),
            topic_head: None,
            in_kind: false,
            replaced: HashSet::new(),
            additive,
            past,
            change,
            negated,
            form: ValueForm::of(value),
            event,
            measure,
            proper: false,
            denied: denied_words(value),
        }
    };
    // "the landlord raised my rent to $1,700", "they cut my hours to 20 a week": what the
    // user's attribute became, whoever changed it.
    if let Some(m) = words.iter().skip(1).position(|w| w == "my").map(|m| m + 1)
        && let Some(to) = words[m..].iter().position(|w| w == "to").map(|t| t + m)
        && (2..=4).contains(&(to - m))
        && words.get(to + 1).is_some_and(|w| amount(w).is_some())
    {
        let slot = slot_words(&words[m + 1..to]);
        return Some(claim(Holder::User, SlotKind::Attribute, slot, &words[to + 1..]));
    }
    // "I dyed my hair blonde", "we painted our front door dark green": a verb that gives
    // what it acts on a colour says what the user's attribute is now.
    if matches!(first.as_str(), "i" | "we")
        && words.get(1).is_some_and(|verb| COLOURING_VERBS.contains(&verb.as_str()))
        && words.get(2).is_some_and(|w| matches!(w.as_str(), "my" | "our"))
        && (5..=7).contains(&words.len())
    {
        // The colour is the last word, with a shade before it ("dark green").
        let shade = matches!(words[words.len() - 2].as_str(), "dark" | "light" | "bright" | "pale");
        let value_at = words.len() - 1 - usize::from(shade);
        // "my sister's hair" is the sister's.
        if value_at > 3 && !words[3..value_at].iter().any(|w| w == "'s") {
            let slot = slot_words(&words[3..value_at]);
            return Some(claim(Holder::User, SlotKind::Attribute, slot, &words[value_at..]));
        }
    }
    // "Keep your answers short", "I prefer long, detailed answers from you": how the user
    // wants the assistant's answers is the user's standing request. Its slot is the thing of
    // the assistant's it names; like an activity, another request holds beside it ("keep
    // your answers friendly") unless one says it changed.
    if let Some((thing, value)) = of_the_assistant(words) {
        let thing = as_reply(thing).unwrap_or_else(|| term(thing));
        return Some(claim(Holder::User, SlotKind::Activity, vec!["you".to_owned(), thing], value));
    }
    // "Call me Jim", "(please) answer me in French", "reply to me in German": a request of
    // how to treat the user is the user's own standing preference.
    let me_at = match (words.get(1).map(String::as_str), words.get(2).map(String::as_str)) {
        (Some("me"), _) => Some(2),
        (Some("to"), Some("me")) => Some(3),
        _ => None,
    };
    // "I'd rather you call me James", "I'd like you to reply to me in German": the same
    // request, said as what the user wants.
    if first == "i"
        && let Some(you) = words.iter().position(|w| w == "you")
        && let Some(verb) =
            words.get(you + 1 + usize::from(words.get(you + 1).is_some_and(|w| w == "to")))
        && let Some(me) = words[you..].iter().position(|w| w == "me").map(|m| m + you)
        && me <= you + 4
        && value_words(&words[me + 1..]).len() <= 3
        && !matches!(
            verb.as_str(),
            "told"
                | "tell"
                | "let"
                | "asked"
                | "showed"
                | "gave"
                | "can"
                | "could"
                | "should"
                | "would"
                | "will"
                | "might"
                | "must"
                | "do"
                | "did"
                | "does"
                | "not"
                | "have"
                | "had"
                | "know"
                | "knew"
        )
    {
        return Some(claim(
            Holder::User,
            SlotKind::Activity,
            vec![request_verb(verb)],
            &words[me + 1..],
        ));
    }
    if let Some(after) = me_at
        && value_words(&words[after..]).len() <= 3
        && !matches!(first.as_str(), "i" | "my" | "is" | "are" | "was" | "tell" | "told" | "let")
    {
        return Some(claim(
            Holder::User,
            SlotKind::Activity,
            vec![request_verb(first)],
            &words[after..],
        ));
    }
    // "my <slot> is <value>", or "my <someone> <verb> <value>".
    if first == "my" {
        if let Some(q) = words.iter().position(|w| COPULAS.contains(&w.as_str())) {
            let value = &words[q + 1..];
            // "my wife's favourite food is …": someone else's attribute.
            if words.get(2).is_some_and(|w| w == "'s") && q > 3 {
                let slot = slot_words(without_auxiliaries(&words[3..q]));
                return Some(claim(
                    Holder::Other(words[1].clone()),
                    SlotKind::Attribute,
                    slot,
                    value,
                ));
            }
            let slot = slot_words(without_auxiliaries(&words[1..q]));
            return (!slot.is_empty())
                .then(|| claim(Holder::User, SlotKind::Attribute, slot, value));
        }
        // "My commute takes 20 minutes", "my rent costs $1,500": a verb of measure gives an
        // attribute of the user's its amount, as "my commute is an hour long" does.
        if let Some(verb) = words.iter().take(5).position(|w| MEASURING_VERBS.contains(&w.as_str()))
            && verb >= 2
        {
            let measured = claim(
                Holder::User,
                SlotKind::Attribute,
                slot_words(&words[1..verb]),
                &words[verb + 1..],
            );
            if measured.measure.is_some() {
                return Some(measured);
            }
        }
        let someone = words.get(1)?.clone();
        // "my laptop only runs Ubuntu": adverbs before the verb are not it.
        let verb_at = 2 + words[2..]
            .iter()
            .position(|w| !BETWEEN_SUBJECT_AND_VERB.contains(&w.as_str()))
            .unwrap_or(0);
        let verb = words.get(verb_at)?;
        return Some(claim(
            Holder::Other(someone),
            SlotKind::Activity,
            vec![loose(verb)],
            &words[verb_at + 1..],
        ));
    }
    // "<value> is (has become) my <slot>", "<value> has replaced … as my <slot>", "I
    // consider <value> my <slot>".
    if let Some(m) = words.iter().position(|w| w == "my")
        && m > 0
        && (COPULAS.contains(&words[m - 1].as_str())
            || (words[m - 1] == "as" && first != "i")
            || words[..m].iter().any(|w| w == "consider"))
    {
        let start = usize::from(first == "i")
            * words.iter().position(|w| w == "consider").map_or(0, |c| c + 1);
        let q = words[..m]
            .iter()
            .position(|w| COPULAS.contains(&w.as_str()) || w == "has")
            .unwrap_or(m);
        let value = &words[start..q.max(start)];
        let slot = slot_words(noun_phrase(&words[m + 1..]));
        return (!slot.is_empty()).then(|| claim(Holder::User, SlotKind::Attribute, slot, value));
    }
    // "<value> is the <slot> I love most", "the <slot> I love most is <value>": the slot is
    // named by a relative clause about the user.
    if let Some((slot, value)) = relative_attribute(words) {
        return Some(claim(Holder::User, SlotKind::Attribute, slot, value));
    }
    // "I <verb> …", with the subject left out as the extractor writes ("Lives in Dallas").
    let rest = if first == "i" {
        &words[1..]
    } else if first.ends_with('s')
        && words.get(1).is_some_and(|w| !COPULAS.contains(&w.as_str()))
        && !is_stopword(first)
    {
        words
    } else {
        // "<name> <verb> …": someone else. A relative clause ("which makes …", "who lives
        // …") is about what it follows, not a holder of its own.
        if RELATIVE_PRONOUNS.contains(&first.as_str())
            || matches!(first.as_str(), "that" | "it" | "this" | "there")
        {
            return None;
        }
        // A name is followed by its verb in the third person or the past ("Theo sold …",
        // "Dana is a nurse", "Jake just moved …"); anything else ("hold on", "do you …",
        // "help me …") is no statement about someone.
        let verb_at = words[1..]
            .iter()
            .position(|w| !BETWEEN_SUBJECT_AND_VERB.contains(&w.as_str()))
            .map(|k| k + 1)?;
        let verb = &words[verb_at];
        let third_person = verb.len() > 2 && verb.ends_with('s') && !verb.ends_with("ss");
        if !(third_person || simple_past(verb) || COPULAS.contains(&verb.as_str())) {
            return None;
        }
        let verb = words.get(1)?;
        return Some(claim(
            Holder::Other(first.clone()),
            SlotKind::Activity,
            vec![loose(verb)],
            &words[2..],
        ));
    };
    let mut start = rest.iter().position(|w| !BETWEEN_SUBJECT_AND_VERB.contains(&w.as_str()))?;
    // "I have two kids", "I've a dog": "have" before its object is the verb, not an
    // auxiliary.
    let object_follows = |w: &str| {
        matches!(w, "a" | "an" | "the" | "no" | "some" | "my")
            || crate::lifecycle::is_number_word(w)
            || w.starts_with(|c: char| c.is_ascii_digit())
    };
    if start > 0
        && matches!(rest[start - 1].as_str(), "have" | "has" | "had")
        && object_follows(&rest[start])
    {
        start -= 1;
    }
    let verb = &rest[start];
    let after = &rest[start + 1..];
    let shifts = shifts_to(rest, start);
    if is_change_verb(verb) || shifts {
        // "I moved my savings to Ally": what moved, then where to. "I swapped the door
        // handles for brass ones", "I replaced my phone with a Pixel 8": what was given up,
        // then what took its place.
        // "I switched over from iPhone", "we moved out of the apartment": what was given
        // up, with nothing said of what took its place.
        let to = after.iter().position(|w| w == "to").map_or(0, |t| t + 1);
        let given_up = after.iter().position(|w| w == "for" || w == "with").filter(|&at| at > 0);
        let from = after
            .iter()
            .enumerate()
            .position(|(k, w)| w == "from" || (w == "of" && k > 0 && after[k - 1] == "out"));
        let (topic, value) = match (given_up, from) {
            _ if shifts => (&after[..0], &after[to..]),
            (Some(at), _) if to == 0 => (&after[..at], &after[at + 1..]),
            (None, Some(at)) if to == 0 => (&after[at + 1..], &after[..at]),
            _ => (&after[..to.saturating_sub(1)], &after[to..]),
        };
        let mut open = claim(Holder::User, SlotKind::Open, Vec::new(), value);
        if from.is_some() && to == 0 {
            // "… from iPhone last year": when it changed is no part of what was given up.
            let when = |w: &&String| {
                let w = w.as_str();
                w == "ago"
                    || crate::answer::TIME_OPENERS.contains(&w)
                    || crate::answer::TIME_UNITS.contains(&w.trim_end_matches('s'))
            };
            let given_up: Vec<String> = topic.iter().filter(|w| !when(w)).cloned().collect();
            open.topic = value_words(&given_up);
        } else {
            open.topic = value_words(topic);
            // "ones" and "one" stand for the noun given up ("brass ones", "a new one").
            open.in_kind = !open.topic.is_empty()
                && value.last().is_some_and(|w| matches!(w.as_str(), "ones" | "one"));
            open.topic_head = noun_phrase(topic)
                .iter()
                .rev()
                .find_map(|w| value_words(std::slice::from_ref(w)).into_iter().next());
        }
        return Some(open);
    }
    // "… as my <slot>": the slot is named.
    if let Some(m) = after.iter().position(|w| w == "my")
        && m > 0
        && after[m - 1] == "as"
    {
        let slot = slot_words(noun_phrase(&after[m + 1..]));
        return Some(claim(Holder::User, SlotKind::Attribute, slot, &after[..m - 1]));
    }
    let mut slot = vec![loose(verb)];
    let mut value = after;
    if let Some(preposition) = after.first()
        && matches!(
            preposition.as_str(),
            "in" | "at" | "on" | "with" | "for" | "from" | "to" | "as"
        )
    {
        slot.push(preposition.clone());
        value = &after[1..];
    }
    Some(claim(Holder::User, SlotKind::Activity, slot, value))
}

/// An attribute named by a relative clause about the user: "Mary Oliver is the writer I love
/// most", "the book I love most now is Dune", "Japanese has overtaken Italian as the cuisine
/// I love most": the slot's words and the value's.
fn relative_attribute(words: &[String]) -> Option<(Vec<String>, &[String])> {
    let i = words.iter().position(|w| w == "i")?;
    // The noun phrase the relative clause describes: from "the" to "I".
    let the = words[..i].iter().rposition(|w| w == "the")?;
    let slot = slot_words(&words[the + 1..i]);
    if slot.is_empty() || slot.len() > 3 {
        return None;
    }
    let copula = |w: &String| COPULAS.contains(&w.as_str());
    if the == 0 {
        // "the <slot> I … is <value>".
        let q = words[i..].iter().position(copula)? + i;
        return Some((slot, &words[q + 1..]));
    }
    // "<value> is (has become) the <slot> I …", "<value> has overtaken <old> as the <slot> I …".
    let before = &words[..the];
    let q = before.iter().position(|w| copula(w) || w == "has")?;
    (q > 0 && (copula(&before[the - 1]) || before[the - 1] == "as")).then(|| (slot, &before[..q]))
}

/// The claims of a statement, one per clause that makes one.
pub fn claims(statement: &str) -> Vec<Claim> {
    let names = proper_names(statement);
    let mut out = Vec::new();
    let mut said_by_i = false;
    // The last thing of the user's a clause named ("my laptop"), which a later clause's "it"
    // stands for ("I wiped my laptop and it only runs Ubuntu now").
    let mut named: Option<String> = None;
    // Whether a clause before told what changed, or what happened.
    let (mut changed_before, mut happened_before) = (false, false);
    for Clause { words: clause, framing } in clauses(statement) {
        // As subject or as object ("I bought my apartment, so I own it now").
        let clause = match &named {
            Some(thing) if clause.iter().any(|w| w == "it") => clause
                .into_iter()
                .flat_map(|w| match w.as_str() {
                    "it" => vec!["my".to_owned(), thing.clone()],
                    _ => vec![w],
                })
                .collect(),
            _ => clause,
        };
        named =
            clause.windows(2).rfind(|w| w[0] == "my" && !is_stopword(&w[1])).map(|w| w[1].clone());
        // "… instead of Max": what the clause's value takes the place of is no part of it.
        let (clause, framing, replaced) =
            match clause.windows(2).position(|w| w[0] == "instead" && w[1] == "of") {
                Some(at) if at > 0 => {
                    let replaced = value_words(&clause[at + 2..]);
                    let mut framing = framing;
                    framing.push("instead".to_owned());
                    (clause[..at].to_vec(), framing, replaced)
                }
                _ => (clause, framing, HashSet::new()),
            };
        let framed = skip_framing(&clause);
        let subject = |w: &String| matches!(w.as_str(), "i" | "my" | "we" | "our" | "me");
        // "I sold the Civic and now drive a Tesla": a clause with no subject of its own
        // after one of the user's continues the user's.
        let own_subject = framed.first().is_some_and(|w| {
            matches!(w.as_str(), "it" | "he" | "she" | "they" | "this" | "that" | "there")
                || RELATIVE_PRONOUNS.contains(&w.as_str())
        });
        let claim = if said_by_i && !own_subject && !clause.iter().any(subject) {
            let mut continued = vec!["i".to_owned()];
            continued.extend(clause.iter().cloned());
            claim_of(&continued, &framing)
        } else {
            said_by_i = framed.first().is_some_and(|w| w == "i");
            claim_of(&clause, &framing)
        };
        let Some(mut claim) = claim else { continue };
        // "a Pixel 8 last week": a name, with a number and words of when it happened.
        claim.proper = claim.value.iter().any(|w| names.contains(w))
            && claim.value.iter().all(|w| {
                names.contains(w) || w.starts_with(|c: char| c.is_ascii_digit()) || said_when(w)
            });
        // "I got promoted, so my title is senior data scientist now", "I bought my apartment,
        // so I own it now": a clause that says how things stand now, after one that tells what
        // changed, or after one that tells what happened and saying "now", says plainly that
        // it changed ("I once won a raffle prize, which turned out to be a set of towels" does
        // not).
        let says_now = clause.iter().any(|w| matches!(w.as_str(), "now" | "nowadays"));
        if claim.change == Change::Implied && (changed_before || (happened_before && says_now)) {
            claim.change = Change::Explicit;
        }
        changed_before |= claim.change != Change::None;
        happened_before |= claim.event;
        out.push(Claim { replaced, ..claim });
    }
    out
}

/// The words of a statement with a capital letter, other than at a sentence's start or as
/// "I", as [`term`]s: the words of its proper names.
fn proper_names(statement: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    for (sentence, _) in crate::extract::sentences(statement) {
        for raw in sentence.split_whitespace().skip(1) {
            let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
            let word = word.split(['\'', '\u{2019}']).next().unwrap_or(word);
            // Capitalised, or with a capital inside ("iPhone", "eBay").
            if word.chars().any(char::is_uppercase) && word != "I" {
                names.insert(term(&word.to_lowercase()));
            }
        }
    }
    names
}

/// The content words a value says are absent: those after "no" or "without" ("black with
/// no sugar", "without milk"), up to the next word that is not one.
fn denied_words(value: &[String]) -> HashSet<String> {
    let mut denied = HashSet::new();
    for (k, word) in value.iter().enumerate() {
        if matches!(word.as_str(), "no" | "without") {
            value[k + 1..]
                .iter()
                .take(2)
                .take_while(|w| !is_stopword(w) && !matches!(w.as_str(), "longer" | "more"))
                .for_each(|w| {
                    denied.insert(term(w));
                });
        }
    }
    denied
}

/// Signs that open an amount of money.
const CURRENCY_SIGNS: [char; 3] = ['$', '£', '€'];

/// A number as said ("1,500", "9.5", "$72,000"): its value, and whether a currency sign
/// opened it.
fn amount(word: &str) -> Option<(f64, bool)> {
    let digits = word.trim_start_matches(CURRENCY_SIGNS);
    let money = digits.len() < word.len();
    (digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | '.')))
    .then(|| digits.replace(',', "").parse::<f64>().ok())
    .flatten()
    .map(|value| (value, money))
}

/// A time of day as one word ("6am", "11pm", "9:30", "7:45pm", "noon"), in minutes after
/// midnight.
pub(crate) fn clock(word: &str) -> Option<f64> {
    match word {
        "noon" | "midday" => return Some(720.0),
        "midnight" => return Some(0.0),
        _ => {}
    }
    let (time, half) = match word.strip_suffix("am") {
        Some(t) => (t, Some(false)),
        None => match word.strip_suffix("pm") {
            Some(t) => (t, Some(true)),
            None => (word, None),
        },
    };
    let (hours, minutes) = match time.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None if half.is_some() => (time.parse::<u32>().ok()?, 0),
        _ => return None,
    };
    if minutes > 59 || (half.is_some() && !(1..=12).contains(&hours)) {
        return None;
    }
    let hours = match half {
        Some(pm) => hours % 12 + if pm { 12 } else { 0 },
        None => hours,
    };
    // "24:00" is the end of the day; "24:30" is no time.
    let minutes = hours.checked_mul(60)? + minutes;
    (minutes <= 24 * 60).then_some(f64::from(minutes))
}

/// A whole hour of 1 to 12 said as a bare number ("at 8", "until 7"), in minutes after
/// midnight, taken as morning: both statements compared make the same assumption.
fn bare_hour(word: &str) -> Option<f64> {
    let (number, money) = amount(word)?;
    (!money && (1.0..=12.0).contains(&number) && number.fract() == 0.0).then_some(number * 60.0)
}

/// A unit word's dimension and its size in the dimension's one unit.
fn unit(word: &str) -> Option<(Dimension, f64)> {
    Some(match word {
        "kg" | "kgs" | "kilo" | "kilos" | "kilogram" | "kilograms" => (Dimension::Mass, 1.0),
        "lb" | "lbs" | "pound" | "pounds" => (Dimension::Mass, 0.4536),
        "stone" => (Dimension::Mass, 6.35),
        "minute" | "minutes" | "min" | "mins" => (Dimension::Duration, 1.0),
        "hour" | "hours" | "hr" | "hrs" => (Dimension::Duration, 60.0),
        "km" | "kms" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => {
            (Dimension::Distance, 1.0)
        }
        "mile" | "miles" => (Dimension::Distance, 1.609),
        "dollars" | "dollar" | "bucks" | "euros" | "euro" | "usd" | "eur" | "gbp" => {
            (Dimension::Money, 1.0)
        }
        _ => return None,
    })
}

/// Which day of the week a word names, as said of a habit ("Mondays", "weekends" are two
/// days; a lone "Monday" is a date unless "every" comes before it).
pub(crate) fn weekday(word: &str, every: bool) -> Option<u8> {
    if word == "weekends" || (every && word == "weekend") {
        return Some(0b110_0000);
    }
    let (day, plural) = match word.strip_suffix('s') {
        Some(day) => (day, true),
        None => (word, false),
    };
    let at = crate::retrieval::WEEKDAY_NAMES.iter().position(|d| *d == day)?;
    (plural || every).then_some(1 << at)
}

/// Words that belong to a quantity rather than to what it is of: the amount and its unit,
/// the verbs that say what is measured of the holder ("I weigh 80 kg", "I earn $72,000",
/// "I turned 30") and the direction it moved ("down to 72 kilos").
fn of_a_quantity(word: &str) -> bool {
    amount(word).is_some()
        || clock(word).is_some()
        || unit(word).is_some()
        || weekday(word, true).is_some()
        || matches!(
            word,
            "old"
                | "year"
                | "years"
                | "half"
                | "turn"
                | "turned"
                | "turning"
                | "weigh"
                | "weighs"
                | "weighed"
                | "earn"
                | "earns"
                | "earned"
                | "down"
                | "up"
        )
}

/// Words that say when something was or will be ("last week", "a month ago"), as [`term`]s
/// or whole.
fn said_when(word: &str) -> bool {
    of_time(word)
        || matches!(
            word,
            "last" | "next" | "ago" | "yesterday" | "tomorrow" | "tonight" | "year" | "years"
        )
}

/// Words of time that say when or how often, not what a quantity is of.
fn of_time(word: &str) -> bool {
    TIME_WORDS.contains(&word)
        || matches!(
            word,
            "day"
                | "days"
                | "daily"
                | "morning"
                | "mornings"
                | "night"
                | "nights"
                | "evening"
                | "evenings"
                | "week"
                | "weeks"
                | "weekly"
                | "weekend"
                | "weekends"
                | "month"
                | "months"
                | "monthly"
                | "annual"
                | "annually"
                | "yearly"
                | "every"
                | "each"
                | "most"
                | "usually"
                | "around"
                | "about"
                | "last"
                | "per"
        )
}

/// The first quantity a clause states, with what it is of (from its slot and value).
fn measure_of(words: &[String], slot: &[String], value: &[String]) -> Option<Measure> {
    let found = words.iter().enumerate().find_map(|(k, word)| {
        let next = words.get(k + 1).map(String::as_str);
        if let Some(minutes) = clock(word) {
            return Some((Dimension::Clock, minutes));
        }
        if let Some((number, money)) = amount(word) {
            if money {
                return Some((Dimension::Money, number));
            }
            if matches!(next, Some("year" | "years"))
                && words.get(k + 2).is_some_and(|w| w == "old")
            {
                return Some((Dimension::Age, number));
            }
            if let Some((dimension, size)) = next.and_then(unit) {
                return Some((dimension, number * size));
            }
            // "I get up at 8", "dinner's at 7": an hour of the day (taken as morning when no
            // "pm" says otherwise).
            let at = k > 0 && matches!(words[k - 1].as_str(), "at" | "until" | "till");
            if at
                && next.is_none_or(|n| unit(n).is_none())
                && let Some(minutes) = bare_hour(word)
            {
                return Some((Dimension::Clock, minutes));
            }
            // "I turned 30", "she's turning 5": an age when no unit follows.
            let turned = k > 0 && matches!(words[k - 1].as_str(), "turn" | "turned" | "turning");
            if turned && next.is_none_or(|n| unit(n).is_none()) && number <= 130.0 {
                return Some((Dimension::Age, number));
            }
        }
        // "an hour", "half an hour".
        if matches!(word.as_str(), "a" | "an") && matches!(next, Some("hour")) {
            let half = k > 0 && words[k - 1] == "half";
            return Some((Dimension::Duration, if half { 30.0 } else { 60.0 }));
        }
        None
    });
    let (dimension, hundredths) = match found {
        Some((dimension, size)) => (dimension, (size * 100.0).round() as i64),
        None => {
            // "on Mondays and Wednesdays", "every Friday": the days together.
            let days = words.iter().enumerate().fold(0u8, |days, (k, w)| {
                let every = k > 0 && words[k - 1] == "every";
                days | weekday(w, every).unwrap_or(0)
            });
            if days == 0 {
                return None;
            }
            (Dimension::Weekdays, i64::from(days))
        }
    };
    let of = slot
        .iter()
        .map(String::as_str)
        .chain(value.iter().map(String::as_str))
        .filter(|w| !of_a_quantity(w) && !of_time(w) && !is_stopword(w) && *w != "'s")
        // Light verbs name no activity of their own ("I go to the gym" is about the gym); a
        // slot's verb arrives loosely stemmed ("goe").
        .filter(|w| !matches!(*w, "go" | "goes" | "goe" | "going" | "get" | "gets"))
        // Getting up is said many ways ("wake up", "get up").
        .filter(|w| !matches!(*w, "wake" | "wak" | "woke"))
        .map(term)
        .collect();
    Some(Measure { dimension, hundredths, of })
}

/// Whether one of two claims is an attribute the other is not: "my daughter is 5 years old"
/// is the daughter's age, not another value of "I'm 29 years old".
fn named_apart(old: &Claim, new: &Claim) -> bool {
    (old.kind == SlotKind::Attribute || new.kind == SlotKind::Attribute) && !same_slot(old, new)
}

/// Whether two claims' numbers measure different things ("5 km" / "6am", "20 lengths" / "40
/// km"), which no change of number turns into each other.
fn measures_apart(old: &Claim, new: &Claim) -> bool {
    let dimension = |c: &Claim| c.measure.as_ref().map(|m| m.dimension);
    dimension(old) != dimension(new)
}

/// Whether claim `new` states another amount of the quantity claim `old` states: the same
/// dimension, a different amount, of the same thing: what each is of shares a word ("my
/// rent"), or neither names anything, so both are of their holder ("I'm 29 years old" / "I
/// turned 30", "I weigh 80 kg" / "I'm down to 72 kilos"). Closeness in meaning is no
/// evidence here: "I weigh 80 kg" and "I can deadlift 120 kg now" are close and hold
/// together.
fn remeasured(old: &Claim, new: &Claim) -> bool {
    let (Some(a), Some(b)) = (&old.measure, &new.measure) else {
        return false;
    };
    // Days of the week say when something is done: only the same thing done ("I go to the
    // gym" / "my gym days") is done on other days, not another done with the same object
    // ("I play football on Sundays" / "I watch football on Saturdays").
    let same_thing = match a.dimension {
        Dimension::Weekdays => a.of == b.of,
        _ => (a.of.is_empty() && b.of.is_empty()) || !a.of.is_disjoint(&b.of),
    };
    a.dimension == b.dimension && a.hundredths != b.hundredths && same_thing
}

/// Whether two slots are the same: equal, or attributes about the same noun.
fn same_slot(old: &Claim, new: &Claim) -> bool {
    if old.slot == new.slot {
        return true;
    }
    match (old.kind, new.kind, head(&old.slot), head(&new.slot)) {
        (SlotKind::Attribute, SlotKind::Attribute, Some(a), Some(b)) => a == b,
        // "My pronouns are she/her" / "I use they/them pronouns now": the attribute is
        // named in what the other does.
        (SlotKind::Attribute, SlotKind::Activity, Some(a), _) => new.value.contains(a),
        (SlotKind::Activity, SlotKind::Attribute, _, Some(b)) => old.value.contains(b),
        _ => false,
    }
}

/// A claim's value without the words that name the other claim's slot.
fn value_apart_from(claim: &Claim, other: &Claim) -> HashSet<String> {
    claim.value.iter().filter(|w| !other.slot.contains(w)).cloned().collect()
}

/// Whether two values say the same with different numbers: each has a number, the numbers
/// differ, and the other words of one are among the other's.
fn renumbered(old: &HashSet<String>, new: &HashSet<String>) -> bool {
    let is_number = |w: &&String| {
        w.trim_start_matches(CURRENCY_SIGNS).starts_with(|c: char| c.is_ascii_digit())
            || crate::lifecycle::is_number_word(w)
    };
    // A unit is part of its number: sharing "kg" does not make "I weigh 80 kg" and "I can
    // deadlift 120 kg" one statement.
    let split = |value: &HashSet<String>| -> (HashSet<String>, HashSet<String>) {
        let (numbers, words): (HashSet<String>, HashSet<String>) =
            value.iter().cloned().partition(|w| is_number(&w));
        (numbers, words.into_iter().filter(|w| !of_a_quantity(w)).collect())
    };
    let ((old_numbers, old_words), (new_numbers, new_words)) = (split(old), split(new));
    !old_numbers.is_empty()
        && !new_numbers.is_empty()
        && !old_words.is_empty()
        && !new_words.is_empty()
        && old_numbers != new_numbers
        && (old_words.is_subset(&new_words) || new_words.is_subset(&old_words))
}

/// How near in meaning a stored statement is to a new one, which decides whether a statement
/// of change may speak of it when their words do not name the same slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nearness {
    /// Clearly related in meaning: a statement of change that names something of it (a word
    /// of its value) may replace it.
    pub related: bool,
    /// The stored statement nearest in meaning, and near enough that a statement of change
    /// with no slot of its own ("I switched to Neovim") takes its slot.
    pub nearest: bool,
    /// The nearest, and so near that a statement which only implies a change ("I eat meat
    /// again", "I'm on day shifts now") takes its slot: a word of time says as often when
    /// something holds as that it changed, so it needs a closer statement to speak of.
    pub close: bool,
}

/// Whether claim `new` says it takes the place of claim `old`'s value ("Our puppy's name is
/// Max" / "he's called Biscuit now instead of Max"; "I drink coffee every morning" / "I
/// drink tea instead of coffee now"): of the same holder (a pronoun's is whoever was spoken of
/// before) and the same slot or verb, related in meaning, and both said as holding.
fn names_what_it_replaces(old: &Claim, new: &Claim, near: Nearness) -> bool {
    let pronoun = matches!(&new.holder, Holder::Other(h) if matches!(h.as_str(), "he" | "she" | "it" | "they"));
    !new.replaced.is_empty()
        && !old.value.is_disjoint(&new.replaced)
        && near.related
        && (old.holder == new.holder || pronoun)
        && (pronoun || same_slot(old, new) || old.slot.first() == new.slot.first())
        && !(old.past || old.event || old.negated || new.past || new.negated)
}

/// Whether a claim says what its holder has ("I have a cat now"), which may be one thing
/// of many.
fn names_a_possession(claim: &Claim) -> bool {
    claim.kind == SlotKind::Activity && claim.slot.first().is_some_and(|v| is_have(v))
}

/// Whether a slot's verb is "have", in its forms as read and as loosely stemmed.
fn is_have(verb: &str) -> bool {
    matches!(verb, "have" | "has" | "had" | "hav" | "ha")
}

/// Whether claim `new` gives another value of the slot claim `old` fills, so `old` no longer
/// holds.
fn replaces(old: &Claim, new: &Claim, near: Nearness) -> bool {
    if names_what_it_replaces(old, new, near) {
        return true;
    }
    if old.holder != new.holder || new.additive || old.past || new.past || old.event {
        return false;
    }
    let (old_value, new_value) = (value_apart_from(old, new), value_apart_from(new, old));
    let same_value = old_value == new_value
        || (!new_value.is_empty() && new_value.is_subset(&old_value))
        || (!old_value.is_empty() && old_value.is_subset(&new_value));
    // The new statement names what the old one holds ("I cancelled Spotify" after "I use
    // Spotify for music"), and the two are related in meaning (a shared word alone, such as
    // "bathroom" or "two weeks ago", is no evidence).
    let names_it = near.related
        && (!old_value.is_disjoint(&new_value)
            || (old.kind == SlotKind::Activity
                && old.slot.first().is_some_and(|verb| {
                    let verb = verb_base(verb);
                    new.value.iter().any(|w| verb_base(w) == verb)
                })));
    let nearest = near.nearest;
    // "I take my coffee with milk and two sugars" / "I drink my coffee black with no sugar":
    // said of the same thing (a word of both values that neither denies), one denies what
    // the other has.
    let denies = |a: &Claim, b: &Claim| {
        a.denied.iter().any(|w| b.value.contains(w) && !b.denied.contains(w))
    };
    if near.related
        && !new.event
        && (denies(new, old) || denies(old, new))
        && old
            .value
            .iter()
            .any(|w| new.value.contains(w) && !old.denied.contains(w) && !new.denied.contains(w))
    {
        return true;
    }
    if old.negated != new.negated {
        // "I drink alcohol" / "I don't drink alcohol anymore"; "I cycle to work" / "I don't
        // cycle anymore"; "I have a Netflix subscription" / "I cancelled my Netflix
        // subscription".
        let same_verb = old.slot.first() == new.slot.first();
        return ((same_slot(old, new) || same_verb) && (same_value || new_value.is_empty()))
            || (new.negated && new.change == Change::Explicit && names_it);
    }
    // "I run 5 km every morning" / "I run 10 km each morning": the user's same statement with
    // another number. (Of others' statements, a number is as often a label: "Writer 2 enjoys
    // sailing on day 3".)
    if new.holder == Holder::User
        && renumbered(&old_value, &new_value)
        && !measures_apart(old, new)
        && (same_slot(old, new) || (near.related && !named_apart(old, new)))
    {
        return true;
    }
    // "I weigh 80 kg" / "I'm down to 72 kilos"; "My rent is $1,500 a month" / "The landlord
    // raised my rent to $1,700"; "I'm 29 years old" / "I turned 30 last week": the same
    // quantity of the user's, another amount. Something that happened with a quantity ("I
    // ran 10 km on Sunday") says nothing of what held before unless it says it changed.
    if new.holder == Holder::User
        && !old.negated
        && !new.negated
        && (!new.event || new.change != Change::None)
        && remeasured(old, new)
    {
        return true;
    }
    // "I walk to the studio" / "I drive to the studio": the same place, done another way.
    let done_otherwise =
        old.kind == SlotKind::Activity && new.kind == SlotKind::Activity && old.slot != new.slot;
    // "I switched over from iPhone": what was given up, named by a related statement, no
    // longer holds, though nothing is said of what took its place.
    if new.kind == SlotKind::Open
        && new.change == Change::Explicit
        && new_value.is_empty()
        && old.kind != SlotKind::Open
    {
        return near.related && !old.value.is_disjoint(&new.topic);
    }
    if (same_value && !done_otherwise) || new_value.is_empty() {
        return false;
    }
    // A statement that says it changed replaces the stored statement nearest in meaning, or
    // one it names, whatever words name the slot ("my favourite poet" / "Mary Oliver is the
    // writer I love most instead", "I walk to the studio" / "These days I drive to the
    // studio instead").
    let revises = match new.change {
        // A stored statement of no value ("ok I'm back") has none that another could take the
        // place of, however near.
        Change::Explicit => (nearest && !old.value.is_empty()) || names_it,
        // A word of time takes the slot only of a close statement of the same kind, and
        // only for another value of how things are: what happened again ("I fell asleep on
        // the sofa again") is an event, having something now ("I have a cat now") adds to
        // what one has, and two quantities are compared by what they measure ("I weigh 80
        // kg" / "I can deadlift 120 kg now"), not by closeness.
        Change::Implied => {
            near.close
                && !new.event
                && old.kind == new.kind
                && !same_value
                && !names_a_possession(new)
                && (old.measure.is_none() || new.measure.is_none())
        }
        Change::None => false,
    } && old.kind != SlotKind::Open;
    match new.kind {
        // What changed is the slot of the nearest statement, or is named in both.
        SlotKind::Open => {
            let named = near.related
                && (new.topic.iter().chain(&new.value).any(|w| {
                    (old.value.contains(w) || old.slot.contains(w)) && !new_value.contains(w)
                        || old.value.contains(w) && new.topic.contains(w)
                }) || !old.value.is_disjoint(&new.value));
            // A statement that names what changed ("my savings", "the door handles") speaks
            // of a statement related to it in meaning, not merely of the nearest one; and
            // one naming only what describes it ("the back door", "my dog's food" after "my
            // dog is called Max") speaks of something else.
            // Another of the same thing ("I swapped all the door handles for brass ones")
            // speaks only of a statement that names that thing.
            let nearest = nearest && (new.topic.is_empty() || near.related) && !new.in_kind;
            let of_something_else = new.topic_head.as_ref().is_some_and(|head| {
                !old.value.contains(head)
                    && !old.slot.contains(head)
                    && new
                        .topic
                        .iter()
                        .any(|w| w != head && (old.value.contains(w) || old.slot.contains(w)))
            });
            new.change == Change::Explicit
                && old.kind != SlotKind::Open
                && (nearest || named)
                && !of_something_else
        }
        SlotKind::Attribute => {
            let apart = ValueForm::describes_apart(
                (old.form, old.value.len()),
                (new.form, new.value.len()),
            );
            // A word of time ("my dad is 71 now") does not make a number of what a
            // description held ("my dad is retired").
            (same_slot(old, new) && !apart)
                || (revises && (new.change == Change::Explicit || !apart))
        }
        // Doing one thing does not stop another unless the statement says it changed; "be"
        // and "have" alone name no activity ("I've been a paramedic for ten years now" /
        // "I've been meaning to clean the windows").
        SlotKind::Activity => {
            let vague = new.slot.first().is_some_and(|v| {
                COPULAS.contains(&v.as_str()) || matches!(v.as_str(), "am" | "be") || is_have(v)
            });
            // "We live in Brooklyn" / "We live in Queens", "I work at Shopify" / "I work at
            // Stripe": the same thing done in, at or for another place or organisation, each
            // named. Described places hold together ("I live in a flat"), as do people one
            // does something with ("I work with Anna") and what one turns to ("I listen to
            // Radiohead").
            let at_a_name = |c: &Claim| {
                c.proper
                    && c.measure.is_none()
                    && matches!(c.slot.as_slice(), [_, preposition] if matches!(preposition.as_str(), "in" | "at" | "for"))
            };
            let elsewhere = old.slot == new.slot
                && at_a_name(old)
                && at_a_name(new)
                && near.related
                && !new.event;
            // Several requests of one thing of the assistant's hold together ("keep your
            // answers short", "keep your answers friendly"): a change replaces the nearest.
            let one_of_several = old.slot.first().is_some_and(|w| w == "you") && !near.nearest;
            (new.change != Change::None && same_slot(old, new) && !vague && !one_of_several)
                || revises
                || (elsewhere && !vague)
        }
    }
}

/// Whether statement `new` contradicts stored statement `old`: some claim of `new` gives
/// another value of a slot a claim of `old` fills. `near`: how near in meaning `old` is.
pub fn contradicts(old: &str, new: &str, near: Nearness) -> bool {
    contradicts_claims(old, &claims(new), near)
}

/// [`contradicts`] with the new statement's claims already read, so a statement compared
/// with several stored ones is read once.
pub fn contradicts_claims(old: &str, new: &[Claim], near: Nearness) -> bool {
    contradicts_read(&claims(old), new, near)
}

/// Stored statements' claims, each read once: a batch compares each candidate with its
/// nearest stored statements, and neighbouring candidates share most of them.
#[derive(Debug, Default)]
pub struct ClaimsMemo {
    read: std::collections::HashMap<String, Vec<Claim>>,
}

impl ClaimsMemo {
    /// Statements kept at most; past it the memo starts again empty.
    const KEPT: usize = 4096;

    /// The claims of `statement`, read on first use.
    pub fn claims(&mut self, statement: &str) -> &[Claim] {
        if !self.read.contains_key(statement) {
            if self.read.len() >= Self::KEPT {
                self.read.clear();
            }
            self.read.insert(statement.to_owned(), claims(statement));
        }
        self.read.get(statement).map_or(&[], Vec::as_slice)
    }
}

/// [`contradicts`] with both statements' claims already read, for comparing many
/// statements with many.
pub fn contradicts_read(old: &[Claim], new: &[Claim], near: Nearness) -> bool {
    // Closeness is measured between whole statements: it says which of a stored statement's
    // claims a new one speaks of only when there is one ("I'm into bouldering lately, I'm
    // at the climbing wall twice a week" said again is close to itself, clause by clause
    // apart).
    let near = Nearness { close: near.close && old.len() == 1, ..near };
    new.iter().any(|n| old.iter().any(|o| replaces(o, n, near)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEAREST: Nearness = Nearness { related: true, nearest: true, close: false };
    const CLOSE: Nearness = Nearness { related: true, nearest: true, close: true };
    const UNRELATED: Nearness = Nearness { related: false, nearest: false, close: false };
    const RELATED: Nearness = Nearness { related: true, nearest: false, close: false };

    /// Asserts that `contradicts` says `expected` of each pair, naming a pair where it does not.
    fn assert_each(pairs: &[(&str, &str)], near: Nearness, expected: bool) {
        for (old, new) in pairs {
            assert_eq!(contradicts(old, new, near), expected, "{old} / {new}");
        }
    }

    #[test]
    fn an_implied_change_takes_the_slot_only_of_a_close_statement() {
        let (nearest, close) = (NEAREST, CLOSE);
        let changed = [
            ("I commute by bus.", "I cycle in to work these days."),
            ("I play bass in a band.", "I'm on drums now."),
            ("I keep my passwords in LastPass.", "I use Bitwarden for my passwords now."),
            ("I eat dairy.", "I'm lactose intolerant these days."),
        ];
        assert_each(&changed, close, true);
        // A word of time is as often only when something holds: the nearest statement alone
        // is not enough.
        assert_each(&changed, nearest, false);
        // Nor does closeness turn an addition, or something said of another, into a change.
        let kept = [
            ("I commute by bus.", "I also cycle to work on Fridays now."),
            ("I play bass in a band.", "My brother is on drums now."),
            ("I've been a nurse for ten years now.", "I've been with Sam for six years now."),
            ("I have a dog.", "I have a cat now."),
            ("I wake up at 8am.", "I get up at 8 these days."),
            ("I weigh 80 kg.", "I can deadlift 120 kg now."),
            ("I sleep on my back.", "I fell asleep at my desk again."),
            (
                "I'm into bouldering lately, I'm at the climbing wall twice a week.",
                "By the way, I'm into bouldering lately, I'm at the climbing wall twice a week.",
            ),
        ];
        assert_each(&kept, close, false);
    }

    #[test]
    fn a_number_and_a_description_of_one_person_hold_together() {
        assert_each(&[("User's dad is 70", "User's dad is retired")], NEAREST, false);
        assert_each(&[("User's dad is retired", "User's dad is 70")], NEAREST, false);
        assert_each(&[("My dad is 70.", "My dad is 71.")], RELATED, true);
        assert_each(&[("User's dad is retired", "User's dad is 71 now")], CLOSE, false);
        assert_each(&[("User's dad is 70", "User's dad is 71 now")], CLOSE, true);
    }

    #[test]
    fn the_same_thing_done_at_another_named_place_replaces_it() {
        let moved = [
            ("We live in Brooklyn.", "We live in Queens."),
            ("I work at Shopify.", "I work at Stripe."),
            ("I work for Siemens.", "I work for Bosch."),
            ("I study at the University of Toronto.", "I study at McGill University."),
        ];
        assert_each(&moved, RELATED, true);
        // Unrelated statements never replace each other, whatever their words.
        assert_each(&moved, UNRELATED, false);
        let kept = [
            // A described place, or the same place said in more words.
            ("I live in Leeds.", "I live in a flat near the station."),
            ("I work at Stripe.", "I work at Stripe's Dublin office."),
            // Someone one does something with, and what one turns to.
            ("I work with Anna.", "I work with Tom."),
            ("I listen to Radiohead.", "I listen to Coldplay."),
            // Another thing done, another holder, an addition, what happened, the past.
            ("I live in Dallas.", "I work in Fort Worth."),
            ("I live in Austin.", "My parents live in El Paso."),
            ("I work at Stripe.", "I also work at Blue Bottle on weekends."),
            ("I live in Lisbon.", "I stayed in Porto last week."),
            ("I used to live in Chicago.", "I live in Denver."),
            // A copula says where one is, not where one does something.
            ("I'm in Leeds.", "I'm in York."),
        ];
        assert_each(&kept, RELATED, false);
        let c = &claims("I study at the University of Toronto.")[0];
        assert!(c.proper, "{c:?}");
        assert!(!claims("I live in a flat.")[0].proper);
        // A name with a capital inside, a number, and words of when.
        assert!(claims("I use an iPhone 12.")[0].proper);
        assert!(claims("I switched to a Pixel 8 last week.")[0].proper);
        assert!(!claims("I switched to a new phone last week.")[0].proper);
        assert!(!claims("Leeds is lovely.").iter().any(|c| c.proper), "a sentence's first word");
    }

    #[test]
    fn what_one_statement_denies_of_the_same_thing_replaces_it() {
        let changed = [
            (
                "I take my coffee with milk and two sugars.",
                "I drink my coffee black with no sugar.",
            ),
            ("I have my tea with milk.", "I have my tea without milk these days."),
            ("I drink my coffee with no sugar.", "I take sugar in my coffee now."),
        ];
        assert_each(&changed, RELATED, true);
        let kept = [
            // Denied of another thing.
            ("I take my tea with milk.", "I drink my coffee with no milk."),
            ("I have two kids.", "I have no pets."),
            ("I take my coffee with no sugar.", "I drink my coffee black with no sugar."),
        ];
        assert_each(&kept, RELATED, false);
        assert_each(&changed[..1], UNRELATED, false);
        let c = &claims("I drink my coffee black with no sugar.")[0];
        assert_eq!(c.denied, HashSet::from([term("sugar")]));
    }

    #[test]
    fn moving_an_amount_to_another_level_says_it_changed() {
        let changed = [
            ("I work full time.", "I've dropped down to part-time hours."),
            ("I drink four coffees a day.", "I've cut back to one coffee a day."),
            ("I'm on the basic plan.", "I upgraded to the family plan."),
        ];
        assert_each(&changed, NEAREST, true);
        for said in ["I dropped my phone in the bath.", "I cut my finger on a can."] {
            assert_eq!(claims(said)[0].change, Change::None, "{said}");
        }
        assert_eq!(claims("I cut back to one coffee a day.")[0].kind, SlotKind::Open);
    }

    #[test]
    fn the_memo_gives_what_reading_gives_and_stays_bounded() {
        let mut memo = ClaimsMemo::default();
        let said = ["My favourite fruit is papaya.", "I moved to Lyon.", "Nothing here."];
        for _ in 0..2 {
            for statement in said {
                assert_eq!(memo.claims(statement), claims(statement).as_slice());
            }
        }
        assert_eq!(memo.read.len(), said.len());
        for n in 0..ClaimsMemo::KEPT + 10 {
            memo.claims(&format!("My favourite number is {n}."));
        }
        assert!(memo.read.len() <= ClaimsMemo::KEPT);
        assert_eq!(memo.claims(said[0]), claims(said[0]).as_slice());
    }

    #[test]
    fn slots_are_read_from_structure_in_either_person() {
        let c = &claims("Lately my favourite fruit is papaya.")[0];
        assert_eq!(
            (c.kind, c.slot.clone()),
            (SlotKind::Attribute, vec![loose("favourite"), loose("fruit")])
        );
        assert!(c.value.contains("papaya"));
        assert_eq!(c.change, Change::Implied, "'lately' implies a change");
        assert_eq!(claims("My favourite fruit is papaya.")[0].change, Change::None);
        // How long something has held is no change.
        for said in ["I've been with Ravi for six years now.", "I've coached for a while now."] {
            assert_eq!(claims(said)[0].change, Change::None, "{said}");
        }
        assert_eq!(claims("I coach the under-tens now.")[0].change, Change::Implied);
        let c = &claims("User's favourite season is autumn")[0];
        assert_eq!((&c.holder, c.kind), (&Holder::User, SlotKind::Attribute));
        let c = &claims("Spring is my favourite season now.")[0];
        assert_eq!(c.slot, [loose("favourite"), loose("season")]);
        assert!(c.value.contains("spring") && c.change == Change::Implied);
        let c = &claims("Works in Lyon")[0];
        assert_eq!(
            (c.kind, c.slot.clone()),
            (SlotKind::Activity, vec![loose("works"), "in".into()])
        );
        let c = &claims("My brother rides a Ducati.")[0];
        assert_eq!(c.holder, Holder::Other("brother".into()));
        let c = &claims("I moved to Obsidian.")[0];
        assert_eq!(c.kind, SlotKind::Open);
        assert!(c.value.contains("obsidian"));
        // A request of how to treat the user is the user's preference, and a framing phrase
        // set off by a comma is read with the clause it frames.
        let c = &claims("From now on, reply to me in German.")[0];
        assert_eq!(
            (&c.holder, c.slot.clone(), c.change),
            (&Holder::User, vec![loose("reply")], Change::Implied)
        );
        assert!(c.value.contains("german"));
        // An adverbial phrase before the subject, and "we" for the user's household.
        let c = &claims("Since the move we're on Eastern time.")[0];
        assert_eq!((&c.holder, c.slot.first().map(String::as_str)), (&Holder::User, Some("am")));
        // A verb that ends something says that what it names no longer holds.
        let c = &claims("I cancelled my gym membership.")[0];
        assert!(c.negated && c.change == Change::Explicit);
        assert_eq!(claims("I started a gym membership.")[0].change, Change::None);
        // A possessive makes the word a thing someone has, not a verb of change.
        assert!(
            claims("I'm replaying Breath of the Wild on my Switch.")
                .iter()
                .all(|c| c.change == Change::None)
        );
        assert_eq!(claims("I switched to my old Switch.")[0].change, Change::Explicit);
        assert_eq!(verb_base("cancelled"), verb_base("cancel"));
        assert_eq!(verb_base("smoking"), verb_base("smokes"));
        assert_eq!(verb_base("stopped"), verb_base("stop"));
    }

    #[test]
    fn contradictions_and_compatible_statements() {
        let yes = [
            ("My favourite fruit is mango.", "Lately my favourite fruit is papaya."),
            ("User's favourite season is autumn", "Spring is my favourite season now."),
            ("I eat meat at dinner.", "I don't eat meat anymore."),
            ("I write my notes in Notion.", "I moved to Obsidian."),
            ("My dentist is Dr. Ruiz.", "My dentist is Dr. Haddad."),
            ("My sister's name is Ines.", "Actually my sister is Ana."),
            (
                "My favourite podcast is Radiolab.",
                "Serial has replaced Radiolab as my favourite podcast.",
            ),
            ("I ride a Vespa to work.", "I sold the Vespa and now ride an e-bike."),
            ("I keep my photos in iCloud.", "I migrated all my photos to Google Photos."),
            ("I'm in the design guild.", "I moved over to the data guild."),
            // A statement that says it changed takes the slot of the nearest, however worded.
            ("My favourite poet is Rilke.", "Mary Oliver is the writer I love most instead."),
            ("I walk to the studio.", "These days I drive to the studio instead."),
            ("I knit every evening.", "I don't knit anymore."),
            ("I pay for Hulu.", "I cancelled Hulu and watch Netflix instead."),
            ("I vape most days.", "I quit vaping in June."),
            ("Please write to me in Dutch.", "From now on, write to me in Polish."),
            ("Call me Jim.", "Actually, I'd rather you call me James."),
            (
                "User goes to the gym on Mondays and Wednesdays",
                "User's gym days are Tuesdays and Thursdays now",
            ),
            ("My favourite fruit is mango.", "Lately my favourite fruit has been cherries."),
            (
                "My favourite sport to watch is tennis.",
                "Basketball is the sport I most like to watch.",
            ),
            ("I live in Canada.", "We relocated to Australia in March."),
            ("My boyfriend is called Daniel.", "Daniel and I split up; I'm seeing Marco now."),
            ("I work at Deloitte as an auditor.", "I started a new job at KPMG and left Deloitte."),
            ("Please reply to me in English.", "I'd like you to reply to me in Welsh now."),
            (
                "My favourite drink is a flat white.",
                "Honestly, iced matcha has become my go-to drink.",
            ),
            ("My bike is a Brompton.", "My bike is a Cannondale."),
            ("My favourite colour is teal.", "My favourite colour is burnt orange."),
            ("I swim 20 lengths every Sunday.", "I swim 40 lengths every Sunday."),
            ("My salary is $65,000 a year.", "I got a raise, so my salary is $72,000 a year now."),
        ];
        assert_each(&yes, NEAREST, true);
        assert!(!contradicts("I write my notes in Notion.", "I moved to Obsidian.", UNRELATED));
        // A shared word names nothing unless the statements are related in meaning.
        let related = Nearness { related: true, ..Nearness::default() };
        assert!(contradicts("I use Spotify for music.", "I cancelled Spotify.", related));
        assert!(!contradicts("I use Spotify for music.", "I cancelled Spotify.", UNRELATED));
        assert!(!contradicts(
            "I unclogged the bathroom sink myself.",
            "I recently replaced all the towels in the bathroom.",
            UNRELATED
        ));
        let no = [
            ("My favourite season is autumn.", "My favourite fruit is papaya."),
            ("I have a parrot called Kiwi.", "I also have a hamster named Bean."),
            ("I ride a Vespa.", "My brother rides a Ducati."),
            ("I used to work in Lyon.", "I work in Nantes now."),
            ("I play chess.", "I play the cello."),
            ("My favourite season is autumn.", "My favourite month of autumn is October."),
            ("My favourite fruit is mango.", "My favourite fruit is still mango."),
            ("I speak Dutch.", "I speak German as well."),
            ("My favourite fruit is mango.", "My brother's favourite fruit is kiwi."),
            ("I climb on Tuesdays and Fridays.", "I also swim on Sundays."),
            // Beginning something new ends nothing; a change needs the nearest or a name.
            ("I knit every evening.", "I started learning the violin."),
            ("I walk to the studio.", "My sister drives to the studio now."),
            ("I pay for Hulu.", "I cancelled my gym membership."),
            // What a thing is, and what it is like or where it is, hold together.
            ("My bike is a Brompton.", "My bike is green."),
            ("I rent a studio in Porto.", "My studio is on the top floor."),
            ("I swim 20 lengths every Sunday.", "I cycle 40 km every Sunday."),
            ("Call me Jim.", "I told you to call me at noon."),
            ("My boyfriend is called Daniel.", "Sam and I broke up."),
            ("My sister is Ana.", "Ana and I went hiking."),
            ("Call me Jim.", "I'd rather you didn't call me at work."),
            // Alternating, or renewing a worn thing, changes no value.
            (
                "I always sit in the aisle seat on trains.",
                "I work at a standing desk and switch between sitting and standing every hour.",
            ),
            (
                "I need to get my watch battery replaced.",
                "I replaced the batteries in the smoke alarm.",
            ),
            ("I prefer showers to baths.", "I recently replaced all the towels in the bathroom."),
            // "Be" alone names no activity, however the new statement says how things stand.
            (
                "When it comes to books, I'm all about historical fiction.",
                "I'm based in Austin these days.",
            ),
            ("I'm learning Greek.", "I'm based in Buenos Aires these days."),
            // How long something has held is no part of what it is.
            (
                "I've been on a dairy-free diet for about two years.",
                "I've had an iPhone SE as my mobile for about a year.",
            ),
            // A relative clause is about what it follows, not a claim of the user's.
            (
                "I'm left-handed, which makes most scissors a constant struggle.",
                "I once won a raffle prize, which turned out to be a set of towels.",
            ),
        ];
        assert_each(&no, NEAREST, false);
        // "Ones" stands for another noun in each: sharing it names nothing the two share.
        let related = Nearness { related: true, ..Nearness::default() };
        assert!(!contradicts(
            "I prefer pens with blue ink over black ones.",
            "I swapped all the door handles for brass ones.",
            related
        ));
        // A statement of change that names what it gave up speaks of a statement related to
        // it in meaning, not merely of the nearest.
        let nearest_only = Nearness { nearest: true, ..Nearness::default() };
        assert!(!contradicts(
            "I'm double-jointed in my thumbs.",
            "I swapped all the door handles for brass ones.",
            nearest_only
        ));
        assert!(contradicts("I code in Vim.", "I switched to Helix.", nearest_only));
        assert!(contradicts("I use an iPhone 12.", "I replaced my phone with a Pixel 8.", NEAREST));
        // What changed is the head of its phrase: a statement naming only what describes it
        // (the door, not its handles) speaks of something else.
        assert!(!contradicts(
            "I keep a spare key under a flowerpot by the back door.",
            "I swapped all the door handles for brass ones.",
            NEAREST
        ));
        assert!(contradicts(
            "My door handles are chrome.",
            "I swapped all the door handles for brass ones.",
            NEAREST
        ));
        // Another of the same thing ("brass ones", "a new one") speaks of that thing alone:
        // the nearest statement that does not name it stays.
        assert!(claims("I swapped all the door handles for brass ones.")[0].in_kind);
        assert!(!claims("I replaced my phone with a Pixel 8.")[0].in_kind);
        assert!(!contradicts(
            "I keep a jar of spare buttons in a drawer.",
            "I swapped all the door handles for brass ones.",
            NEAREST
        ));
        assert!(!contradicts(
            "I use an iPhone 12.",
            "I replaced my phone with a new one.",
            NEAREST
        ));
        assert!(contradicts(
            "My kettle is a Smeg.",
            "I replaced my kettle with a new one.",
            NEAREST
        ));
        // "Back" of returning is no value: "ok I'm back" holds none, so nothing takes its
        // place, while "my back" is one.
        assert!(!contradicts("ok I'm back", "I've gone back to light mode everywhere.", NEAREST));
        assert!(contradicts(
            "I prefer dark mode in all my apps.",
            "I've gone back to light mode everywhere.",
            RELATED
        ));
        assert!(claims("I'm back in Leeds.")[0].value.iter().eq(["leed"].iter()));
        assert!(claims("I sleep on my back.")[0].value.contains("back"));
        // Nor does a thing of what names the stored statement's slot.
        assert!(!contradicts(
            "My dog is called Max.",
            "I changed my dog's food to Purina.",
            NEAREST
        ));
        assert!(!contradicts(
            "My phone is an iPhone 12.",
            "I switched my phone plan to Vodafone.",
            NEAREST
        ));
        assert!(contradicts(
            "My phone plan is with EE.",
            "I switched my phone plan to Vodafone.",
            NEAREST
        ));
        // "Switched from X" names what was given up: it speaks of a statement of X, not of
        // whatever is nearest.
        assert!(!contradicts(
            "I've got a scar on my knee from falling off a wall when I was eight",
            "I've got a Pixel 8, switched over from iPhone last year.",
            NEAREST
        ));
        assert!(contradicts(
            "I use an iPhone 12 every day.",
            "I've got a Pixel 8, switched over from iPhone last year.",
            NEAREST
        ));
        // "Moved out of X" names what was given up as "from X" does.
        let left = [
            ("I rent a flat near the station.", "We bought a house and moved out of the flat."),
            ("I live in London.", "I moved out of London last spring."),
        ];
        assert_each(&left, RELATED, true);
        assert!(!contradicts("I rent a flat near the station.", "I moved out of London.", RELATED));
        assert!(!contradicts(
            "I rent a flat near the station.",
            "We moved out of the flat.",
            UNRELATED
        ));
        // A clause that ends on "you" still claims what it says.
        assert_eq!(claims("I miss you").len(), 1);
        assert!(contradicts("I eat meat.", "I don't eat meat anymore, I promise you", NEAREST));
    }

    #[test]
    fn a_verb_of_measure_gives_the_users_attribute_its_amount() {
        let yes = [
            ("My commute takes 20 minutes.", "My commute is an hour long."),
            ("My rent costs $1,500 a month.", "My rent is $1,700 a month now."),
        ];
        assert_each(&yes, UNRELATED, true);
        let no = [
            ("My commute takes 20 minutes.", "My lunch break is an hour long."),
            ("My commute takes 20 minutes.", "My commute takes 20 minutes by train."),
            ("I weigh 80 kg.", "My daughter weighs 20 kg."),
        ];
        assert_each(&no, NEAREST, false);
        let commute = claims("My commute takes 20 minutes.").remove(0);
        assert_eq!((commute.holder, commute.kind), (Holder::User, SlotKind::Attribute));
        // Without an amount it is someone's doing.
        assert!(matches!(claims("My sister takes the bus.")[0].holder, Holder::Other(_)));
    }

    #[test]
    fn a_word_and_its_s_form_compare_alike() {
        for (a, b) in [("cycle", "cycles"), ("watch", "watches"), ("use", "uses"), ("box", "boxes")]
        {
            assert_eq!(loose(a), loose(b), "{a} / {b}");
        }
        assert_eq!(loose("class"), "class");
        // The extractor's third person is the user's first: "User cycles to work" / "I
        // don't cycle anymore".
        assert!(contradicts(
            "User cycles to work every day",
            "User doesn't cycle anymore",
            NEAREST
        ));
    }

    #[test]
    fn synonyms_name_one_slot_and_a_framing_phrase_names_none() {
        // Unrelated in meaning as far as the caller knows: the slot is read from the words.
        let yes = [
            ("My favourite film is The Godfather.", "My favourite movie is Amelie."),
            (
                "My favourite author is Terry Pratchett.",
                "Ursula K. Le Guin is my favourite writer.",
            ),
            (
                "My favourite movie is Inception.",
                "After rewatching it, Parasite has become my all-time favourite film.",
            ),
            ("I have two kids.", "I have three children."),
            ("I have 2 kids.", "I have 3 kids now."),
        ];
        assert_each(&yes, UNRELATED, true);
        let no = [
            ("My favourite film is The Godfather.", "My favourite book is Dune."),
            ("My favourite movie is Amelie.", "My favourite film is Amelie."),
            ("I have two kids.", "I have three dogs."),
            ("I have two kids.", "I have two children."),
            ("I have a dog.", "I have a cat now."),
            ("My doctor is Dr. Patel.", "My physician is Dr. Patel."),
        ];
        assert_each(&no, NEAREST, false);
        // The framing phrase still tells of change ("From now on").
        let framed = claims("After rewatching it, Parasite has become my favourite film.");
        assert_eq!(framed[0].slot, [term("favourite"), term("film")]);
        let from_now_on = claims("From now on, reply to me in German.");
        assert_ne!(from_now_on[0].change, Change::None);
        // The extractor's "we" is the user, as "we" is.
        for rewritten in
            ["User and others rent the apartment", "User and their wife rent the apartment"]
        {
            assert_eq!(claims(rewritten), claims("We rent the apartment"), "{rewritten}");
        }
        // "Have" before its object is the verb.
        let kids = claims("I have two kids.").remove(0);
        assert_eq!(
            (kids.slot, kids.value),
            (vec![loose("have")], HashSet::from(["two".to_owned(), "child".to_owned()]))
        );
    }

    #[test]
    fn quantities_are_read_with_their_units() {
        let measure = |statement: &str| {
            let claim = claims(statement).into_iter().find(|c| c.measure.is_some());
            claim.and_then(|c| c.measure).map(|m| (m.dimension, m.hundredths))
        };
        for (statement, dimension, hundredths) in [
            ("I weigh 80 kg.", Dimension::Mass, 8000),
            ("I'm down to 165 lbs.", Dimension::Mass, 7484),
            ("My rent is $1,500 a month.", Dimension::Money, 150_000),
            ("I'm 29 years old.", Dimension::Age, 2900),
            ("I turned 30 last week.", Dimension::Age, 3000),
            ("I go to bed around 11pm.", Dimension::Clock, 138_000),
            ("I'm in bed by 9:30 most nights.", Dimension::Clock, 57_000),
            ("I eat lunch at noon.", Dimension::Clock, 72_000),
            ("My commute is an hour long.", Dimension::Duration, 6000),
            ("I run 3 miles.", Dimension::Distance, 483),
            ("I swim on Mondays and Fridays.", Dimension::Weekdays, 17),
            ("I call my mum every Sunday.", Dimension::Weekdays, 64),
        ] {
            assert_eq!(measure(statement), Some((dimension, hundredths)), "{statement:?}");
        }
        assert_eq!(measure("I met Sam on Monday."), None);
        // Only times that exist.
        assert_eq!(measure("My shift ends at 24:00."), Some((Dimension::Clock, 144_000)));
        assert_eq!(measure("My shift ends at 24:30."), None);
        assert_eq!(measure("I wake at 13am."), None);
        // A number without a unit measures nothing ("two kids", "Writer 2").
        assert_eq!(measure("I have 2 kids."), None);
        assert_eq!(measure("I turned the lights off."), None);
        // What the quantity is of: the rent, not the month.
        let rent = claims("My rent is $1,500 a month.").remove(0).measure.map(|m| m.of);
        assert_eq!(rent, Some(HashSet::from(["rent".to_owned()])));
    }

    #[test]
    fn another_amount_of_the_same_quantity_replaces_it() {
        let yes = [
            ("I'm 29 years old.", "I turned 30 last week."),
            ("My rent is $1,500 a month.", "The landlord raised my rent to $1,700."),
            ("My rent is £1,100 a month.", "My landlord raised my rent to £1,250 a month."),
            ("I usually go to bed around 11pm.", "I'm usually in bed by 9:30 most nights."),
            ("I eat lunch at noon every day.", "I have lunch at 2pm every day."),
            (
                "I go to the gym on Mondays and Wednesdays.",
                "My gym days are Tuesdays and Thursdays now.",
            ),
        ];
        assert_each(&yes, UNRELATED, true);
        assert!(contradicts("I weigh 80 kg.", "I'm down to 72 kilos.", UNRELATED));
        let related = Nearness { related: true, ..Nearness::default() };
        let no = [
            // Another thing's quantity, however related.
            ("I'm 29 years old.", "My daughter is 5 years old."),
            ("I weigh 80 kg.", "My suitcase weighs 23 kg."),
            ("I play football on Sundays.", "I watch football on Saturdays."),
            ("I go to the gym on Mondays.", "I go to yoga on Wednesdays."),
            ("I go to the gym on Mondays.", "I went to the gym on Tuesday."),
            ("I weigh 80 kg.", "I can deadlift 120 kg now."),
            ("My rent is $1,500 a month.", "My brother earns $4,000 a month."),
            // The same amount, another dimension, or something that happened.
            ("I weigh 80 kg.", "I weigh 80 kg these days."),
            ("I run 5 km every morning.", "I wake up at 6am every morning."),
            ("I run 5 km every morning.", "I ran 10 km last Sunday."),
            // Neither another amount nor of the user.
            ("I'm 29 years old.", "I'm not 30 yet."),
        ];
        assert_each(&no, related, false);
    }

    proptest::proptest! {
        /// A statement of a quantity never replaces itself, and the same statement with
        /// another amount always does, whatever the amounts and however near in meaning.
        #[test]
        fn another_amount_replaces_and_the_same_never_does(
            template in proptest::sample::select(vec![
                "I weigh {} kg.",
                "My rent is ${} a month.",
                "I'm {} years old.",
                "My commute is {} minutes each way.",
                "I run {} km every morning.",
                "Our budget for groceries is €{} a week.",
            ]),
            a in 1u32..=99,
            b in 1u32..=99,
            related in proptest::bool::ANY,
        ) {
            let near = Nearness { related, nearest: related, close: related };
            let say = |n: u32| template.replace("{}", &n.to_string());
            proptest::prop_assert!(!contradicts(&say(a), &say(a), near));
            proptest::prop_assert_eq!(contradicts(&say(a), &say(b), near), a != b);
        }

        /// Reading any statement's quantity never panics, whatever its numbers and signs, and
        /// a time of day or a set of weekdays it reads is one that exists.
        #[test]
        fn any_statement_reads_without_panicking(
            words in proptest::collection::vec(proptest::sample::select(vec![
                "I", "my", "weigh", "$", "£1,2,3", "12:99", "25:00", "24:30", "0pm", "13am",
                "9:30", "4294967295:00",
                "noon", "turned", "999999999999999999999", "1.5.5", "kg", "an", "hour",
                "half", "every", "Monday", "Sundays", "to", "raised", "the", ".", ",",
            ]), 0..12),
        ) {
            let statement = words.join(" ");
            for measure in claims(&statement).into_iter().filter_map(|c| c.measure) {
                match measure.dimension {
                    Dimension::Clock => {
                        proptest::prop_assert!((0..=144_000).contains(&measure.hundredths));
                    }
                    Dimension::Weekdays => {
                        proptest::prop_assert!((1..=127).contains(&measure.hundredths));
                    }
                    _ => proptest::prop_assert!(measure.hundredths >= 0),
                }
            }
        }
    }

    #[test]
    fn a_statement_naming_what_it_replaces_replaces_it() {
        assert_each(
            &[
                (
                    "Our puppy's name is Max.",
                    "We renamed our puppy, he's called Biscuit now instead of Max.",
                ),
                ("I drink coffee every morning.", "I drink tea instead of coffee now."),
            ],
            NEAREST,
            true,
        );
        // What it replaces is no part of its value, and names only the same doing. (A
        // statement of change still replaces the stored statement nearest in meaning,
        // whatever it names: in a notebook where "I like coffee ice cream" is the nearest,
        // "I drink tea instead of coffee now" replaces it.)
        let c = &claims("I drink tea instead of coffee now.")[0];
        assert!(c.value.contains("tea") && !c.value.contains(&loose("coffee")));
        assert!(c.replaced.contains(&loose("coffee")));
        assert_each(
            &[
                ("I like coffee ice cream.", "I drink tea instead of coffee now."),
                ("My sister drinks coffee.", "I drink tea instead of coffee now."),
            ],
            Nearness { related: true, ..Nearness::default() },
            false,
        );
        assert!(!contradicts(
            "Our puppy's name is Max.",
            "He's called Biscuit instead of Max.",
            UNRELATED
        ));
    }

    #[test]
    fn a_colouring_verb_gives_the_users_thing_its_colour() {
        let c = &claims("I dyed my hair blonde.")[0];
        assert_eq!(
            (&c.holder, c.kind, c.slot.clone()),
            (&Holder::User, SlotKind::Attribute, vec![loose("hair")])
        );
        let c = &claims("We painted our front door dark green.")[0];
        assert_eq!(c.slot, [loose("front"), loose("door")]);
        assert!(c.value.contains("dark") && c.value.contains("green"));
        assert!(contradicts("My hair is brown.", "I dyed my hair blonde.", NEAREST));
        assert!(!contradicts("My car is red.", "I dyed my hair blonde.", NEAREST));
        assert!(!contradicts("My hair is brown.", "I dyed my sister's hair blonde.", NEAREST));
    }

    #[test]
    fn it_stands_for_the_users_thing_named_before() {
        let c = &claims("I wiped my laptop and it only runs Ubuntu now.")[1];
        assert_eq!(
            (&c.holder, c.slot.clone()),
            (&Holder::Other("laptop".into()), vec![loose("runs")])
        );
        assert!(contradicts(
            "My laptop runs Windows 11.",
            "I wiped my laptop and it only runs Ubuntu now.",
            NEAREST
        ));
        assert!(!contradicts(
            "My laptop runs Windows 11.",
            "I cleaned my laptop and it looks brand new.",
            NEAREST
        ));
    }

    #[test]
    fn an_hour_after_at_is_a_time_of_day_and_getting_up_is_one_thing() {
        assert!(contradicts(
            "I wake up at 6am every day.",
            "I get up at 8 every morning now.",
            NEAREST
        ));
        assert!(!contradicts("I wake up at 8am.", "I get up at 8 these days.", NEAREST));
        assert!(contradicts(
            "I wake up at 6am every day.",
            "Lately I don't get up until 8.",
            NEAREST
        ));
        assert!(!claims("I don't get up until 8.")[0].negated);
        assert!(claims("I don't get up early.")[0].negated);
        assert!(claims("I'm not drinking until my birthday.")[0].negated);
        assert!(!contradicts(
            "I wake up at 6am every day.",
            "I go to the gym at 7 now.",
            UNRELATED
        ));
        let m = claims("Dinner is at 7.")[0].measure.clone();
        assert_eq!(m.map(|m| (m.dimension, m.hundredths)), Some((Dimension::Clock, 42_000)));
    }

    #[test]
    fn an_ordinal_counts() {
        assert!(contradicts("I have two kids.", "We just welcomed our third child.", NEAREST));
        assert!(contradicts(
            "My flat is on the third floor.",
            "My flat is on the fourth floor now.",
            NEAREST
        ));
        assert!(!contradicts("I have two kids.", "My third novel comes out in May.", UNRELATED));
    }

    #[test]
    fn how_things_stand_after_what_changed_is_a_change() {
        let said = claims("I got promoted, so my title is senior data scientist now.");
        assert_eq!(said.last().map(|c| c.change), Some(Change::Explicit));
        assert_eq!(claims("My title is senior data scientist now.")[0].change, Change::Implied);
        assert!(contradicts(
            "I'm a junior data analyst.",
            "I got promoted, so my title is senior data scientist now.",
            Nearness { related: true, ..Nearness::default() },
        ));
    }

    #[test]
    fn answering_replying_and_responding_are_one_request() {
        assert!(contradicts(
            "Please answer me in English.",
            "From now on, reply to me in German.",
            UNRELATED
        ));
        assert!(contradicts(
            "Respond to me in French.",
            "Please answer me in Spanish from now on.",
            UNRELATED
        ));
        assert!(!contradicts(
            "Please answer me in English.",
            "From now on, call me Jim.",
            UNRELATED
        ));
    }

    #[test]
    fn a_changed_request_of_the_assistants_answers_replaces_the_nearest() {
        let changed = [
            ("Keep your replies brief.", "I'd like longer, more thorough answers from you now."),
            ("Make your answers detailed.", "From now on, keep your answers short."),
            ("I want your explanations simple.", "These days I want your explanations technical."),
        ];
        assert_each(&changed, NEAREST, true);
        // Requests of the same thing hold together unless one says it changed, and a change
        // replaces only the nearest of them.
        assert_each(&changed, RELATED, false);
        assert!(contradicts(
            "I prefer long, detailed, thorough answers from you.",
            "Keep your answers short from now on.",
            NEAREST
        ));
        assert!(contradicts(
            "Keep your code examples in Python.",
            "Write your code examples in Rust now.",
            NEAREST
        ));
        let kept = [
            ("Keep your answers short.", "Keep your answers friendly."),
            ("Please keep your answers short.", "Use bullet points in your answers."),
            ("Keep your answers short.", "Keep your code examples in Python now."),
            ("I love your answers.", "I prefer short answers from you now."),
            // One-off tasks, compliments and needs ask for nothing that stands.
            ("Keep your answers short.", "Rewrite your answer in Spanish now."),
            ("Keep your answers short.", "I like your answers a lot now."),
            ("Keep your answers short.", "I need an answer from you by Friday now."),
            ("Keep your answers short.", "Check your answers again now."),
            // The thing is the last word before a preposition, not the first after "your".
            ("Keep your code examples in Python.", "Keep your code comments short now."),
        ];
        assert_each(&kept, NEAREST, false);
        // A part that speaks "from you" joins only its own sentence's parts.
        let read = claims("I drink coffee. (Coming from you, that's a compliment.)");
        assert_eq!(
            read.first().map(|c| &c.value),
            claims("I drink coffee.").first().map(|c| &c.value)
        );
        // "long, detailed answers" is one value, not a clause "detailed answers".
        let read = claims("I prefer long, detailed answers from you now.");
        assert_eq!(read.len(), 1, "{read:?}");
        assert_eq!(read[0].slot, ["you", "reply"]);
        assert!(read[0].value.contains("long") && read[0].value.contains("detail"));
    }

    #[test]
    fn a_kind_of_something_is_about_that_thing() {
        assert!(contradicts(
            "My favourite kind of music is jazz.",
            "My favourite music is techno now.",
            UNRELATED
        ));
        assert!(contradicts(
            "My favourite genre of film is horror.",
            "These days my favourite films are comedies.",
            UNRELATED
        ));
        assert!(!contradicts(
            "My favourite kind of music is jazz.",
            "My favourite kind of cheese is brie.",
            UNRELATED
        ));
    }

    #[test]
    fn how_things_stand_after_what_happened_is_a_change() {
        let said = claims("I bought my apartment, so I own it now.");
        assert_eq!(
            said.last().map(|c| (c.change, c.value.contains("apartment"))),
            Some((Change::Explicit, true))
        );
        assert!(contradicts(
            "I rent my apartment.",
            "I bought my apartment, so I own it now.",
            Nearness { related: true, ..Nearness::default() }
        ));
        assert!(!contradicts(
            "I rent my apartment.",
            "I painted the kitchen, so it looks better now.",
            Nearness { related: true, ..Nearness::default() }
        ));
        let said = claims("I once won a raffle prize, which turned out to be a set of towels.");
        assert!(said.iter().all(|c| c.change != Change::Explicit), "{said:?}");
    }
}
