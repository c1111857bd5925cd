"""Searches a running-from-scratch `mnemo serve` over HTTP, as a client would, on a database
such as the one `cargo xtask bench ... --spaces 3 --keep DB` leaves (tenant `bench`, user
`user-0` with their own notebook and spaces). Starts the binary on a free port with the
default settings (but a rate limit a client sending back to back stays under), creates a user key, and measures one of:

    cold   N concurrent searches the moment the server is up (nothing cached): seconds until
           all are answered, and the server's peak resident memory;
    merged Q queries, each sent to the user's own notebook alone (`"spaces": ["private"]`)
           and to it with every space, alternating: p50 / p95 of each and the p95 ratio.

    python3 xtask/scripts/searches_over_http.py MNEMO_BINARY DB cold 8
    python3 xtask/scripts/searches_over_http.py MNEMO_BINARY DB merged 1000
"""

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request

binary, db, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"]
VERBS = ["likes", "visited", "bought", "mentioned", "fixed", "painted", "sold", "found"]
OBJECTS = ["the green garden", "a red bicycle", "the old piano", "a blue kayak",
           "the kitchen table", "a silver watch", "the front door", "a wool scarf"]

created = subprocess.run(
    [binary, "keys", "create", "--db", db, "--tenant", "bench", "--user", "user-0", "--json"],
    check=True, capture_output=True, text=True)
key = json.loads(created.stdout)["key"]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
# Default settings, but for the per-key rate limit (50 requests/s), which one client sending
# searches back to back exceeds.
server = subprocess.Popen([binary, "serve", "--db", db, "--addr", f"127.0.0.1:{port}",
                           "--rate-limit", "100000"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def search(query, spaces=None):
    body = {"query": query, "k": 10, "min_relevance": 0.0}
    if spaces is not None:
        body["spaces"] = spaces
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/search", data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request) as response:
        response.read()
    return (time.perf_counter() - start) * 1000


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


try:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz").read()
            break
        except OSError:
            time.sleep(0.1)
    if mode == "cold":
        start = time.perf_counter()
        threads = [threading.Thread(target=search, args=(f"{NAMES[i % 8]} likes the garden",))
                   for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - start
        peak = [line for line in open(f"/proc/{server.pid}/status") if line.startswith("VmHWM")]
        print(f"{count} concurrent searches answered after {elapsed:.1f} s; "
              f"server peak {peak[0].split()[1]} kB")
    else:
        search("warm up")
        search("warm up", ["private"])
        alone, merged = [], []
        for i in range(count):
            query = f"{NAMES[i % 8]} {VERBS[i * 3 % 8]} {OBJECTS[i * 5 % 8]}"
            alone.append(search(query, ["private"]))
            merged.append(search(query))
        a95, m95 = percentile(alone, 0.95), percentile(merged, 0.95)
        print(f"own notebook p50 {percentile(alone, 0.5):.2f} ms p95 {a95:.2f} ms; "
              f"with every space p50 {percentile(merged, 0.5):.2f} ms p95 {m95:.2f} ms "
              f"({m95 / a95:.2f}x the p95)")
finally:
    server.terminate()
    server.wait()
