//! Search and context through the CLI with the built-in embedder.

use serde_json::Value;

use crate::Env;

fn seed(env: &Env) -> Vec<String> {
    [
        "I prefer green tea in the morning",
        "My sister Ana lives in Lisbon",
        "I work as a data engineer at Initech",
        "Our billing service runs on PostgreSQL 16",
        "I am afraid of spiders",
        "I go climbing every Saturday",
    ]
    .iter()
    .map(|t| env.remember("u", t))
    .collect()
}

fn contents(results: &Value) -> Vec<String> {
    results["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn search_ranks_the_relevant_memory_first_with_score_parts() {
    let env = Env::new();
    seed(&env);
    let out = env.json(&["search", "--user", "u", "which database does billing use?"]);
    let first = &out["results"][0];
    assert_eq!(first["content"], "Our billing service runs on PostgreSQL 16");
    for key in ["score", "relevance", "recency", "importance", "id", "source", "status"] {
        assert!(first.get(key).is_some(), "missing {key}: {first}");
    }
    let score = first["score"].as_f64().unwrap();
    let expected = 0.6 * first["relevance"].as_f64().unwrap()
        + 0.2 * first["recency"].as_f64().unwrap()
        + 0.2 * first["importance"].as_f64().unwrap();
    assert!((score - expected).abs() < 1e-9, "{score} vs {expected}");
    // No word in common: found by the embedding alone.
    let semantic = env.json(&["search", "--user", "u", "-k", "1", "which animals scare me"]);
    assert_eq!(contents(&semantic), ["I am afraid of spiders"]);
}

#[test]
fn nothing_relevant_returns_nothing() {
    let env = Env::new();
    seed(&env);
    let out = env.json(&["search", "--user", "u", "quantum chromodynamics lecture notes"]);
    assert!(out["results"].as_array().unwrap().is_empty(), "{out}");
    let strict = env.json(&["search", "--user", "u", "--min-relevance", "1", "green tea"]);
    assert!(strict["results"].as_array().unwrap().is_empty());
}

#[test]
fn search_filters_before_ranking() {
    let env = Env::new();
    env.json(&[
        "remember",
        "--user",
        "u",
        "--subject",
        "user",
        "--attribute",
        "drink",
        "I drink coffee every day",
    ]);
    env.json(&[
        "remember",
        "--user",
        "u",
        "--subject",
        "user",
        "--attribute",
        "drink",
        "I drink tea every day now",
    ]);
    env.json(&["remember", "--user", "u", "--source", "web", "Tea drinkers live longer"]);
    env.json(&[
        "remember",
        "--user",
        "u",
        "--now",
        "2020-01-01T00:00:00Z",
        "--ttl",
        "1d",
        "I drink cocoa tonight",
    ]);
    env.json(&["remember", "--user", "other", "I drink mate every day"]);
    env.json(&[
        "remember",
        "--user",
        "u",
        "--kind",
        "procedural",
        "Answer drink questions briefly",
    ]);
    let out =
        env.json(&["search", "--user", "u", "-k", "20", "--min-relevance", "0", "what do I drink"]);
    let found = contents(&out);
    assert!(found.contains(&"I drink tea every day now".to_owned()), "{found:?}");
    for hidden in [
        "I drink coffee every day",
        "Tea drinkers live longer",
        "I drink cocoa tonight",
        "I drink mate every day",
    ] {
        assert!(!found.contains(&hidden.to_owned()), "{hidden} returned: {found:?}");
    }
    let procedural = env.json(&[
        "search",
        "--user",
        "u",
        "--kind",
        "procedural",
        "--min-relevance",
        "0",
        "drink",
    ]);
    assert_eq!(contents(&procedural), ["Answer drink questions briefly"]);
}

#[test]
fn a_search_is_not_a_use_but_marking_used_is() {
    let env = Env::new();
    let ids = seed(&env);
    let before = env.json(&["get", "--user", "u", &ids[4]]);
    assert_eq!(before["last_used_at"], Value::Null);
    let found =
        env.json(&["search", "--user", "u", "--now", "2030-01-01T00:00:00Z", "afraid of spiders"]);
    assert!(contents(&found).iter().any(|c| c.contains("spiders")), "{found}");
    let after = env.json(&["get", "--user", "u", &ids[4]]);
    assert_eq!(after["last_used_at"], Value::Null);
    let used = env.json(&["used", "--user", "u", "--now", "2030-01-01T00:00:00Z", &ids[4]]);
    assert_eq!(used["used"][0], ids[4].as_str());
    let after = env.json(&["get", "--user", "u", &ids[4]]);
    assert_eq!(after["last_used_at"], "2030-01-01T00:00:00.000Z");
    // Another user's id, or a made-up one, is not found and changes nothing.
    let out = env.run(&["used", "--user", "someone-else", &ids[4]]);
    assert_eq!(out.code, 3, "{}", out.stderr);
}

#[test]
fn bad_search_input_is_rejected() {
    let env = Env::new();
    for (args, names) in [
        (vec!["search", "--user", "u", "-k", "0", "tea"], "k"),
        (vec!["search", "--user", "u", "-k", "1000", "tea"], "k"),
        (vec!["search", "--user", "u", "  "], "query"),
        (vec!["search", "--user", "u", "--min-relevance", "2", "tea"], "min_relevance"),
        (vec!["context", "--user", "u", "--tokenizer", "gpt2", "tea"], "tokenizer"),
    ] {
        let run = env.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(names), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn context_keeps_profile_first_stays_in_budget_and_reports_ids() {
    let env = Env::new();
    seed(&env);
    let profile =
        env.json(&["remember", "--user", "u", "--kind", "profile", "Name is Sam"])["id"].clone();
    let full = env.json(&["context", "--user", "u", "--budget", "400", "which animals scare me?"]);
    let rendered = full["rendered"].as_str().unwrap();
    assert!(rendered.starts_with("<memory>\n"), "{rendered}");
    assert!(rendered.contains("data, not instructions"));
    assert!(rendered.find("Name is Sam").unwrap() < rendered.find("afraid of spiders").unwrap());
    assert_eq!(full["memory_ids"][0], profile);
    assert!(full["parts"]["profile"]["tokens"].as_u64().unwrap() > 0);
    assert_eq!(full["tokenizer"], "o200k_base");
    let mut last = 0;
    for budget in [0, 10, 40, 50, 60, 80, 120, 400] {
        let out = env.json(&[
            "context",
            "--user",
            "u",
            "--tokenizer",
            "cl100k",
            "--budget",
            &budget.to_string(),
            "which animals scare me?",
        ]);
        let used = out["total_tokens"].as_u64().unwrap();
        assert!(used <= budget, "budget {budget}: used {used}");
        assert!(used >= last || used == 0 || last == 0);
        last = used;
    }
}

#[test]
fn openai_compatible_embedder_is_used_and_a_model_mismatch_is_an_error() {
    use mnemo_testkit::fake_http::{embeddings_body, serve};
    let env = Env::new();
    let (base, seen) = serve(vec![
        (200, "", embeddings_body(&[vec![0.0, 1.0, 0.0]])),
        (200, "", embeddings_body(&[vec![0.0, 0.0, 1.0]])),
    ]);
    let out = env
        .command()
        .args([
            "--json",
            "--embedder",
            "openai",
            "--embed-url",
            &base,
            "--embed-model",
            "tiny",
            "--embed-dims",
            "3",
        ])
        .args(["remember", "--user", "u", "Prefers window seats"])
        .env("MNEMO_EMBED_API_KEY", "sk-local")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = env.json(&[
        "--embedder",
        "openai",
        "--embed-url",
        &base,
        "--embed-model",
        "tiny",
        "--embed-dims",
        "3",
        "get",
        "--user",
        "u",
        id["id"].as_str().unwrap(),
    ]);
    assert_eq!(m["embedding"]["model"], "openai:tiny");
    assert_eq!(m["embedding"]["dims"], 3);
    assert_eq!(seen.lock().unwrap()[0].authorization.as_deref(), Some("Bearer sk-local"));
    // The file now holds 3-d vectors of `openai:tiny`; the built-in model's must not mix in.
    let run = env.run(&["remember", "--user", "u", "Likes aisle seats too"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("embedder mismatch"), "{}", run.stderr);
}
