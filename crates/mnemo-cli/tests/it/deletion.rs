//! Complete deletion through the CLI: after forget, forget --all and expire, no byte of the
//! text remains in the database file or its WAL.

use crate::Env;

#[test]
fn forget_leaves_no_byte_of_the_text() {
    let env = Env::new();
    let keep = env.remember("u", "Keeps bees named Quillwort");
    let id = env.json(&[
        "remember",
        "--user",
        "u",
        "--subject",
        "user",
        "--attribute",
        "locker",
        "Locker label Zyzzogeton5521",
    ])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.json(&["edit", "--user", "u", &id, "Locker label Zyzzogeton5521 changed to Xanthic7730"]);
    assert!(env.file_contains("Zyzzogeton5521"), "scan is blind");
    let forgotten = env.json(&["forget", "--user", "u", &id]);
    assert_eq!(forgotten["forgotten"][0], id.as_str());
    for needle in ["Zyzzogeton5521", "zyzzogeton5521", "Xanthic7730", "xanthic7730"] {
        assert!(!env.file_contains(needle), "{needle} still in the files");
    }
    assert_eq!(env.run(&["get", "--user", "u", &id]).code, 3);
    assert_eq!(env.json(&["get", "--user", "u", &keep])["content"], "Keeps bees named Quillwort");
}

#[test]
fn forget_all_leaves_no_byte_of_any_text() {
    let env = Env::new();
    env.remember("u", "Favourite word Brobdingnagian4411");
    env.remember("u", "Second word Callipygian5522");
    env.remember("other", "Other user word Defenestrate6633");
    let out = env.json(&["forget", "--user", "u", "--all"]);
    assert_eq!(out["forgotten_count"], 2);
    for needle in ["Brobdingnagian4411", "brobdingnagian4411", "Callipygian5522", "callipygian5522"]
    {
        assert!(!env.file_contains(needle), "{needle} still in the files");
    }
    assert!(env.file_contains("Defenestrate6633"));
}

#[test]
fn expire_leaves_no_byte_of_the_text() {
    let env = Env::new();
    env.json(&[
        "remember",
        "--user",
        "u",
        "--now",
        "2026-05-01T00:00:00Z",
        "--ttl",
        "1d",
        "Door colour Hippopotomonstro8844",
    ]);
    assert!(env.file_contains("Hippopotomonstro8844"));
    let out = env.json(&["expire", "--now", "2026-05-03T00:00:00Z"]);
    assert_eq!(out["expired"].as_array().unwrap().len(), 1);
    assert!(!env.file_contains("Hippopotomonstro8844"));
    assert!(!env.file_contains("hippopotomonstro8844"));
}

/// The deletion ledger through the real binary: a forgotten memory stays forgotten through an
/// import of an old export, a retried `remember` and a replayed `ingest`; the user brings it
/// back only by saying so (`--restate`, `import --allow-forgotten`, a new message); every
/// deletion answers with a receipt that `mnemo deletions` lists, without the text.
#[test]
fn forgotten_memories_are_not_recreated_by_import_retry_or_replay() {
    let env = Env::new();
    let fact = "My bike is called Quincunx7781";
    let id = env.remember("u", fact);
    let export = env.path().join("before.json");
    let exported = env.run(&["export", "--user", "u"]);
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    std::fs::write(&export, &exported.stdout).unwrap();
    let forgotten = env.json(&["forget", "--user", "u", &id]);
    assert_eq!(forgotten["forgotten"][0], id.as_str());
    let receipt = &forgotten["receipt"];
    assert_eq!(receipt["scope"], "memory");
    assert_eq!(receipt["removed"]["records"], 1);
    assert_eq!(receipt["tombstones"], 1);
    let places: Vec<&str> = receipt["remains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["place"].as_str().unwrap())
        .collect();
    assert!(places.contains(&"backups"), "{places:?}");
    // Nothing of the text in the file, the ledger included.
    assert!(!env.file_contains("Quincunx7781") && !env.file_contains("quincunx7781"));

    // Import of the old export: left out, and said so.
    let imported = env.json(&["import", export.to_str().unwrap()]);
    assert_eq!(imported["imported"], 0);
    assert_eq!(imported["forgotten"][0], id.as_str());
    assert!(env.json(&["list", "--user", "u"])["memories"].as_array().unwrap().is_empty());
    // A retry of the request (other case, punctuation).
    let retried = env.json(&["remember", "--user", "u", "my bike is called quincunx7781."]);
    assert_eq!(
        (retried["outcome"].as_str(), retried["reason"].as_str()),
        (Some("refused"), Some("forgotten"))
    );
    // The same words in a message dated before the deletion are a replay too.
    let chat = env.path().join("chat.jsonl");
    std::fs::write(
        &chat,
        format!("{{\"role\":\"user\",\"content\":\"{fact}\",\"ts\":\"2026-01-01T10:00:00Z\"}}\n"),
    )
    .unwrap();
    let old = env.json(&["ingest", "--user", "u", "--session", "s0", chat.to_str().unwrap()]);
    assert_eq!(old["turns_stored"], 0, "{old}");
    // A conversation ingested, its turn forgotten, then the conversation replayed.
    std::fs::write(
        &chat,
        "{\"role\":\"user\",\"content\":\"I keep my bike in Shed 12\",\"ts\":\"2026-01-01T10:00:00Z\",\"id\":\"msg-1\"}\n",
    )
    .unwrap();
    let chat_arg = chat.to_str().unwrap();
    let at = |time: &'static str| ["--now", time, "--user", "u"];
    let first = env.json(
        &[&at("2026-01-01T10:05:00Z")[..], &["ingest", "--session", "s1", chat_arg]].concat(),
    );
    assert_eq!(first["turns_stored"], 1, "{first}");
    let turns = env.json(&[&at("2026-01-01T10:05:00Z")[..], &["list"]].concat());
    for turn in turns["memories"].as_array().unwrap() {
        let turn_id = turn["id"].as_str().unwrap();
        env.json(&[&at("2026-01-01T11:00:00Z")[..], &["forget", turn_id]].concat());
    }
    let replayed = env.json(
        &[&at("2026-01-02T00:00:00Z")[..], &["ingest", "--session", "s1", chat_arg]].concat(),
    );
    assert_eq!(replayed["turns_stored"], 0, "{replayed}");
    let left = env.json(&[&at("2026-01-02T00:00:00Z")[..], &["list"]].concat());
    assert!(left["memories"].as_array().unwrap().is_empty(), "{left}");

    // The user says it again, explicitly: it is kept.
    let restated = env.json(&["remember", "--user", "u", "--restate", fact]);
    assert_eq!(restated["outcome"], "added", "{restated}");
    let again = restated["id"].as_str().unwrap().to_owned();
    env.json(&["forget", "--user", "u", &again]);
    // An import the user allows restores the old record.
    let allowed = env.json(&["import", "--allow-forgotten", export.to_str().unwrap()]);
    assert_eq!(allowed["imported"], 1);
    assert_eq!(env.json(&["get", "--user", "u", &id])["content"], fact);

    // Every deletion has its receipt, newest first, in JSON and in words.
    let listed = env.json(&["deletions", "--user", "u"]);
    let receipts = listed["deletions"].as_array().unwrap();
    // The fact, the turn (and what was drawn from it), the re-stated fact.
    assert!(receipts.len() >= 3, "{listed}");
    assert!(receipts.iter().any(|r| r["memory_id"] == id.as_str()));
    assert!(!listed.to_string().contains("Quincunx7781"));
    let words = env.run(&["deletions", "--user", "u"]);
    assert_eq!(words.code, 0);
    assert!(words.stdout.contains(&format!("memory {id}")), "{}", words.stdout);
    assert!(words.stdout.contains("remains in backups: until"), "{}", words.stdout);
    // Another user has none.
    let none = env.run(&["deletions", "--user", "v"]);
    assert_eq!((none.code, none.stdout.as_str()), (0, ""));
    assert!(none.stderr.contains("no deletions"), "{}", none.stderr);
}

/// Account deletion: every record and run goes with one receipt, the tombstones stay, and a
/// new conversation after it is remembered (a re-statement), while a replay is not.
#[test]
fn forget_all_leaves_a_receipt_and_tombstones_but_not_a_closed_door() {
    let env = Env::new();
    let chat = env.path().join("chat.jsonl");
    std::fs::write(
        &chat,
        "{\"role\":\"user\",\"content\":\"I live in Lisbon\",\"ts\":\"2026-01-01T10:00:00Z\",\"id\":\"a-1\"}\n",
    )
    .unwrap();
    let chat_arg = chat.to_str().unwrap();
    env.json(&[
        "--now",
        "2026-01-01T10:05:00Z",
        "ingest",
        "--user",
        "u",
        "--session",
        "s1",
        chat_arg,
    ]);
    let stored = env.json(&["--now", "2026-01-01T10:05:00Z", "list", "--user", "u"]);
    let count = stored["memories"].as_array().unwrap().len();
    assert!(count >= 1);
    let gone = env.json(&["--now", "2026-01-02T00:00:00Z", "forget", "--user", "u", "--all"]);
    assert_eq!(gone["forgotten_count"].as_u64().unwrap() as usize, count);
    assert_eq!(gone["receipt"]["scope"], "user");
    assert_eq!(gone["receipt"]["removed_ids"].as_array().unwrap().len(), 0);
    // The replay is refused; the same words in a new message later are the user's again.
    let replay = env.json(&[
        "--now",
        "2026-01-03T00:00:00Z",
        "ingest",
        "--user",
        "u",
        "--session",
        "s1",
        chat_arg,
    ]);
    assert_eq!(replay["turns_stored"], 0, "{replay}");
    std::fs::write(
        &chat,
        "{\"role\":\"user\",\"content\":\"I live in Lisbon\",\"ts\":\"2026-01-03T09:00:00Z\",\"id\":\"b-1\"}\n",
    )
    .unwrap();
    let new = env.json(&[
        "--now",
        "2026-01-03T09:01:00Z",
        "ingest",
        "--user",
        "u",
        "--session",
        "s2",
        chat_arg,
    ]);
    assert_eq!(new["turns_stored"], 1, "{new}");
    let receipts = env.json(&["deletions", "--user", "u"]);
    assert_eq!(receipts["deletions"].as_array().unwrap().len(), 1);
}

/// On a disk that is really full, `remember` fails with exit 6 and a clear message, and
/// `forget` still works: the store gives up the reserve file it keeps beside the database.
#[test]
#[ignore = "mounts a 2 MiB tmpfs, which needs root; .ci/run runs it"]
fn forget_works_on_a_full_disk() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted =
        Command::new("mount").args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"]).arg(&disk).status();
    assert!(mounted.is_ok_and(|s| s.success()), "cannot mount a tmpfs: run as root");
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(disk.clone());
    let env = Env { dir, db: disk.join("m.db"), store: None };
    let text = "the quick brown fox jumps over the lazy dog ".repeat(20);
    let mut stored = Vec::new();
    let refused = loop {
        let run = env.run(&[
            "--json",
            "remember",
            "--user",
            "u",
            &format!("Note {}: {text}", stored.len()),
        ]);
        if run.code != 0 {
            break run;
        }
        stored.push(run.json()["id"].as_str().unwrap().to_owned());
        assert!(stored.len() < 5000, "the disk never filled");
    };
    assert_eq!(refused.code, 6, "{}", refused.stderr);
    assert!(refused.stderr.contains("storage full"), "{}", refused.stderr);
    assert!(disk.join("m.db-reserve").exists());
    let forgotten = env.json(&["forget", "--user", "u", &stored[0]]);
    assert_eq!(forgotten["forgotten"][0], stored[0].as_str());
    assert!(!disk.join("m.db-reserve").exists(), "the reserve was given up");
    let listed = env.json(&["list", "--user", "u"]);
    assert_eq!(listed["memories"].as_array().unwrap().len(), stored.len() - 1);
    assert!(!env.file_contains("Note 0:"), "the forgotten text is gone from the files");
}
