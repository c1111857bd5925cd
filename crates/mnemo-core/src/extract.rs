//! The rule-based extractor, the offline default (SPEC §3.1–3.2): finds durable statements
//! about the user in what the user said, gives each a kind and a subject + attribute key (so
//! a new value supersedes the old), and an expiry for transient states, resolved against the
//! message's time.
//!
//! It reads only first-person statements. Questions, hypotheticals, other people's facts and
//! one-off requests produce nothing.

use crate::clock::Timestamp;
use crate::record::Kind;

/// The rule set's name and version, recorded on every memory it produces.
pub const RULESET: &str = "rules/v1";

/// One statement found in a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// The memory kind.
    pub kind: Kind,
    /// Subject and attribute, when the statement is a keyed fact.
    pub key: Option<(String, String)>,
    /// The statement, self-contained.
    pub content: String,
    /// When a transient statement stops holding.
    pub expires_at: Option<Timestamp>,
}

const QUESTION_STARTS: &[&str] = &[
    "what", "why", "how", "when", "where", "who", "which", "can", "could", "would", "should", "do",
    "does", "did", "is", "are", "will", "shall", "may", "am", "have", "has",
];
const HYPOTHETICAL_STARTS: &[&str] = &[
    "if",
    "what if",
    "suppose",
    "supposing",
    "imagine",
    "let's say",
    "hypothetically",
    "assuming",
    "in case",
];
const CORRECTION_STARTS: &[&str] =
    &["actually,", "actually", "correction:", "sorry,", "no,", "oops,", "update:"];
const STANDING: &[&str] = &[
    "always",
    "never",
    "unless i ask",
    "from now on",
    "by default",
    "in future",
    "in the future",
    "every time",
    "whenever",
    "going forward",
];
const DIRECTIVE_VERBS: &[&str] = &[
    "use", "answer", "reply", "respond", "write", "format", "keep", "give", "show", "explain",
    "avoid", "include", "add", "prefer", "speak", "address",
];
const WEEKDAYS: [&str; 7] =
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// Splits text into sentences, each with whether it ended with a question mark.
fn sentences(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '.' | '!' | '?' | '\n' | ';' => {
                let trimmed = current.trim();
                if !trimmed.is_empty() {
                    out.push((trimmed.to_owned(), c == '?'));
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    let trimmed = current.trim();
    if !trimmed.is_empty() {
        out.push((trimmed.to_owned(), false));
    }
    out
}

fn starts_with_word(lower: &str, prefix: &str) -> bool {
    lower.starts_with(prefix)
        && lower[prefix.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric())
}

/// Cuts a captured value at the first clause boundary and trims it.
fn value(text: &str) -> Option<String> {
    let mut v = text.trim();
    for stop in [",", " because ", " but ", " and i ", " since ", " so ", " which ", " - "] {
        if let Some(i) = v.to_lowercase().find(stop) {
            v = &v[..i];
        }
    }
    let v = v.trim().trim_end_matches(['.', '!', ',']);
    (!v.is_empty() && v.split_whitespace().count() <= 8).then(|| v.to_owned())
}

/// The text after `prefix` (matched case-insensitively at the start of the sentence).
fn after<'a>(sentence: &'a str, lower: &str, prefix: &str) -> Option<&'a str> {
    starts_with_word(lower, prefix).then(|| &sentence[prefix.len()..])
}

fn end_of_day(at: Timestamp, days_ahead: i64) -> Timestamp {
    let day = at.as_millis().div_euclid(86_400_000) + days_ahead;
    Timestamp::from_millis((day + 1) * 86_400_000 - 1)
}

/// Weekday index (0 = Monday) of a timestamp (UTC).
fn weekday(at: Timestamp) -> i64 {
    // 1970-01-01 was a Thursday (index 3).
    (at.as_millis().div_euclid(86_400_000) + 3).rem_euclid(7)
}

/// The end of the day a time phrase names, relative to `at`: today, tonight, tomorrow, a
/// weekday (its next occurrence, today included), the weekend, next week.
fn resolve_until(phrase: &str, at: Timestamp) -> Option<Timestamp> {
    let p = phrase.to_lowercase();
    let p = p.trim().trim_start_matches("the ").trim_start_matches("this ");
    if p.starts_with("today") || p.starts_with("tonight") {
        return Some(end_of_day(at, 0));
    }
    if p.starts_with("tomorrow") {
        return Some(end_of_day(at, 1));
    }
    if p.starts_with("next week") {
        return Some(end_of_day(at, 7 - weekday(at) + 6));
    }
    if p.starts_with("weekend") || p.starts_with("the weekend") {
        return Some(end_of_day(at, (6 - weekday(at)).max(0)));
    }
    let day = WEEKDAYS.iter().position(|d| p.starts_with(d))? as i64;
    let ahead = (day - weekday(at)).rem_euclid(7);
    Some(end_of_day(at, ahead))
}

fn key(subject: &str, attribute: &str) -> Option<(String, String)> {
    Some((subject.to_owned(), attribute.to_owned()))
}

fn fact(kind: Kind, key: Option<(String, String)>, content: String) -> Extracted {
    Extracted { kind, key, content, expires_at: None }
}

/// Statements about the user in one sentence (already known not to be a question or
/// hypothetical).
fn statement(sentence: &str, at: Timestamp) -> Option<Extracted> {
    let lower = sentence.to_lowercase();
    let l = lower.as_str();
    for prefix in ["my name is", "call me", "please call me", "i go by"] {
        if let Some(name) = after(sentence, l, prefix).and_then(value) {
            return Some(fact(
                Kind::Profile,
                key("user", "name"),
                format!("Preferred name: {name}"),
            ));
        }
    }
    for prefix in ["my time zone is", "my timezone is", "i'm in the", "i am in the"] {
        if let Some(zone) = after(sentence, l, prefix).and_then(value)
            && (prefix.contains("zone") || zone.to_lowercase().contains("time"))
        {
            return Some(fact(
                Kind::Profile,
                key("user", "time_zone"),
                format!("Time zone: {zone}"),
            ));
        }
    }
    for prefix in ["i moved from", "we moved from"] {
        if let Some(rest) = after(sentence, l, prefix)
            && let Some(split) = rest.to_lowercase().find(" to ")
        {
            let from = value(&rest[..split])?;
            let to = value(&rest[split + 4..])?;
            return Some(fact(
                Kind::Semantic,
                key("user", "home_city"),
                format!("Lives in {to} (moved from {from})"),
            ));
        }
    }
    for prefix in
        ["i moved to", "i live in", "i'm based in", "i am based in", "i now live in", "we live in"]
    {
        if let Some(place) = after(sentence, l, prefix).and_then(value) {
            return Some(fact(
                Kind::Semantic,
                key("user", "home_city"),
                format!("Lives in {place}"),
            ));
        }
    }
    for prefix in ["i'm in", "i am in", "i'm staying in", "i am staying in"] {
        if let Some(rest) = after(sentence, l, prefix)
            && let Some(split) = rest.to_lowercase().find(" until ")
        {
            let place = value(&rest[..split])?;
            let when = &rest[split + 7..];
            let expires_at = resolve_until(when, at)?;
            return Some(Extracted {
                kind: Kind::Semantic,
                key: key("user", "current_location"),
                content: format!("In {place} until {}", when.trim().trim_end_matches('.')),
                expires_at: Some(expires_at),
            });
        }
    }
    for prefix in [
        "i'm travelling",
        "i am travelling",
        "i'm traveling",
        "i am traveling",
        "i'm away",
        "i am away",
        "i'm on vacation",
        "i'm on holiday",
    ] {
        if let Some(rest) = after(sentence, l, prefix) {
            let r = rest.to_lowercase();
            let when =
                ["next week", "tomorrow", "today", "this weekend", "until "].iter().find_map(
                    |w| r.find(w).map(|i| rest[i..].trim_start_matches("until ").to_owned()),
                )?;
            let expires_at = resolve_until(&when, at)?;
            return Some(Extracted {
                kind: Kind::Semantic,
                key: key("user", "travel"),
                content: format!("Travelling {}", rest.trim().trim_end_matches('.')),
                expires_at: Some(expires_at),
            });
        }
    }
    for prefix in ["my deadline is", "the deadline is", "deadline is", "deadline"] {
        if let Some(when) = after(sentence, l, prefix)
            && let Some(expires_at) = resolve_until(when, at)
        {
            return Some(Extracted {
                kind: Kind::Semantic,
                key: key("user", "deadline"),
                content: format!("Deadline: {}", when.trim()),
                expires_at: Some(expires_at),
            });
        }
    }
    for prefix in [
        "i work at",
        "i work for",
        "i'm working at",
        "i am working at",
        "i just joined",
        "i joined",
    ] {
        if let Some(employer) = after(sentence, l, prefix).and_then(value) {
            return Some(fact(
                Kind::Semantic,
                key("user", "employer"),
                format!("Works at {employer}"),
            ));
        }
    }
    for prefix in [
        "i work as a",
        "i work as an",
        "i work as",
        "my job is",
        "my role is",
        "i'm a",
        "i am a",
        "i'm an",
        "i am an",
    ] {
        if let Some(role) = after(sentence, l, prefix).and_then(value) {
            let role_lower = role.to_lowercase();
            let (title, employer) = match role_lower.find(" at ") {
                Some(i) => (role[..i].to_owned(), Some(role[i + 4..].to_owned())),
                None => (role.clone(), None),
            };
            // "I'm a big fan of…" is a preference, not a role.
            if prefix.starts_with("i'm") || prefix.starts_with("i am") {
                let job_like = employer.is_some()
                    || [
                        "engineer",
                        "developer",
                        "designer",
                        "manager",
                        "teacher",
                        "nurse",
                        "doctor",
                        "student",
                        "lawyer",
                        "analyst",
                        "scientist",
                        "writer",
                        "consultant",
                        "founder",
                        "architect",
                        "researcher",
                    ]
                    .iter()
                    .any(|j| title.to_lowercase().ends_with(j));
                if !job_like {
                    continue;
                }
            }
            let content = match &employer {
                Some(e) => format!("Works as {title} at {e}"),
                None => format!("Works as {title}"),
            };
            return Some(fact(Kind::Semantic, key("user", "role"), content));
        }
    }
    if let Some(rest) = after(sentence, l, "i prefer") {
        let r = rest.to_lowercase();
        if let Some(i) = r.find(" over ").or_else(|| r.find(" to ")) {
            let sep = if r[i..].starts_with(" over ") { 6 } else { 4 };
            let (a, b) = (value(&rest[..i])?, value(&rest[i + sep..])?);
            let mut pair = [a.to_lowercase(), b.to_lowercase()];
            pair.sort();
            return Some(fact(
                Kind::Semantic,
                key("user", &format!("preference:{}|{}", pair[0], pair[1])),
                format!("Prefers {a} over {b}"),
            ));
        }
        let thing = value(rest)?;
        return Some(fact(Kind::Semantic, None, format!("Prefers {thing}")));
    }
    for (prefix, verb) in [
        ("i really like", "Likes"),
        ("i like", "Likes"),
        ("i love", "Loves"),
        ("i enjoy", "Enjoys"),
        ("i don't like", "Dislikes"),
        ("i do not like", "Dislikes"),
        ("i dislike", "Dislikes"),
        ("i hate", "Dislikes"),
        ("i can't stand", "Dislikes"),
    ] {
        if let Some(thing) = after(sentence, l, prefix).and_then(value) {
            // "I like to …" plans and "I love you" are not tastes.
            let t = thing.to_lowercase();
            if t.starts_with("to ") || t == "you" || t == "it" || t == "that" || t == "this" {
                return None;
            }
            return Some(fact(
                Kind::Semantic,
                key("user", &format!("likes:{t}")),
                format!("{verb} {thing}"),
            ));
        }
    }
    // "our billing service runs on PostgreSQL 16", "we use Rust for the backend".
    for (marker, attribute) in
        [(" runs on ", "runs_on"), (" is built on ", "runs_on"), (" is written in ", "language")]
    {
        if (starts_with_word(l, "our") || starts_with_word(l, "my"))
            && let Some(i) = l.find(marker)
        {
            let thing = sentence[..i].split_once(' ').map(|(_, t)| t.trim().to_owned())?;
            let tech = value(&sentence[i + marker.len()..])?;
            return Some(fact(
                Kind::Semantic,
                key(&crate::lifecycle::normalize_key(&thing), attribute),
                format!("{} {}{tech}", capitalize(&thing), marker.trim_start()),
            ));
        }
    }
    if let Some(rest) = after(sentence, l, "we use") {
        let r = rest.to_lowercase();
        let i = r.find(" for ")?;
        let tech = value(&rest[..i])?;
        let purpose = value(&rest[i + 5..])?;
        return Some(fact(
            Kind::Semantic,
            key(&crate::lifecycle::normalize_key(&purpose), "uses"),
            format!("Uses {tech} for {purpose}"),
        ));
    }
    // Standing instructions: an imperative with a standing marker.
    let first = l.split_whitespace().next().unwrap_or_default();
    let imperative = DIRECTIVE_VERBS.contains(&first)
        || (first == "please"
            && l.split_whitespace().nth(1).is_some_and(|w| DIRECTIVE_VERBS.contains(&w)))
        || ((first == "always" || first == "never")
            && l.split_whitespace().nth(1).is_some_and(|w| DIRECTIVE_VERBS.contains(&w)));
    if imperative && STANDING.iter().any(|s| l.contains(s)) {
        return Some(fact(Kind::Procedural, None, capitalize(sentence)));
    }
    None
}

fn capitalize(text: &str) -> String {
    let mut chars = text.trim().chars();
    chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}

/// Finds statements about the user in one message the user wrote at `at`.
pub fn extract(message: &str, at: Timestamp) -> Vec<Extracted> {
    let mut found = Vec::new();
    for (sentence, question) in sentences(message) {
        let mut s = sentence.as_str();
        let mut lower = s.to_lowercase();
        // An explicit save: "remember that …", "please remember …", "note that …".
        let mut explicit = false;
        for prefix in [
            "please remember that",
            "please remember",
            "remember that",
            "remember",
            "note that",
            "keep in mind that",
            "can you remember that",
            "could you remember that",
        ] {
            if starts_with_word(&lower, prefix) {
                s = s[prefix.len()..].trim_start_matches([',', ':', ' ']);
                lower = s.to_lowercase();
                explicit = true;
                break;
            }
        }
        if !explicit && question {
            continue;
        }
        if !explicit && QUESTION_STARTS.iter().any(|q| starts_with_word(&lower, q)) {
            continue;
        }
        if HYPOTHETICAL_STARTS.iter().any(|h| starts_with_word(&lower, h))
            || lower.contains(" if i ")
        {
            continue;
        }
        for prefix in CORRECTION_STARTS {
            if starts_with_word(&lower, prefix.trim_end_matches([',', ':'])) {
                s = s[prefix.trim_end_matches([',', ':']).len()..]
                    .trim_start_matches([',', ':', ' ']);
                lower = s.to_lowercase();
                break;
            }
        }
        if s.is_empty() {
            continue;
        }
        match statement(s, at) {
            Some(e) => found.push(e),
            None if explicit => {
                // Whatever the user explicitly asked to keep, in their words.
                found.push(fact(Kind::Semantic, None, capitalize(s)));
            }
            None => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 2026-03-04, 10:00 UTC.
    fn wednesday() -> Timestamp {
        Timestamp::parse("2026-03-04T10:00:00Z", "t").unwrap()
    }

    fn one(text: &str) -> Option<Extracted> {
        let mut all = extract(text, wednesday());
        assert!(all.len() <= 1, "{text:?} gave {all:?}");
        all.pop()
    }

    fn keyed(text: &str) -> Option<(String, String, String)> {
        one(text).map(|e| {
            let (s, a) = e.key.unwrap_or_default();
            (s, a, e.content)
        })
    }

    #[test]
    fn facts_with_keys() {
        let k = |s: &str, a: &str, c: &str| Some((s.to_owned(), a.to_owned(), c.to_owned()));
        assert_eq!(keyed("Call me Sam"), k("user", "name", "Preferred name: Sam"));
        assert_eq!(keyed("My name is Ana Lima."), k("user", "name", "Preferred name: Ana Lima"));
        assert_eq!(
            keyed("I moved from Dallas to Austin last month"),
            k("user", "home_city", "Lives in Austin last month (moved from Dallas)")
        );
        assert_eq!(keyed("I live in Lisbon"), k("user", "home_city", "Lives in Lisbon"));
        assert_eq!(keyed("I work at Initech"), k("user", "employer", "Works at Initech"));
        assert_eq!(
            keyed("I'm a data engineer at Initech"),
            k("user", "role", "Works as data engineer at Initech")
        );
        assert_eq!(keyed("My time zone is CET"), k("user", "time_zone", "Time zone: CET"));
        assert_eq!(
            keyed("I prefer email over phone"),
            k("user", "preference:email|phone", "Prefers email over phone")
        );
        assert_eq!(
            keyed("I prefer phone to email").map(|k| k.1),
            Some("preference:email|phone".to_owned())
        );
        assert_eq!(keyed("I hate olives"), k("user", "likes:olives", "Dislikes olives"));
        assert_eq!(keyed("I love olives").map(|k| k.1), Some("likes:olives".to_owned()));
        assert_eq!(
            keyed("Our billing service runs on PostgreSQL 16"),
            k("billing_service", "runs_on", "Billing service runs on PostgreSQL 16")
        );
    }

    #[test]
    fn procedural_instructions() {
        let e = one("Use TypeScript examples unless I ask otherwise").unwrap();
        assert_eq!(
            (e.kind, e.content.as_str()),
            (Kind::Procedural, "Use TypeScript examples unless I ask otherwise")
        );
        assert_eq!(one("Always answer in French").map(|e| e.kind), Some(Kind::Procedural));
        assert_eq!(one("Use a table for this one"), None, "a one-off request");
    }

    #[test]
    fn transient_states_expire() {
        let e = one("I'm in Lisbon until Friday").unwrap();
        assert_eq!(e.expires_at.unwrap().to_string(), "2026-03-06T23:59:59.999Z");
        assert_eq!(e.key, Some(("user".into(), "current_location".into())));
        let e = one("I'm travelling next week").unwrap();
        assert_eq!(e.expires_at.unwrap().to_string(), "2026-03-15T23:59:59.999Z");
        let e = one("Deadline Friday").unwrap();
        assert_eq!(e.expires_at.unwrap().to_string(), "2026-03-06T23:59:59.999Z");
        let e = one("I'm in Porto until tomorrow").unwrap();
        assert_eq!(e.expires_at.unwrap().to_string(), "2026-03-05T23:59:59.999Z");
    }

    #[test]
    fn explicit_saves_and_corrections() {
        assert_eq!(
            one("Remember that my sister's birthday is May 3").map(|e| e.content),
            Some("My sister's birthday is May 3".to_owned())
        );
        assert_eq!(
            keyed("Please remember I live in Porto").map(|k| k.2),
            Some("Lives in Porto".to_owned())
        );
        assert_eq!(
            keyed("Actually, I live in Braga").map(|k| k.2),
            Some("Lives in Braga".to_owned())
        );
    }

    #[test]
    fn nothing_from_questions_hypotheticals_others_and_requests() {
        for text in [
            "Do I live in Lisbon?",
            "Where do I work",
            "If I moved to Berlin, would I need a visa?",
            "Suppose I work at Google",
            "My friend lives in Paris",
            "My boss prefers email",
            "Book a table for two tonight",
            "Can you summarise this article?",
            "I like to think about it",
            "I love you",
            "It is raining",
        ] {
            assert_eq!(extract(text, wednesday()), vec![], "{text:?}");
        }
    }

    #[test]
    fn several_statements_in_one_message() {
        let all =
            extract("Hi! I live in Oslo. I work at Equinor. What's the weather?", wednesday());
        let contents: Vec<_> = all.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(contents, ["Lives in Oslo", "Works at Equinor"]);
    }
}
