//! The OpenAPI 3.1 document of the HTTP API, generated from the wire types: every request and
//! response schema comes from the Rust types' `JsonSchema`, so the document cannot describe a
//! shape the server does not use. `cargo xtask codegen` writes it to `docs/openapi.json`; CI
//! fails when the committed file drifts.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::requests::{
    ContextBody, EditBody, IngestBody, KeyCreateBody, RememberBody, RunEvidenceBody, RunStartBody,
    RunStatusBody, RunStepBody, RunToolResultBody, SearchBody, SettingsBody,
};
use crate::{
    AuditResponse, ConfirmResponse, ContextResponse, DeletionsResponse, ErrorBody, ExpireResponse,
    ForgetAllResponse, ForgetResponse, HistoryResponse, ImportResponse, IngestResponse, KeyCreated,
    KeyList, KeyRevoked, MemoryList, RejectResponse, RememberResponse, RunEnded, RunList,
    SearchResponse, SettingsResponse, UsedResponse,
};
use mnemo_core::Memory;
use mnemo_core::export::ExportDocument;
use mnemo_core::run::Run;

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
            &["user_id", "kind", "status", "include_expired"],
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
            "Memories awaiting confirmation",
            &[],
            None,
            schema::<MemoryList>(g),
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
        op("post", "/memories", "mem0-compatible add", &[], Some(free.clone()), free.clone()),
        op(
            "get",
            "/memories",
            "mem0-compatible list",
            &["user_id", "agent_id", "run_id"],
            None,
            free.clone(),
        ),
        op(
            "delete",
            "/memories",
            "mem0-compatible delete all of a user",
            &["user_id"],
            None,
            free.clone(),
        ),
        op("get", "/memories/{id}", "mem0-compatible get", user, None, free.clone()),
        op(
            "put",
            "/memories/{id}",
            "mem0-compatible update",
            user,
            Some(free.clone()),
            free.clone(),
        ),
        op("delete", "/memories/{id}", "mem0-compatible delete", user, None, free.clone()),
        op("get", "/memories/{id}/history", "mem0-compatible history", user, None, free.clone()),
        op("post", "/search", "mem0-compatible search", &[], Some(free.clone()), free.clone()),
        op("post", "/reset", "mem0-compatible reset (one user)", user, None, free),
    ]
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
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        parameters.extend(o.query.iter().map(
            |q| json!({"name": q, "in": "query", "required": false, "schema": {"type": "string"}}),
        ));
        let mut operation = json!({
            "summary": o.summary,
            "parameters": parameters,
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": o.response}}},
                "default": {"description": "Error", "content": {"application/json": {"schema": error}}}
            }
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
    json!({
        "openapi": "3.1.0",
        "info": {"title": "mnemo", "version": env!("CARGO_PKG_VERSION"), "description": "Long-term memory for AI assistants and agents."},
        "security": [{"bearer": []}, {"apiKey": []}],
        "paths": paths,
        "components": {
            "schemas": generator.take_definitions(true),
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
}
