//! The labelled sets in `testdata/`: reading them, and naming the policy gate's call the way
//! their labels do.

use std::path::PathBuf;

use mnemo_core::lifecycle::Outcome;
use mnemo_core::policy::ReasonCode;
use serde::de::DeserializeOwned;

/// The path of a file in the repository's `testdata/` folder.
pub fn testdata_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name)
}

/// A JSON file in `testdata/`.
pub fn read_json<T: DeserializeOwned>(name: &str) -> T {
    let path = testdata_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON-lines file in `testdata/`, one case per non-empty line.
pub fn read_jsonl<T: DeserializeOwned>(name: &str) -> Vec<T> {
    let path = testdata_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{} line {}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// The gate's call as the sets label it: `secret`, `instruction_like`, `needs_consent` or
/// `allow`.
pub fn gate_class(outcome: Outcome, reason: ReasonCode) -> &'static str {
    match (outcome, reason) {
        (Outcome::Refused, ReasonCode::Secret) => "secret",
        (Outcome::Pending, ReasonCode::InstructionLike) => "instruction_like",
        (Outcome::Pending, ReasonCode::NeedsConsent) => "needs_consent",
        _ => "allow",
    }
}
