"""A real `mnemo serve` on a fresh database for each test module, with an admin key and a
user key for alice. The binary is $MNEMO_BIN, else the workspace's target/debug/mnemo."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]


class Server:
    def __init__(self, url: str, admin_key: str, user_key: str, binary: str, db: str) -> None:
        self.url, self.admin_key, self.user_key, self.binary, self.db = url, admin_key, user_key, binary, db

    def key(self, *args: str) -> str:
        out = subprocess.run(
            [self.binary, "--json", "keys", "create", *args],
            env={**os.environ, "MNEMO_DB": self.db},
            check=True,
            capture_output=True,
            text=True,
        )
        return str(json.loads(out.stdout)["key"])


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    binary = os.environ.get("MNEMO_BIN") or str(ROOT / "target" / "debug" / "mnemo")
    if not Path(binary).exists():
        pytest.fail(f"no mnemo binary at {binary}: build it (cargo build --bin mnemo) or set MNEMO_BIN")
    with tempfile.TemporaryDirectory() as work:
        db = str(Path(work) / "mnemo.db")
        probe = Server("", "", "", binary, db)
        admin, user = probe.key("--admin"), probe.key("--user", "alice")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        process = subprocess.Popen(
            [binary, "serve", "--addr", f"127.0.0.1:{port}", "--rate-limit", "100000"],
            env={**os.environ, "MNEMO_DB": db},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    if httpx.get(f"{url}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            else:
                pytest.fail("mnemo serve did not answer /healthz")
            yield Server(url, admin, user, binary, db)
        finally:
            process.terminate()
            process.wait(timeout=10)
