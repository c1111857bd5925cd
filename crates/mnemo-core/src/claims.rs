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
//! it. Markers of addition ("also", "too", "as well") and of the past ("used to") make a
//! statement compatible with what is stored.
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
    /// Says it adds to what is known ("also", "too", "as well", "another").
    pub additive: bool,
    /// Says it no longer holds ("used to", "formerly").
    pub past: bool,
    /// Says something changed ("now", "switched", "these days", "anymore").
    pub change: bool,
    /// Negated ("don't", "no longer", "never").
    pub negated: bool,
}

/// Words that join a copula to its value or slot.
const COPULAS: [&str; 7] = ["is", "are", "was", "were", "become", "became", "remains"];

/// Auxiliaries and adverbs between a subject and its verb, skipped to find the verb.
const BETWEEN_SUBJECT_AND_VERB: [&str; 24] = [
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
    "currently",
    "never",
    "not",
    "totally",
];

/// Verbs whose object is a new value of something the holder had before.
const CHANGE_VERBS: [&str; 8] =
    ["switch", "move", "change", "transfer", "swap", "replace", "convert", "migrate"];

/// Words of time that say nothing about a value.
const TIME_WORDS: [&str; 10] = [
    "now",
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

/// Lowercase word tokens with contractions expanded and the extractor's third person ("the
/// user", "user's") read as the first.
fn tokens(clause: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let lower = clause.to_lowercase().replace('\u{2019}', "'");
    for raw in lower.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '/')) {
        let word = raw.trim_matches('\'');
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

/// A word compared loosely: a plural or third-person `s` (or `es`, `ies`) and an `ed` dropped.
pub(crate) fn loose(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.len() >= 3) {
        return format!("{stem}y");
    }
    if let Some(stem) = word.strip_suffix("ed").filter(|s| s.len() >= 3) {
        return stem.strip_suffix(|c: char| c == 'e').unwrap_or(stem).to_owned();
    }
    if let Some(stem) = word.strip_suffix('s').filter(|s| s.len() >= 3 && !s.ends_with('s')) {
        return stem
            .strip_suffix('e')
            .filter(|s| s.ends_with("ch") || s.ends_with("sh"))
            .unwrap_or(stem)
            .to_owned();
    }
    word.strip_suffix('e').filter(|s| s.len() >= 3).unwrap_or(word).to_owned()
}

fn is_change_verb(word: &str) -> bool {
    let word = loose(word);
    CHANGE_VERBS.iter().any(|v| loose(v) == word)
}

fn is_stopword(word: &str) -> bool {
    crate::retrieval::is_stopword(word)
}

/// The content words of a value, loosely stemmed, time words left out.
fn value_words(words: &[String]) -> HashSet<String> {
    words
        .iter()
        .filter(|w| !is_stopword(w) && !TIME_WORDS.contains(&w.as_str()) && *w != "'s")
        .filter(|w| !matches!(w.as_str(), "called" | "named" | "go" | "favourite" | "favorite"))
        .map(|w| loose(w))
        .collect()
}

/// The words of a slot phrase, loosely stemmed; adverbs of time and degree left out.
fn slot_words(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| !TIME_WORDS.contains(&w.as_str()) && !matches!(w.as_str(), "the" | "a" | "an"))
        .map(|w| loose(w))
        .collect()
}

/// The noun a slot is about: its last word, or the last before `of` ("shade of blue").
fn head(slot: &[String]) -> Option<&str> {
    let end = slot.iter().position(|w| w == "of").unwrap_or(slot.len());
    slot[..end].last().map(String::as_str)
}

fn has_phrase(words: &[String], phrase: &[&str]) -> bool {
    words.windows(phrase.len()).any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}

/// The clauses of a statement: split at punctuation inside sentences and at conjunctions.
fn clauses(statement: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let sentences = crate::extract::sentences(statement);
    for part in sentences.iter().flat_map(|(s, _)| s.split([',', ':', '(', ')'])) {
        let words = tokens(part);
        let mut current = Vec::new();
        // A conjunction ends a clause when a new subject or predicate follows it ("… and I
        // love chess", "… and now drive a Tesla"), not inside a list ("Mondays and
        // Wednesdays").
        for (k, word) in words.iter().enumerate() {
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
                        | "now"
                        | "then"
                        | "also"
                        | "still"
                        | "never"
                        | "just"
                )
            });
            if conjunction && next_starts && !current.is_empty() {
                out.push(std::mem::take(&mut current));
                continue;
            }
            current.push(word.clone());
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

/// Leading words that only frame a clause ("actually", "honestly", "these days").
fn skip_framing(words: &[String]) -> &[String] {
    let mut start = 0;
    while let Some(w) = words.get(start) {
        let framing = matches!(
            w.as_str(),
            "actually"
                | "honestly"
                | "well"
                | "oh"
                | "ok"
                | "okay"
                | "sorry"
                | "yes"
                | "yeah"
                | "then"
                | "still"
                | "really"
                | "anyway"
                | "btw"
                | "also"
                | "plus"
        ) || TIME_WORDS.contains(&w.as_str());
        if !framing {
            break;
        }
        start += 1;
    }
    &words[start..]
}

fn claim_of(clause: &[String]) -> Option<Claim> {
    let all = clause;
    let additive = all
        .iter()
        .any(|w| matches!(w.as_str(), "also" | "too" | "another" | "additionally" | "both"))
        || has_phrase(all, &["as", "well"]);
    let past = has_phrase(all, &["used", "to"])
        || all.iter().any(|w| matches!(w.as_str(), "formerly" | "previously"));
    let negated = all.iter().any(|w| matches!(w.as_str(), "not" | "never"))
        || has_phrase(all, &["no", "longer"]);
    let change = all.iter().any(|w| {
        matches!(w.as_str(), "now" | "nowadays" | "anymore" | "instead" | "longer")
            || is_change_verb(w)
    });
    let words = skip_framing(all);
    let first = words.first()?;
    let claim = |holder, kind, slot: Vec<String>, value: &[String]| Claim {
        holder,
        kind,
        slot,
        value: value_words(value),
        topic: HashSet::new(),
        additive,
        past,
        change,
        negated,
    };
    // "my <slot> is <value>", or "my <someone> <verb> <value>".
    if first == "my" {
        if let Some(q) = words.iter().position(|w| COPULAS.contains(&w.as_str())) {
            let value = &words[q + 1..];
            // "my wife's favourite food is …": someone else's attribute.
            if words.get(2).is_some_and(|w| w == "'s") && q > 3 {
                let slot = slot_words(&words[3..q]);
                return Some(claim(
                    Holder::Other(words[1].clone()),
                    SlotKind::Attribute,
                    slot,
                    value,
                ));
            }
            let slot = slot_words(&words[1..q]);
            return (!slot.is_empty())
                .then(|| claim(Holder::User, SlotKind::Attribute, slot, value));
        }
        let someone = words.get(1)?.clone();
        let verb = words.get(2)?;
        return Some(claim(
            Holder::Other(someone),
            SlotKind::Activity,
            vec![loose(verb)],
            &words[3..],
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
        let slot = slot_words(&words[m + 1..]);
        return (!slot.is_empty()).then(|| claim(Holder::User, SlotKind::Attribute, slot, value));
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
        // "<name> <verb> …": someone else.
        let verb = words.get(1)?;
        return Some(claim(
            Holder::Other(first.clone()),
            SlotKind::Activity,
            vec![loose(verb)],
            &words[2..],
        ));
    };
    let start = rest.iter().position(|w| !BETWEEN_SUBJECT_AND_VERB.contains(&w.as_str()))?;
    let verb = &rest[start];
    let after = &rest[start + 1..];
    if is_change_verb(verb) {
        let to = after.iter().position(|w| w == "to").map_or(0, |t| t + 1);
        let mut open = claim(Holder::User, SlotKind::Open, Vec::new(), &after[to..]);
        open.topic = value_words(&after[..to.saturating_sub(1)]);
        return Some(open);
    }
    // "… as my <slot>": the slot is named.
    if let Some(m) = after.iter().position(|w| w == "my")
        && m > 0
        && after[m - 1] == "as"
    {
        let slot = slot_words(&after[m + 1..]);
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

/// The claims of a statement, one per clause that makes one.
pub fn claims(statement: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut said_by_i = false;
    for clause in clauses(statement) {
        let framed = skip_framing(&clause);
        let subject = |w: &String| matches!(w.as_str(), "i" | "my" | "we" | "our" | "me");
        // "I sold the Civic and now drive a Tesla": a clause with no subject of its own
        // after one of the user's continues the user's.
        let claim = if said_by_i && !clause.iter().any(subject) {
            let mut continued = vec!["i".to_owned()];
            continued.extend(clause.iter().cloned());
            claim_of(&continued)
        } else {
            said_by_i = framed.first().is_some_and(|w| w == "i");
            claim_of(&clause)
        };
        out.extend(claim);
    }
    out
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

/// Whether claim `new` gives another value of the slot claim `old` fills, so `old` no longer
/// holds. `nearest`: `old` is the stored statement closest in meaning to `new` (it fills an
/// open slot).
fn replaces(old: &Claim, new: &Claim, nearest: bool) -> bool {
    if old.holder != new.holder || new.additive || old.past || new.past {
        return false;
    }
    let (old_value, new_value) = (value_apart_from(old, new), value_apart_from(new, old));
    let same_value = old_value == new_value
        || (!new_value.is_empty() && new_value.is_subset(&old_value))
        || (!old_value.is_empty() && old_value.is_subset(&new_value));
    if old.negated != new.negated {
        // "I drink alcohol" / "I don't drink alcohol anymore".
        return same_slot(old, new) && same_value;
    }
    if same_value || new_value.is_empty() {
        return false;
    }
    match new.kind {
        // What changed is the slot of the nearest statement, or is named in both.
        SlotKind::Open => {
            let named = new.topic.iter().chain(&new.value).any(|w| {
                (old.value.contains(w) || old.slot.contains(w)) && !new_value.contains(w)
                    || old.value.contains(w) && new.topic.contains(w)
            }) || !old.value.is_disjoint(&new.value);
            new.change && old.kind != SlotKind::Open && (nearest || named)
        }
        SlotKind::Attribute => same_slot(old, new),
        // Doing one thing does not stop another unless the statement says it changed.
        SlotKind::Activity => new.change && same_slot(old, new),
    }
}

/// Whether statement `new` contradicts stored statement `old`: some claim of `new` gives
/// another value of a slot a claim of `old` fills. `nearest`: `old` is the stored statement
/// closest in meaning to `new`, so an open slot ("I switched to …") may be its slot.
pub fn contradicts(old: &str, new: &str, nearest: bool) -> bool {
    let old = claims(old);
    claims(new).iter().any(|n| old.iter().any(|o| replaces(o, n, nearest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_read_from_structure_in_either_person() {
        let c = &claims("Lately my favourite fruit is papaya.")[0];
        assert_eq!(
            (c.kind, c.slot.clone()),
            (SlotKind::Attribute, vec![loose("favourite"), loose("fruit")])
        );
        assert!(c.value.contains("papaya") && !c.change);
        let c = &claims("User's favourite season is autumn")[0];
        assert_eq!((&c.holder, c.kind), (&Holder::User, SlotKind::Attribute));
        let c = &claims("Spring is my favourite season now.")[0];
        assert_eq!(c.slot, [loose("favourite"), loose("season")]);
        assert!(c.value.contains("spring") && c.change);
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
        ];
        for (old, new) in yes {
            assert!(contradicts(old, new, true), "{old} / {new}");
        }
        assert!(!contradicts("I write my notes in Notion.", "I moved to Obsidian.", false));
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
        ];
        for (old, new) in no {
            assert!(!contradicts(old, new, true), "{old} / {new}");
        }
    }
}
