//! Sessions and the context call through the binary: listing, the compacted view, and a
//! context block with the session's summary and recent turns within the budget.

use serde_json::{Value, json};

use crate::Env;

const NOW: &str = "2026-03-04T12:00:00Z";

/// Ingests a long planning conversation (62 turns) into session `plan` for `u`.
fn long_session(env: &Env) {
    let mut lines: Vec<Value> = vec![
        json!({"role": "user", "content": "Help me plan the Lisbon offsite for twelve people.", "id": "p0", "ts": "2026-03-04T09:00:00Z"}),
        json!({"role": "assistant", "content": "Sure. We decided to hold it in the second week of May. What budget per person should we assume?", "id": "p1", "ts": "2026-03-04T09:01:00Z"}),
        json!({"role": "tool", "content": "venue list\nAlfama hall\nBelem loft\nLX Factory\n(37 more lines)", "id": "p2", "ts": "2026-03-04T09:02:00Z"}),
    ];
    for i in 3..61 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let text = format!(
            "Turn {i}: more notes on rooms, transport, timing and the agenda for each of the three days of the offsite."
        );
        lines.push(json!({"role": role, "content": text, "id": format!("p{i}"), "ts": format!("2026-03-04T10:{:02}:00Z", i % 60)}));
    }
    lines.push(json!({"role": "user", "content": "Book the Alfama hall for the Tuesday.", "id": "p61", "ts": "2026-03-04T11:30:00Z"}));
    let path = env.path().join("plan.jsonl");
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n")).unwrap();
    let out = env.json(&[
        "ingest",
        "--user",
        "u",
        "--session",
        "plan",
        "--now",
        NOW,
        path.to_str().unwrap(),
    ]);
    assert_eq!(out["turns_stored"], 62, "{out}");
}

#[test]
fn session_list_and_show_compact_older_turns() {
    let env = Env::new();
    long_session(&env);
    let listed = env.json(&["session", "list", "--user", "u", "--now", NOW]);
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        (sessions[0]["id"].as_str(), sessions[0]["turns"].as_u64()),
        (Some("plan"), Some(62))
    );
    assert!(sessions[0]["expires_at"].is_string(), "turns carry a retention: {listed}");

    let view = env.json(&["session", "show", "plan", "--user", "u", "--now", NOW]);
    let summary = &view["summary"];
    assert_eq!(summary["range"][0], "p0");
    assert!(
        summary["decisions"][0]["text"].as_str().unwrap().contains("second week of May"),
        "{summary}"
    );
    assert_eq!(summary["decisions"][0]["source"], "p1");
    assert!(
        summary["open_questions"][0]["text"].as_str().unwrap().contains("budget per person"),
        "{summary}"
    );
    let recent = view["recent"].as_array().unwrap();
    let last = recent.last().unwrap()["line"].as_str().unwrap();
    assert!(last.ends_with("Book the Alfama hall for the Tuesday."), "{last}");
    assert_eq!(summary["turns"].as_u64().unwrap() as usize + recent.len(), 62);
    let text = env.run(&["session", "show", "plan", "--user", "u", "--now", NOW]);
    assert!(
        text.stdout.starts_with("Summary (not the transcript) of messages p0 to "),
        "{}",
        text.stdout
    );

    let missing = env.run(&["session", "show", "nope", "--user", "u", "--now", NOW]);
    assert_eq!(missing.code, 3, "{}", missing.stderr);
    let other = env.run(&["session", "show", "plan", "--user", "v", "--now", NOW]);
    assert_eq!(other.code, 3, "another user's session does not exist: {}", other.stderr);
}

#[test]
fn context_with_a_session_stays_within_budget_and_keeps_the_latest_turn() {
    let env = Env::new();
    long_session(&env);
    env.run(&["remember", "--user", "u", "--kind", "profile", "--now", NOW, "Name is Sam"]);
    for budget in ["100", "150", "400", "1200"] {
        let block = env.json(&[
            "context",
            "--user",
            "u",
            "--session",
            "plan",
            "--budget",
            budget,
            "--tokenizer",
            "cl100k",
            "--now",
            NOW,
            "Which venue did we pick?",
        ]);
        let total = block["total_tokens"].as_u64().unwrap();
        assert!(total <= budget.parse().unwrap(), "{budget}: {total}");
        let parts = block["parts"].as_object().unwrap();
        let recent = parts["recent_turns"]["text"].as_str().unwrap();
        assert!(recent.contains("Book the Alfama hall for the Tuesday."), "{budget}: {recent}");
        let ids: Vec<&str> =
            block["memory_ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let recent_ids = parts["recent_turns"]["memory_ids"].as_array().unwrap();
        assert!(recent_ids.iter().all(|id| ids.contains(&id.as_str().unwrap())));
        if budget == "1200" {
            assert!(parts.contains_key("session_summary"), "{block}");
            assert!(parts.contains_key("profile"), "{block}");
            let rendered = block["rendered"].as_str().unwrap();
            assert!(
                rendered
                    .contains("## Earlier in this session (summary)\nSummary (not the transcript)"),
                "{rendered}"
            );
        }
    }
}

#[test]
fn consolidation_outlives_the_transcript_and_is_forgotten_with_a_source() {
    let env = Env::new();
    long_session(&env);
    let later = "2026-03-06T12:00:00Z";
    let report = env.json(&["consolidate", "--user", "u", "--now", later]);
    assert_eq!(report["sessions"], json!(["plan"]), "{report}");
    assert_eq!(report["summaries"].as_array().unwrap().len(), 1);
    assert_eq!(report["facts"].as_array().unwrap().len(), 1, "{report}");
    let summary_id = report["summaries"][0].as_str().unwrap().to_owned();
    let fact_id = report["facts"][0].as_str().unwrap().to_owned();
    let summary = env.json(&["get", &summary_id, "--user", "u", "--now", later]);
    assert_eq!(summary["metadata"]["summary_of"], "plan");
    assert_eq!(summary["derived_from"].as_array().unwrap().len(), 62);
    assert_eq!(summary["source"]["extractor"], "consolidate/v1");
    assert!(
        summary["content"]
            .as_str()
            .unwrap()
            .starts_with("Summary (not the transcript) of messages p0 to p61")
    );
    let fact = env.json(&["get", &fact_id, "--user", "u", "--now", later]);
    assert!(fact["content"].as_str().unwrap().contains("second week of May"), "{fact}");
    // A session already summarised is left alone.
    let again = env.json(&["consolidate", "--user", "u", "--now", later]);
    assert!(again["sessions"].as_array().unwrap().is_empty(), "{again}");

    // The transcript expires at the end of its retention; the summary stays.
    let expiry = "2026-04-10T00:00:00Z";
    let expired = env.json(&["expire", "--user", "u", "--now", expiry]);
    assert_eq!(expired["expired"].as_array().unwrap().len(), 62, "{expired}");
    assert!(
        env.json(&["session", "list", "--user", "u", "--now", expiry])["sessions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let kept = env.run(&["get", &summary_id, "--user", "u", "--now", expiry]);
    assert_eq!(kept.code, 0, "{}", kept.stderr);

    // Forgetting a source forgets what was derived from it.
    let env = Env::new();
    long_session(&env);
    let report = env.json(&["consolidate", "--user", "u", "--now", later]);
    let summary_id = report["summaries"][0].as_str().unwrap().to_owned();
    let fact_id = report["facts"][0].as_str().unwrap().to_owned();
    let turns = env.json(&["list", "--user", "u", "--kind", "episodic", "--now", later]);
    let source =
        turns["memories"].as_array().unwrap().iter().find(|m| m["source"]["ref"] == "p1").unwrap()
            ["id"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(env.file_contains("Decided in session plan"));
    let forgotten = env.json(&["forget", &source, "--user", "u", "--now", later]);
    let gone: Vec<&str> =
        forgotten["forgotten"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for id in [&source, &summary_id, &fact_id] {
        assert!(gone.contains(&id.as_str()), "{id} not in {forgotten}");
    }
    for id in [&summary_id, &fact_id] {
        assert_eq!(env.run(&["get", id, "--user", "u", "--now", later]).code, 3);
    }
    assert!(!env.file_contains("Decided in session plan"));
    assert!(!env.file_contains("Summary (not the transcript) of messages p0"));
    assert!(!env.file_contains("second week of May"));
}

#[test]
fn ending_a_session_consolidates_it_at_once() {
    let env = Env::new();
    long_session(&env);
    // Right after the last turn: `consolidate` waits for a quiet day, `session end` does not.
    let soon = "2026-03-04T12:05:00Z";
    let waiting = env.json(&["consolidate", "--user", "u", "--now", soon]);
    assert!(waiting["sessions"].as_array().unwrap().is_empty(), "{waiting}");
    let ended = env.json(&["session", "end", "plan", "--user", "u", "--now", soon]);
    assert_eq!(ended["sessions"], json!(["plan"]), "{ended}");
    assert_eq!(ended["summaries"].as_array().unwrap().len(), 1);
    // The transcript stays until its retention ends; ending again writes nothing.
    let listed = env.json(&["session", "list", "--user", "u", "--now", soon]);
    assert_eq!(listed["sessions"][0]["turns"], 62);
    let again = env.json(&["session", "end", "plan", "--user", "u", "--now", soon]);
    assert!(again["summaries"].as_array().unwrap().is_empty(), "{again}");
    let unknown = env.run(&["session", "end", "nope", "--user", "u", "--now", soon]);
    assert_eq!(unknown.code, 3, "{}", unknown.stderr);
    let other = env.run(&["session", "end", "plan", "--user", "v", "--now", soon]);
    assert_eq!(other.code, 3, "another user's session does not exist: {}", other.stderr);
}
