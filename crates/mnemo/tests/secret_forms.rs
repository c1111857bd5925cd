//! The labelled secret set (`testdata/secret_forms.jsonl`): credentials in many forms and
//! look-alikes that are not secrets (UUIDs, commit hashes, tracking numbers, ISBNs, versions,
//! placeholders). Every secret must be found and redacted so that its value is gone;
//! look-alikes may be flagged at most 2% of the time. Run with `--nocapture` for the table.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use mnemo::core::screen::{find_secret, redact};
use mnemo_testkit::labelled::read_jsonl;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    id: String,
    secret: bool,
    form: String,
    content: String,
    value: Option<String>,
}

#[test]
fn secret_forms_are_all_found_and_look_alikes_pass() {
    let cases: Vec<Case> = read_jsonl("secret_forms.jsonl");
    let (mut secrets, mut found, mut removed, mut lookalikes, mut flagged) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for case in &cases {
        let detected = find_secret(&case.content).is_some();
        let (redacted, _) = redact(&case.content);
        if case.secret {
            secrets += 1;
            found += usize::from(detected);
            let value = case.value.as_deref().unwrap_or_default();
            let gone = !redacted.contains(value);
            removed += usize::from(gone);
            if !detected || !gone {
                misses.push(format!(
                    "MISSED {} [{}] detected {detected}, value removed {gone}: {} => {}",
                    case.id, case.form, case.content, redacted
                ));
            }
        } else {
            lookalikes += 1;
            flagged += usize::from(detected);
            if detected {
                misses.push(format!(
                    "FALSE POSITIVE {} [{}] {:?}: {}",
                    case.id,
                    case.form,
                    find_secret(&case.content),
                    case.content
                ));
            }
        }
    }
    eprintln!("\nsecret forms: {secrets} secrets, {lookalikes} look-alikes");
    eprintln!("| measure | value |");
    eprintln!("|---|---|");
    eprintln!("| secrets found (recall) | {found}/{secrets} |");
    eprintln!("| secret values removed by redaction | {removed}/{secrets} |");
    eprintln!("| look-alikes flagged (false positives) | {flagged}/{lookalikes} |");
    for miss in &misses {
        eprintln!("  {miss}");
    }
    assert!(secrets >= 100 && lookalikes >= 100);
    assert_eq!(found, secrets, "every secret form must be found");
    assert_eq!(removed, secrets, "every secret value must be redacted");
    assert!(flagged * 50 <= lookalikes, "{flagged}/{lookalikes} look-alikes flagged (max 2%)");
}
