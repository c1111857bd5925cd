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
