//! Tenant and user isolation through every CLI command: another tenant's or user's id behaves
//! exactly like an id that does not exist.

use proptest::prelude::*;

use crate::Env;

/// Runs every by-id command as `intruder` against `id` and checks each answers "not found"
/// (exit 3) with the same message as for a made-up id, and changes nothing.
fn assert_invisible(env: &Env, intruder: &[&str], id: &str) {
    let owner_view =
        |env: &Env| env.run(&["get", "--tenant", "acme", "--user", "alice", "--json", id]).stdout;
    let before = owner_view(env);
    for command in
        [vec!["get", id], vec!["history", id], vec!["edit", id, "hijacked"], vec!["forget", id]]
    {
        let mut args: Vec<&str> = intruder.to_vec();
        args.extend(&command);
        let run = env.run(&args);
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        let mut made_up: Vec<&str> = intruder.to_vec();
        let mut other = command.clone();
        other[1] = "00000000-0000-7000-8000-000000000000";
        made_up.extend(&other);
        let reference = env.run(&made_up);
        assert_eq!(
            run.stderr.replace(id, "ID"),
            reference.stderr.replace("00000000-0000-7000-8000-000000000000", "ID"),
            "{args:?} answers differently from a missing id"
        );
    }
    let mut list: Vec<&str> = intruder.to_vec();
    list.extend(["--json", "list", "--include-expired"]);
    let listed = env.run(&list).json();
    assert!(listed["memories"].as_array().unwrap().iter().all(|m| m["id"] != id));
    assert_eq!(owner_view(env), before, "intruder changed the owner's record");
}

#[test]
fn every_by_id_command_treats_foreign_ids_as_missing() {
    let env = Env::new();
    let id = env.json(&[
        "remember",
        "--tenant",
        "acme",
        "--user",
        "alice",
        "Alice's secret recipe",
    ])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_invisible(&env, &["--tenant", "acme", "--user", "bob"], &id);
    assert_invisible(&env, &["--tenant", "globex", "--user", "alice"], &id);
    assert_invisible(&env, &["--user", "alice"], &id);
    let bob_forget_all = env.json(&["forget", "--tenant", "acme", "--user", "bob", "--all"]);
    assert_eq!(bob_forget_all["forgotten_count"], 0);
    let export = env.json(&["export", "--tenant", "globex", "--user", "alice"]);
    assert!(export["memories"].as_array().unwrap().is_empty());
    let get = env.json(&["get", "--tenant", "acme", "--user", "alice", &id]);
    assert_eq!(get["content"], "Alice's secret recipe");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Whatever users write, each user's list holds exactly their own records.
    #[test]
    fn lists_hold_only_the_callers_records(writes in proptest::collection::vec((0..4usize, 0..1000u32), 1..8)) {
        let env = Env::new();
        let users = [("t1", "a"), ("t1", "b"), ("t2", "a"), ("t2", "b")];
        let mut expected = vec![std::collections::BTreeSet::new(); users.len()];
        for (user, n) in &writes {
            let (tenant, name) = users[*user];
            let out = env.json(&["remember", "--tenant", tenant, "--user", name, &format!("note {n}")]);
            if out["outcome"] == "added" {
                expected[*user].insert(out["id"].as_str().unwrap().to_owned());
            }
        }
        for (index, (tenant, name)) in users.iter().enumerate() {
            let listed = env.json(&["list", "--tenant", tenant, "--user", name]);
            let ids: std::collections::BTreeSet<String> = listed["memories"].as_array().unwrap()
                .iter().map(|m| m["id"].as_str().unwrap().to_owned()).collect();
            prop_assert_eq!(&ids, &expected[index]);
        }
    }
}
