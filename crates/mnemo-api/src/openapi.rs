//! The OpenAPI 3.1 document of the HTTP API, generated from the wire types: every request and
//! response schema comes from the Rust types' `JsonSchema`, so the document cannot describe a
//! shape the server does not use. `cargo xtask codegen` writes it to `docs/openapi.json`; CI
//! fails when the committed file drifts.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::mem0::{
    Mem0AddBody, Mem0Deleted, Mem0Event, Mem0HistoryEntry, Mem0Memory, Mem0Notice, Mem0ResetBody,
    Mem0Results, Mem0SearchBody, Mem0UpdateBody,
};
use crate::requests::{
    ContextBody, EditBody, IngestBody, KeyCreateBody, MemberBody, RememberBody, RunEvidenceBody,
    RunStartBody, RunStatusBody, RunStepBody, RunToolResultBody, SearchBody, SettingsBody,
    SpaceCreateBody,
};
use crate::{
    AuditResponse, ConfirmResponse, ContextResponse, DeletionsResponse, ErrorBody, ExpireResponse,
    ForgetAllResponse, ForgetResponse, HistoryResponse, ImportResponse, IngestResponse, KeyCreated,
    KeyList, KeyRevoked, MemberList, MemberRemoved, MemoryList, MemoryToolResponse, RejectResponse,
    RememberResponse, RunEnded, RunList, SearchResponse, SettingsResponse, SpaceDeleted,
    SpaceDetail, SpaceEntry, SpaceList, UsedResponse,
};
use mnemo_core::export::ExportDocument;
use mnemo_core::run::Run;
use mnemo_core::{Kind, Memory, Status, Timestamp};

/// One documented operation.
struct Operation {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    query: &'static [&'static str],
    request: Option<Value>,
    response: Value,
    public: bool,
}

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    generator.subschema_for::<T>().to_value()
}

/// Every operation of the API, as (method, path, needs a key).
pub fn operations() -> Vec<(&'static str, &'static str, bool)> {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    table(&mut generator).into_iter().map(|o| (o.method, o.path, !o.public)).collect()
}

fn table(g: &mut SchemaGenerator) -> Vec<Operation> {
    let free = json!({"type": "object", "additionalProperties": true});
    let op = |method,
              path,
              summary,
              query: &'static [&'static str],
              request: Option<Value>,
              response: Value| Operation {
        method,
        path,
        summary,
        query,
        request,
        response,
        public: false,
    };
    let user = &["user_id"][..];
    vec![
        Operation {
            public: true,
            ..op("get", "/healthz", "Liveness", &[], None, json!({"type": "object"}))
        },
        Operation {
            public: true,
            ..op(
                "get",
                "/metrics",
                "Prometheus metrics (text)",
                &[],
                None,
                json!({"type": "string"}),
            )
        },
        Operation {
            public: true,
            ..op("get", "/openapi.json", "This document", &[], None, free.clone())
        },
        op(
            "post",
            "/v1/memories",
            "Remember one statement (policy gate, consistency rules)",
            &[],
            Some(schema::<RememberBody>(g)),
            schema::<RememberResponse>(g),
        ),
        op(
            "get",
            "/v1/memories",
            "List memories, newest first",
            &["user_id", "kind", "status", "include_expired", "space", "scope", "as_of"],
            None,
            schema::<MemoryList>(g),
        ),
        op("get", "/v1/memories/{id}", "One memory", user, None, schema::<Memory>(g)),
        op(
            "patch",
            "/v1/memories/{id}",
            "New version of a memory's text (the user in the body or the query)",
            user,
            Some(schema::<EditBody>(g)),
            schema::<Memory>(g),
        ),
        op(
            "delete",
            "/v1/memories/{id}",
            "Forget a memory completely",
            user,
            None,
            schema::<ForgetResponse>(g),
        ),
        op(
            "get",
            "/v1/memories/{id}/history",
            "Versions and superseded values",
            user,
            None,
            schema::<HistoryResponse>(g),
        ),
        op(
            "post",
            "/v1/memories/{id}/confirm",
            "Confirm a pending memory",
            user,
            None,
            schema::<ConfirmResponse>(g),
        ),
        op(
            "post",
            "/v1/memories/{id}/used",
            "Record that a memory was used in a response (a search alone is not a use)",
            user,
            None,
            schema::<UsedResponse>(g),
        ),
        op(
            "post",
            "/v1/memory-tool",
            "Run one call of Anthropic's memory tool (its input as the body) on the user's files \
             under /memories, kept as memories",
            user,
            Some(schema::<mnemo::core::memory_tool::Command>(g)),
            schema::<MemoryToolResponse>(g),
        ),
        op(
            "post",
            "/v1/memories/{id}/reject",
            "Reject (delete) a pending memory",
            user,
            None,
            schema::<RejectResponse>(g),
        ),
        op(
            "post",
            "/v1/search",
            "Hybrid search with the blended score",
            &[],
            Some(schema::<SearchBody>(g)),
            schema::<SearchResponse>(g),
        ),
        op(
            "post",
            "/v1/context",
            "Prompt-ready memory block within a token budget",
            &[],
            Some(schema::<ContextBody>(g)),
            schema::<ContextResponse>(g),
        ),
        op(
            "post",
            "/v1/ingest",
            "Ingest conversation messages",
            &[],
            Some(schema::<IngestBody>(g)),
            schema::<IngestResponse>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/export",
            "Everything stored about a user",
            &[],
            None,
            schema::<ExportDocument>(g),
        ),
        op(
            "post",
            "/v1/users/{user_id}/import",
            "Restore a user's memories from an export document (records the user asked to forget are left out unless ?allow_forgotten=true)",
            &["allow_forgotten"],
            Some(schema::<ExportDocument>(g)),
            schema::<ImportResponse>(g),
        ),
        op(
            "post",
            "/v1/expire",
            "Drop memories whose expiry has passed (the caller's user, or with a tenant key the whole tenant or ?user_id)",
            &["user_id"],
            None,
            schema::<ExpireResponse>(g),
        ),
        op(
            "delete",
            "/v1/users/{user_id}/memories",
            "Forget every memory of a user",
            &[],
            None,
            schema::<ForgetAllResponse>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/settings",
            "A user's settings",
            &[],
            None,
            schema::<SettingsResponse>(g),
        ),
        op(
            "put",
            "/v1/users/{user_id}/settings",
            "Switch memory on or off",
            &[],
            Some(schema::<SettingsBody>(g)),
            schema::<SettingsResponse>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/pending",
            "What the user may confirm: their own memories awaiting confirmation and the proposals waiting in the spaces they maintain",
            &[],
            None,
            schema::<MemoryList>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/overdue",
            "Active memories past their review date that the user may re-confirm (their own and their maintained spaces'), most overdue first",
            &[],
            None,
            schema::<MemoryList>(g),
        ),
        op(
            "post",
            "/v1/spaces",
            "Create a shared space of the tenant (admin key)",
            &[],
            Some(schema::<SpaceCreateBody>(g)),
            schema::<SpaceEntry>(g),
        ),
        op(
            "get",
            "/v1/spaces",
            "The spaces a user is a member of, with their role (a user key's, or the user a tenant key names); every space of the tenant for a tenant key naming no user",
            user,
            None,
            schema::<SpaceList>(g),
        ),
        op(
            "get",
            "/v1/spaces/{id}",
            "A space and its members (who can see its memories)",
            &[],
            None,
            schema::<SpaceDetail>(g),
        ),
        op(
            "delete",
            "/v1/spaces/{id}",
            "Delete a space: its memories completely, with tombstones and a receipt, then its memberships (admin key)",
            &[],
            None,
            schema::<SpaceDeleted>(g),
        ),
        op(
            "get",
            "/v1/spaces/{id}/members",
            "A space's members and their roles",
            &[],
            None,
            schema::<MemberList>(g),
        ),
        op(
            "post",
            "/v1/spaces/{id}/members",
            "Give a user of the tenant a role in a space: reader, contributor or maintainer (admin key)",
            &[],
            Some(schema::<MemberBody>(g)),
            schema::<mnemo_core::space::Member>(g),
        ),
        op(
            "delete",
            "/v1/spaces/{id}/members/{user_id}",
            "Remove a member from a space: their reads of it stop at once (admin key)",
            &[],
            None,
            schema::<MemberRemoved>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/audit",
            "Audit trail, newest first",
            &[],
            None,
            schema::<AuditResponse>(g),
        ),
        op(
            "get",
            "/v1/users/{user_id}/deletions",
            "Deletion receipts, newest first: what was removed, tombstones left, what remains and until when",
            &["limit"],
            None,
            schema::<DeletionsResponse>(g),
        ),
        op(
            "post",
            "/v1/keys",
            "Create a key of the caller's tenant (admin key); its secret is shown once",
            &[],
            Some(schema::<KeyCreateBody>(g)),
            schema::<KeyCreated>(g),
        ),
        op(
            "get",
            "/v1/keys",
            "The tenant's keys, without secrets or hashes (admin key)",
            &[],
            None,
            schema::<KeyList>(g),
        ),
        op(
            "delete",
            "/v1/keys/{id}",
            "Revoke a key of the tenant (admin key); it is refused from then on",
            &[],
            None,
            schema::<KeyRevoked>(g),
        ),
        op(
            "post",
            "/v1/runs",
            "Start a run (working memory of one task)",
            &[],
            Some(schema::<RunStartBody>(g)),
            schema::<Run>(g),
        ),
        op("get", "/v1/runs", "The user's runs, oldest first", user, None, schema::<RunList>(g)),
        op("get", "/v1/runs/{id}", "A run", user, None, schema::<Run>(g)),
        op(
            "delete",
            "/v1/runs/{id}",
            "End a run: its state is deleted, leaving one audit entry",
            user,
            None,
            schema::<RunEnded>(g),
        ),
        op(
            "post",
            "/v1/runs/{id}/steps",
            "Add a plan step",
            &[],
            Some(schema::<RunStepBody>(g)),
            schema::<Run>(g),
        ),
        op(
            "put",
            "/v1/runs/{id}/steps/{number}",
            "Set a step's status",
            &[],
            Some(schema::<RunStatusBody>(g)),
            schema::<Run>(g),
        ),
        op(
            "post",
            "/v1/runs/{id}/evidence",
            "Record evidence",
            &[],
            Some(schema::<RunEvidenceBody>(g)),
            schema::<Run>(g),
        ),
        op(
            "post",
            "/v1/runs/{id}/tool-results",
            "Record a reference to a tool result",
            &[],
            Some(schema::<RunToolResultBody>(g)),
            schema::<Run>(g),
        ),
        op(
            "post",
            "/memories",
            "mem0-compatible add",
            &[],
            Some(schema::<Mem0AddBody>(g)),
            schema::<Mem0Results<Mem0Event>>(g),
        ),
        op(
            "get",
            "/memories",
            "mem0-compatible list (newest first)",
            &["user_id", "agent_id", "run_id", "top_k", "show_expired"],
            None,
            schema::<Mem0Results<Mem0Memory>>(g),
        ),
        op(
            "delete",
            "/memories",
            "mem0-compatible delete all of a user (or of an agent or run)",
            &["user_id", "agent_id", "run_id"],
            None,
            schema::<Mem0Deleted>(g),
        ),
        op("get", "/memories/{id}", "mem0-compatible get", user, None, schema::<Mem0Memory>(g)),
        op(
            "put",
            "/memories/{id}",
            "mem0-compatible update",
            user,
            Some(schema::<Mem0UpdateBody>(g)),
            schema::<Mem0Notice>(g),
        ),
        op(
            "delete",
            "/memories/{id}",
            "mem0-compatible delete",
            user,
            None,
            schema::<Mem0Notice>(g),
        ),
        op(
            "get",
            "/memories/{id}/history",
            "mem0-compatible history, oldest value first",
            user,
            None,
            schema::<Vec<Mem0HistoryEntry>>(g),
        ),
        op(
            "post",
            "/search",
            "mem0-compatible search",
            &[],
            Some(schema::<Mem0SearchBody>(g)),
            schema::<Mem0Results<Mem0Memory>>(g),
        ),
        op(
            "post",
            "/reset",
            "mem0-compatible reset (one user)",
            user,
            Some(schema::<Mem0ResetBody>(g)),
            schema::<Mem0Deleted>(g),
        ),
    ]
}

/// The schema of a query parameter by its name, which means the same on every route.
fn query_schema(name: &str) -> Value {
    match name {
        "include_expired" | "allow_forgotten" | "show_expired" => {
            json!({"type": "boolean", "default": false})
        }
        "top_k" => json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        "scope" => json!({"type": "string", "pattern": SCOPE_PATTERN}),
        "as_of" => {
            json!({"type": "string", "format": "date-time", "pattern": Timestamp::SCHEMA_PATTERN})
        }
        "limit" => json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        "kind" => {
            json!({"type": "string", "enum": Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>()})
        }
        "status" => {
            json!({"type": "string", "enum": Status::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>()})
        }
        _ if crate::wire::IDENTIFIER_PARAMETERS.contains(&name) => identifier_schema(),
        _ => json!({"type": "string"}),
    }
}

/// The schema of an identifier (a user, agent, run, session, space or record id): not
/// empty, not only spaces, no control character.
fn identifier_schema() -> Value {
    json!({"type": "string", "minLength": 1, "pattern": IDENTIFIER_PATTERN})
}

/// The error statuses an operation can answer, each with the JSON error body: bad input
/// (400), a missing or unknown key (401), a key without the right (403), a rate limit (429),
/// the store unavailable (503) or failing (500) on every keyed route; a record or user that
/// does not exist (404) where the path names one or the route reads a user's records; a body
/// too large (413) where there is a body; a conflict with the stored state (409) and a full
/// disk (507) on writes.
fn error_statuses(o: &Operation) -> Vec<ErrorStatus> {
    let all = ERROR_STATUSES;
    let mut statuses: Vec<ErrorStatus> = all
        .iter()
        .filter(|(status, _, _)| match status {
            400 => true,
            _ if o.public => false,
            413 => o.request.is_some(),
            409 | 507 => o.method != "get",
            _ => true,
        })
        .copied()
        .collect();
    statuses.sort_unstable();
    statuses
}

/// An error status: its code, the name of its shared response, and what it means.
type ErrorStatus = (u16, &'static str, &'static str);

/// Every error status the API answers, each with the JSON error body.
const ERROR_STATUSES: [ErrorStatus; 10] = [
    (400, "InvalidInput", "Invalid input (one line naming what was wrong)"),
    (401, "Unauthorized", "Missing or unknown API key"),
    (403, "Forbidden", "The key may not act for this user or tenant"),
    (404, "NotFound", "No such record, user or run"),
    (409, "Conflict", "Conflicts with the stored state"),
    (413, "PayloadTooLarge", "Request body too large"),
    (429, "RateLimited", "Rate limited (Retry-After says when to come back)"),
    (500, "Internal", "Internal error"),
    (503, "Unavailable", "Store unavailable"),
    (507, "StorageFull", "Storage full"),
];

/// The operation's id, unique in the document, for generated clients: the verb and the
/// resource, snake_case, mem0's routes under `mem0_`.
fn operation_id(method: &str, path: &str) -> &'static str {
    match (method, path) {
        ("get", "/healthz") => "health",
        ("get", "/metrics") => "metrics",
        ("get", "/openapi.json") => "openapi",
        ("post", "/v1/memories") => "remember",
        ("get", "/v1/memories") => "list_memories",
        ("get", "/v1/memories/{id}") => "get_memory",
        ("patch", "/v1/memories/{id}") => "edit_memory",
        ("delete", "/v1/memories/{id}") => "forget_memory",
        ("get", "/v1/memories/{id}/history") => "memory_history",
        ("post", "/v1/memories/{id}/confirm") => "confirm_memory",
        ("post", "/v1/memories/{id}/used") => "mark_memory_used",
        ("post", "/v1/memory-tool") => "memory_tool",
        ("post", "/v1/memories/{id}/reject") => "reject_memory",
        ("post", "/v1/search") => "search",
        ("post", "/v1/context") => "context",
        ("post", "/v1/ingest") => "ingest",
        ("get", "/v1/users/{user_id}/export") => "export_user",
        ("post", "/v1/users/{user_id}/import") => "import_user",
        ("post", "/v1/expire") => "expire",
        ("delete", "/v1/users/{user_id}/memories") => "forget_user",
        ("get", "/v1/users/{user_id}/settings") => "get_settings",
        ("put", "/v1/users/{user_id}/settings") => "set_settings",
        ("get", "/v1/users/{user_id}/pending") => "list_pending",
        ("get", "/v1/users/{user_id}/overdue") => "list_overdue",
        ("post", "/v1/spaces") => "create_space",
        ("get", "/v1/spaces") => "list_spaces",
        ("get", "/v1/spaces/{id}") => "get_space",
        ("delete", "/v1/spaces/{id}") => "delete_space",
        ("get", "/v1/spaces/{id}/members") => "list_space_members",
        ("post", "/v1/spaces/{id}/members") => "add_space_member",
        ("delete", "/v1/spaces/{id}/members/{user_id}") => "remove_space_member",
        ("get", "/v1/users/{user_id}/audit") => "audit_trail",
        ("get", "/v1/users/{user_id}/deletions") => "deletion_receipts",
        ("post", "/v1/keys") => "create_key",
        ("get", "/v1/keys") => "list_keys",
        ("delete", "/v1/keys/{id}") => "revoke_key",
        ("post", "/v1/runs") => "start_run",
        ("get", "/v1/runs") => "list_runs",
        ("get", "/v1/runs/{id}") => "get_run",
        ("delete", "/v1/runs/{id}") => "forget_run",
        ("post", "/v1/runs/{id}/steps") => "add_run_step",
        ("put", "/v1/runs/{id}/steps/{number}") => "set_run_step",
        ("post", "/v1/runs/{id}/evidence") => "add_run_evidence",
        ("post", "/v1/runs/{id}/tool-results") => "add_run_tool_result",
        ("put", "/v1/runs/{id}") => "end_run",
        ("post", "/memories") => "mem0_add",
        ("get", "/memories") => "mem0_get_all",
        ("delete", "/memories") => "mem0_delete_all",
        ("get", "/memories/{id}") => "mem0_get",
        ("put", "/memories/{id}") => "mem0_update",
        ("delete", "/memories/{id}") => "mem0_delete",
        ("get", "/memories/{id}/history") => "mem0_history",
        ("post", "/search") => "mem0_search",
        ("post", "/reset") => "mem0_reset",
        _ => "",
    }
}

/// Request fields whose text must say something: not empty, not only spaces.
const TEXT_FIELDS: [&str; 11] = [
    "content",
    "query",
    "goal",
    "text",
    "data",
    "memory",
    "tool",
    "source_id",
    "excerpt",
    "reference",
    "note",
];

/// A pattern for an identifier: something besides spaces, and no control character.
const IDENTIFIER_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// What the server checks of a request field by its name, the same on every request that
/// has it (merged into the field's schema; `null` stays allowed where the type allows it).
fn field_rule(field: &str) -> Option<Value> {
    let durations = DURATION_PATTERN;
    Some(match field {
        "kind" => json!({"enum": enum_or_null(Kind::ALL.iter().map(|k| k.as_str()))}),
        "tokenizer" => {
            json!({"enum": enum_or_null(["cl100k", "cl100k_base", "o200k", "o200k_base"].into_iter())})
        }
        "ttl" | "retention" => json!({"pattern": durations}),
        "expires_at" | "review_after" => {
            json!({"format": "date-time", "pattern": Timestamp::SCHEMA_PATTERN})
        }
        // mem0 takes a day (the end of it) or a time.
        "expiration_date" => json!({
            "anyOf": [
                {"type": "string", "format": "date", "pattern": DAY_PATTERN},
                {"type": "string", "format": "date-time", "pattern": Timestamp::SCHEMA_PATTERN},
                {"type": "null"}
            ]
        }),
        "k" => json!({"minimum": 1, "maximum": mnemo::MAX_K}),
        "min_relevance" | "importance" | "confidence" | "threshold" => {
            json!({"minimum": 0, "maximum": 1})
        }
        "ref" => json!({"minLength": 1, "maxLength": mnemo_core::limits::MAX_REF_BYTES}),
        "subject" | "attribute" => json!({"minLength": 1, "pattern": IDENTIFIER_PATTERN}),
        "scope" => json!({"pattern": SCOPE_PATTERN}),
        "space" => json!({"minLength": 1, "pattern": SPACE_ID_PATTERN}),
        "spaces" => {
            json!({"minItems": 1, "items": {"type": "string", "minLength": 1, "pattern": SPACE_ID_PATTERN}})
        }
        "metadata" => {
            json!({"propertyNames": {"minLength": 1, "maxLength": 256, "pattern": IDENTIFIER_PATTERN}})
        }
        _ => return None,
    })
}

/// States the range of every integer a Rust type holds (`uint`, `uint32`, `int64`…), so that
/// a number the document allows is one the server reads.
fn integer_ranges(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            let range = match fields.get("format").and_then(Value::as_str) {
                Some("uint" | "uint64") => Some((json!(0), json!(u64::MAX))),
                Some("uint32") => Some((json!(0), json!(u32::MAX))),
                Some("uint16") => Some((json!(0), json!(u16::MAX))),
                Some("uint8") => Some((json!(0), json!(u8::MAX))),
                Some("int" | "int64") => Some((json!(i64::MIN), json!(i64::MAX))),
                Some("int32") => Some((json!(i32::MIN), json!(i32::MAX))),
                _ => None,
            };
            if let Some((low, high)) = range {
                fields.entry("minimum").or_insert(low);
                fields.entry("maximum").or_insert(high);
            }
            fields.values_mut().for_each(integer_ranges);
        }
        Value::Array(items) => items.iter_mut().for_each(integer_ranges),
        _ => {}
    }
}

/// The values of a string enum, and `null` for an optional field.
fn enum_or_null(values: impl Iterator<Item = &'static str>) -> Value {
    let mut values: Vec<Value> = values.map(Value::from).collect();
    values.push(Value::Null);
    Value::Array(values)
}

/// A duration as `Ttl::parse` reads it: amounts with units (`45s`, `36h`, `1d12h`), not all
/// zero; at most four parts of five digits, so that it ends before 9999 from any day now.
const DURATION_PATTERN: &str =
    "^\\s*([0-9]{1,5}[smhdw]){0,3}0{0,4}[1-9][0-9]{0,4}[smhdw]([0-9]{1,5}[smhdw]){0,3}\\s*$";

/// A day (`2026-05-31`) in the years a record may hold.
const DAY_PATTERN: &str =
    "^(197[1-9]|19[89][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// A scope as `Scope::from_str` reads it: `user`, or a kind and an identifier.
const SCOPE_PATTERN: &str = "^\\s*(user|(space|workspace|project):[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*)\\s*$";

/// A pattern for a space's id: one word without commas or control characters.
const SPACE_ID_PATTERN: &str = "^[^\\s,\\u0000-\\u001F\\u007F-\\u009F]+$";

/// States on the request schemas (the `…Body` types and the mem0 message and scope) the
/// rules the server checks on their text and identifiers, so that a request the document
/// allows is one the server takes.
fn constrain_requests(schemas: &mut Map<String, Value>) {
    for (name, schema) in schemas.iter_mut() {
        integer_ranges(schema);
        let request = name.ends_with("Body")
            || matches!(
                name.as_str(),
                "Mem0Message" | "Mem0Scope" | "Message" | "MessageSource" | "ExportDocument"
            );
        let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        if !request {
            continue;
        }
        for (field, property) in properties.iter_mut() {
            let Some(property) = property.as_object_mut() else { continue };
            if (name == "Message" && field == "id")
                || (name == "ExportDocument" && field == "tenant")
            {
                property.insert("minLength".into(), json!(1));
                property.insert("pattern".into(), json!(IDENTIFIER_PATTERN));
            } else if name == "SourceBody" && field == "type" {
                let types = mnemo_core::SourceType::ALL.iter().map(|t| t.as_str());
                property.insert("enum".into(), Value::Array(types.map(Value::from).collect()));
            } else if name == "ExportDocument" && field == "format" {
                property.insert("const".into(), json!(mnemo_core::export::EXPORT_FORMAT));
            } else if name == "ExportDocument" && field == "version" {
                let versions =
                    mnemo_core::export::OLDEST_READ_VERSION..=mnemo_core::export::EXPORT_VERSION;
                property.insert("enum".into(), json!(versions.collect::<Vec<_>>()));
            } else if let Some(rule) = field_rule(field) {
                for (key, value) in rule.as_object().into_iter().flatten() {
                    property.insert(key.clone(), value.clone());
                }
            } else if crate::wire::IDENTIFIER_FIELDS.contains(&field.as_str()) {
                property.insert("minLength".into(), json!(1));
                property.insert("pattern".into(), json!(IDENTIFIER_PATTERN));
            } else if TEXT_FIELDS.contains(&field.as_str()) {
                property.insert("minLength".into(), json!(1));
                property.insert("pattern".into(), json!("\\S"));
            }
        }
        match name.as_str() {
            // A space's id is one word: no spaces or commas.
            "SpaceCreateBody" => {
                properties["id"] = json!({"type": "string", "minLength": 1, "pattern": SPACE_ID_PATTERN, "description": properties["id"]["description"]});
                if let Some(property) = properties.get_mut("name").and_then(Value::as_object_mut) {
                    property.insert("minLength".into(), json!(1));
                    property.insert("pattern".into(), json!(IDENTIFIER_PATTERN));
                }
            }
            // A key's own rate: more than none, at most a million a second.
            "KeyCreateBody" => {
                if let Some(property) = properties.get_mut("rate").and_then(Value::as_object_mut) {
                    property.insert("exclusiveMinimum".into(), json!(0));
                    property.insert("maximum".into(), json!(1_000_000));
                }
            }
            _ => {}
        }
        // mem0's update takes its text under any of three names, or new metadata: one of
        // them at least.
        if name == "Mem0UpdateBody" {
            for field in ["text", "data", "memory"] {
                if let Some(property) = properties.get_mut(field).and_then(Value::as_object_mut) {
                    property.insert("type".into(), json!("string"));
                    property.remove("default");
                }
            }
            schema["anyOf"] = json!([
                {"required": ["text"]}, {"required": ["data"]}, {"required": ["memory"]},
                {"required": ["metadata"], "properties": {"metadata": {"type": "object"}}},
                {"required": ["expiration_date"]}
            ]);
        }
        // An admin key acts for the whole tenant, never for one user.
        if name == "KeyCreateBody" {
            schema["if"] = json!({"properties": {"admin": {"const": true}}, "required": ["admin"]});
            schema["then"] = json!({"properties": {"user_id": {"type": "null"}}});
        }
        // A keyed fact names both its subject and its attribute, or neither.
        if name == "RememberBody" {
            let named = |field: &str| json!({"properties": {field: {"type": "string"}}, "required": [field]});
            schema["allOf"] = json!([
                {"if": named("subject"), "then": named("attribute")},
                {"if": named("attribute"), "then": named("subject")},
                // A mandatory convention is a space's: `space`, or a `space:` scope.
                {
                    "if": {"properties": {"mandatory": {"const": true}}, "required": ["mandatory"]},
                    "then": {"anyOf": [
                        named("space"),
                        {"properties": {"scope": {"type": "string", "pattern": "^\\s*space:"}}, "required": ["scope"]}
                    ]}
                }
            ]);
        }
    }
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    settings.meta_schema = None;
    let mut generator = settings.into_generator();
    let error = schema::<ErrorBody>(&mut generator);
    let mut paths: Map<String, Value> = Map::new();
    for o in table(&mut generator) {
        let mut parameters: Vec<Value> = o
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| {
                let schema = match name {
                    "number" => json!({"type": "integer", "minimum": 1, "maximum": u32::MAX}),
                    _ => identifier_schema(),
                };
                json!({"name": name, "in": "path", "required": true, "schema": schema})
            })
            .collect();
        parameters.extend(o.query.iter().map(
            |q| json!({"name": q, "in": "query", "required": false, "schema": query_schema(q)}),
        ));
        let mut responses = Map::new();
        let media = if o.path == "/metrics" { "text/plain" } else { "application/json" };
        responses.insert(
            "200".into(),
            json!({"description": "OK", "content": {media: {"schema": o.response}}}),
        );
        for (status, name, _) in error_statuses(&o) {
            responses.insert(
                status.to_string(),
                json!({"$ref": format!("#/components/responses/{name}")}),
            );
        }
        let mut operation = json!({
            "operationId": operation_id(o.method, o.path),
            "summary": o.summary,
            "parameters": parameters,
            "responses": responses,
        });
        if let Some(body) = o.request {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": body}}});
        }
        if o.public {
            operation["security"] = json!([]);
        }
        paths.entry(o.path).or_insert_with(|| json!({}))[o.method] = operation;
    }
    let mut schemas = generator.take_definitions(true);
    constrain_requests(&mut schemas);
    json!({
        "openapi": "3.1.0",
        "info": {"title": "mnemo", "version": env!("CARGO_PKG_VERSION"), "description": "Long-term memory for AI assistants and agents."},
        "security": [{"bearer": []}, {"apiKey": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": ERROR_STATUSES
                .iter()
                .map(|(_, name, description)| {
                    ((*name).to_owned(), json!({"description": description, "content": {"application/json": {"schema": error}}}))
                })
                .collect::<Map<String, Value>>(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_is_openapi_3_1_with_typed_schemas() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        let remember = &doc["paths"]["/v1/memories"]["post"];
        assert_eq!(
            remember["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/RememberBody"
        );
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in [
            "RememberBody",
            "RememberResponse",
            "Memory",
            "SearchResponse",
            "ErrorBody",
            "Timestamp",
        ] {
            assert!(schemas.contains_key(name), "missing schema {name}");
        }
        assert_eq!(schemas["RememberBody"]["required"], json!(["content"]));
    }

    #[test]
    fn every_operation_has_a_unique_id_and_its_error_statuses() {
        let doc = document();
        let mut ids = std::collections::BTreeSet::new();
        for (path, methods) in doc["paths"].as_object().unwrap() {
            for (method, operation) in methods.as_object().unwrap() {
                let id = operation["operationId"].as_str().unwrap();
                assert!(!id.is_empty(), "{method} {path} has no operationId");
                assert!(ids.insert(id.to_owned()), "{id} is used twice");
                let responses = operation["responses"].as_object().unwrap();
                assert!(responses.contains_key("200") && responses.contains_key("400"));
                if operation.get("security") != Some(&json!([])) {
                    for status in ["401", "403", "404", "429"] {
                        assert!(responses.contains_key(status), "{method} {path}: no {status}");
                    }
                }
                if operation.get("requestBody").is_some() {
                    assert!(responses.contains_key("413"), "{method} {path}: no 413");
                }
            }
        }
        assert_eq!(ids.len(), operations().len());
        let list = &doc["paths"]["/v1/memories"]["get"]["parameters"];
        let expired = list.as_array().unwrap().iter().find(|p| p["name"] == "include_expired");
        assert_eq!(expired.unwrap()["schema"]["type"], "boolean");
        assert!(
            doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]["text/plain"]
                .is_object()
        );
    }

    #[test]
    fn request_schemas_state_what_the_server_checks() {
        let doc = document();
        let schemas = &doc["components"]["schemas"];
        // Text that must say something, identifiers without control characters.
        assert_eq!(schemas["RememberBody"]["properties"]["content"]["minLength"], 1);
        assert_eq!(schemas["SearchBody"]["properties"]["query"]["pattern"], "\\S");
        let user = &schemas["RememberBody"]["properties"]["user_id"];
        assert_eq!(user["minLength"], 1);
        assert!(user["pattern"].as_str().unwrap().contains("\\u0000-\\u001F"));
        // Responses are left as they are.
        assert!(schemas["Memory"]["properties"]["content"].get("minLength").is_none());
        // mem0's update needs its text under one of its names, metadata or an expiry.
        assert_eq!(schemas["Mem0UpdateBody"]["anyOf"].as_array().unwrap().len(), 5);
        // Ranges, patterns and rules between fields.
        let search = &schemas["SearchBody"]["properties"];
        assert_eq!(
            (search["k"]["minimum"].clone(), search["k"]["maximum"].clone()),
            (json!(1), json!(100))
        );
        assert_eq!(schemas["RememberBody"]["properties"]["ttl"]["pattern"], DURATION_PATTERN);
        assert_eq!(schemas["KeyCreateBody"]["then"]["properties"]["user_id"]["type"], "null");
        assert_eq!(schemas["RememberBody"]["allOf"].as_array().unwrap().len(), 3);
        assert_eq!(
            schemas["RunStatusBody"]["properties"]["status"]["enum"],
            json!(["pending", "done", "blocked"])
        );
    }
}
