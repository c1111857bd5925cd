//! Encryption at rest through the real binary: `MNEMO_DB_KEY` or `--db-key-file` unlocks the
//! file, nothing stored is readable in it, a missing or wrong key is a one-line error, and
//! `mnemo rekey` changes the key or removes the encryption.
#![cfg(feature = "encryption")]

use crate::{Env, Run};

const MARKER: &str = "Quillfeather7731 keeps bees on the roof";

fn contains_marker(bytes: &[u8]) -> bool {
    bytes.windows(MARKER.len()).any(|w| w == MARKER.as_bytes())
}

/// Runs `args` with `MNEMO_DB_KEY` set to `key` (unset when `None`).
fn with_key(env: &Env, key: Option<&str>, args: &[&str]) -> Run {
    let mut command = env.command();
    command.env_remove("MNEMO_DB_KEY");
    if let Some(key) = key {
        command.env("MNEMO_DB_KEY", key);
    }
    let output = command.args(args).output().expect("mnemo runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn an_encrypted_database_through_the_binary() {
    let env = Env::new();
    let stored = with_key(&env, Some("correct horse"), &["remember", "--user", "u", MARKER]);
    assert_eq!(stored.code, 0, "{}", stored.stderr);
    assert!(!contains_marker(&env.raw_bytes()), "the marker is readable in the database files");

    let listed = with_key(&env, Some("correct horse"), &["list", "--user", "u"]);
    assert!(listed.stdout.contains(MARKER), "{listed:?}");

    for (key, expected) in [(None, "encrypted"), (Some("battery staple"), "the key is wrong")] {
        let refused = with_key(&env, key, &["list", "--user", "u"]);
        assert_eq!(refused.code, 2, "{refused:?}");
        assert!(refused.stderr.contains(expected), "{refused:?}");
        assert_eq!(refused.stderr.trim().lines().count(), 1, "{refused:?}");
    }

    // A key file, then a new key from another file.
    let old_file = env.path().join("old.key");
    let new_file = env.path().join("new.key");
    std::fs::write(&old_file, "correct horse\n").unwrap();
    std::fs::write(&new_file, "battery staple\n").unwrap();
    let old = old_file.to_str().unwrap();
    let rekeyed = with_key(
        &env,
        None,
        &["--db-key-file", old, "rekey", "--new-key-file", new_file.to_str().unwrap()],
    );
    assert_eq!(rekeyed.code, 0, "{rekeyed:?}");
    let stale = with_key(&env, Some("correct horse"), &["list", "--user", "u"]);
    assert_eq!(stale.code, 2, "{stale:?}");
    let listed = with_key(&env, Some("battery staple"), &["list", "--user", "u"]);
    assert!(listed.stdout.contains(MARKER), "{listed:?}");
    assert!(!contains_marker(&env.raw_bytes()));

    // Both a key file and the variable: ambiguous, refused.
    let both =
        with_key(&env, Some("battery staple"), &["--db-key-file", old, "list", "--user", "u"]);
    assert_eq!(both.code, 2, "{both:?}");

    let decrypted = with_key(&env, Some("battery staple"), &["--json", "rekey", "--decrypt"]);
    assert_eq!(decrypted.json()["encrypted"], false, "{decrypted:?}");
    let listed = with_key(&env, None, &["list", "--user", "u"]);
    assert!(listed.stdout.contains(MARKER), "{listed:?}");
    assert!(contains_marker(&env.raw_bytes()), "the decrypted file should hold the text");
}
