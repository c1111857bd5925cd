"""mem0 drop-in: every request mem0's documentation shows for its self-hosted REST server
(docs/open-source/features/rest-api.mdx, server/README.md and the pgvector migration guide
of mem0's repository), replayed verbatim against a real `mnemo serve`, plus each route of
the endpoint table those pages list, checked for mem0's response shapes. Requests are sent as
the documentation's curl lines send them: JSON bodies, `X-API-Key` or `Authorization:
Bearer`, no client library."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any, Dict, Optional

import httpx
from conftest import Server

MEMORY_FIELDS = {"id", "memory", "hash", "metadata", "user_id", "agent_id", "run_id", "created_at", "updated_at", "expiration_date"}


def call(server: Server, method: str, path: str, body: Optional[Dict[str, Any]] = None, header: str = "X-API-Key") -> httpx.Response:
    key = server.admin_key
    headers = {"Content-Type": "application/json"}
    headers.update({"X-API-Key": key} if header == "X-API-Key" else {"Authorization": f"Bearer {key}"})
    return httpx.request(method, server.url + path, headers=headers, json=body)


def test_the_documented_requests(server: Server) -> None:
    # "Use the returned access_token as a bearer token" / "Create and use a per-user API key".
    for header in ("Authorization", "X-API-Key"):
        added = call(server, "POST", "/memories", {"messages": [{"role": "user", "content": "I love pizza."}], "user_id": "alice"}, header)
        assert added.status_code == 200, added.text
        assert isinstance(added.json()["results"], list)
    # "Create and search memories via HTTP".
    added = call(server, "POST", "/memories", {"messages": [{"role": "user", "content": "I love fresh vegetable pizza."}], "user_id": "alice"})
    assert added.status_code == 200, added.text
    events = added.json()["results"]
    assert events and {e["event"] for e in events} <= {"ADD", "UPDATE", "NONE"}
    assert all({"id", "memory", "event"} <= set(e) for e in events)

    found = call(server, "POST", "/search", {"query": "vegetable", "user_id": "alice"})
    assert found.status_code == 200, found.text
    results = found.json()["results"]
    assert any("vegetable" in r["memory"] for r in results), results
    assert all(MEMORY_FIELDS | {"score"} <= set(r) and "score_details" not in r for r in results)

    explained = call(server, "POST", "/search", {"query": "vegetable pizza", "user_id": "alice", "explain": True})
    assert explained.status_code == 200, explained.text
    details = explained.json()["results"][0]["score_details"]
    assert {"relevance", "recency", "importance", "bm25", "cosine"} <= set(details)

    # `curl -s http://localhost:8888/memories?user_id=<your-user-id> -H "X-API-Key: <your-api-key>"`.
    listed = call(server, "GET", "/memories?user_id=alice")
    assert listed.status_code == 200, listed.text
    memories = listed.json()["results"]
    assert memories and all(MEMORY_FIELDS <= set(m) for m in memories)

    # "Run a full cycle: POST /memories -> GET /memories/{id} -> DELETE /memories/{id}."
    made = call(server, "POST", "/memories", {"messages": [{"role": "user", "content": "My sister lives in Oslo"}], "user_id": "bob", "infer": False})
    memory_id = made.json()["results"][0]["id"]
    got = call(server, "GET", f"/memories/{memory_id}?user_id=bob")
    assert got.status_code == 200 and got.json()["memory"] == "My sister lives in Oslo"
    gone = call(server, "DELETE", f"/memories/{memory_id}?user_id=bob")
    assert gone.status_code == 200 and gone.json() == {"message": "Memory deleted successfully"}
    assert call(server, "GET", f"/memories/{memory_id}?user_id=bob").status_code == 404


def test_each_route_of_the_endpoint_table(server: Server) -> None:
    def add(text: str, **scope: Any) -> str:
        answer = call(server, "POST", "/memories", {"messages": [{"role": "user", "content": text}], "infer": False, **scope})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["results"][0]["id"])

    first = add("I work as a nurse", user_id="carol", agent_id="planner", run_id="r1", metadata={"source": "chat", "turn": 3})
    add("I play the cello", user_id="carol", agent_id="coach")

    # GET /memories, filtered by user, agent or run, newest first, top_k.
    assert [m["memory"] for m in call(server, "GET", "/memories?user_id=carol").json()["results"]] == ["I play the cello", "I work as a nurse"]
    assert [m["memory"] for m in call(server, "GET", "/memories?user_id=carol&agent_id=planner").json()["results"]] == ["I work as a nurse"]
    assert [m["run_id"] for m in call(server, "GET", "/memories?user_id=carol&run_id=r1").json()["results"]] == ["r1"]
    assert len(call(server, "GET", "/memories?user_id=carol&top_k=1").json()["results"]) == 1

    # POST /search: the filters form, top_k, threshold.
    hits = call(server, "POST", "/search", {"query": "what is my job?", "filters": {"user_id": "carol"}, "top_k": 1}).json()["results"]
    assert [h["memory"] for h in hits] == ["I work as a nurse"]
    assert hits[0]["metadata"] == {"source": "chat", "turn": 3}
    assert call(server, "POST", "/search", {"query": "what is my job?", "filters": {"user_id": "carol"}, "threshold": 1.0}).json()["results"] == []

    # PUT /memories/{id}: new text, or metadata alone.
    updated = call(server, "PUT", f"/memories/{first}?user_id=carol", {"text": "I work as a surgeon"})
    assert updated.status_code == 200 and "message" in updated.json()
    assert call(server, "PUT", f"/memories/{first}?user_id=carol", {"metadata": {"source": "profile"}}).status_code == 200
    record = call(server, "GET", f"/memories/{first}?user_id=carol").json()
    assert (record["memory"], record["metadata"]) == ("I work as a surgeon", {"source": "profile"})

    # PUT /memories/{id} with expiration_date: a day (its end), then null to remove it.
    assert call(server, "PUT", f"/memories/{first}?user_id=carol", {"expiration_date": "2999-01-31"}).status_code == 200
    record = call(server, "GET", f"/memories/{first}?user_id=carol").json()
    assert record["expiration_date"] == "2999-01-31T23:59:59.999Z" and record["memory"] == "I work as a surgeon"
    assert call(server, "PUT", f"/memories/{first}?user_id=carol", {"expiration_date": None}).status_code == 200
    assert call(server, "GET", f"/memories/{first}?user_id=carol").json()["expiration_date"] is None

    # GET /memories?show_expired=true: a memory whose expiration date has passed is listed
    # only when asked for. (Expired one millisecond after it was stored.)
    briefly = add("I am in Rome this week", user_id="carol")
    stored = call(server, "GET", f"/memories/{briefly}?user_id=carol").json()["created_at"]
    ended = datetime.fromisoformat(stored.replace("Z", "+00:00")) + timedelta(milliseconds=1)
    ended_text = ended.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert call(server, "PUT", f"/memories/{briefly}?user_id=carol", {"expiration_date": ended_text}).status_code == 200
    time.sleep(0.05)
    listed = [m["id"] for m in call(server, "GET", "/memories?user_id=carol").json()["results"]]
    shown = [m["id"] for m in call(server, "GET", "/memories?user_id=carol&show_expired=true").json()["results"]]
    assert briefly not in listed and briefly in shown

    # GET /memories/{id}/history: each value, with mem0's fields.
    history = call(server, "GET", f"/memories/{first}/history?user_id=carol").json()
    assert [(h["old_memory"], h["new_memory"], h["event"]) for h in history] == [
        (None, "I work as a nurse", "ADD"),
        ("I work as a nurse", "I work as a surgeon", "UPDATE"),
    ]
    assert all({"id", "memory_id", "created_at", "updated_at", "is_deleted", "actor_id", "role"} <= set(h) for h in history)

    # DELETE /memories: everything of an agent, then of the user.
    deleted = call(server, "DELETE", "/memories?user_id=carol&agent_id=coach")
    assert deleted.status_code == 200 and deleted.json()["message"] == "All relevant memories deleted"
    assert [m["memory"] for m in call(server, "GET", "/memories?user_id=carol").json()["results"]] == ["I work as a surgeon"]
    assert call(server, "DELETE", "/memories?user_id=carol").status_code == 200
    assert call(server, "GET", "/memories?user_id=carol").json()["results"] == []

    # POST /reset: mnemo resets the one user named, never the whole store.
    add("I like jazz", user_id="dan")
    add("I like blues", user_id="erin")
    reset = call(server, "POST", "/reset", {"user_id": "dan"})
    assert reset.status_code == 200 and reset.json()["deleted"] == 1
    assert call(server, "GET", "/memories?user_id=dan").json()["results"] == []
    assert len(call(server, "GET", "/memories?user_id=erin").json()["results"]) == 1
