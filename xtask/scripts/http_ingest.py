"""Ingests the LoCoMo dev half into a running `mnemo serve` over HTTP, as a client would.

Each message carries the time it was said (its session's date, 30 seconds apart); `session`
posts one `/v1/ingest` call per session, `whole` one call per conversation. Run from the
repository root with `../shared` beside it:

    python3 xtask/scripts/http_ingest.py PORT session|whole ADMIN_KEY
"""

import datetime
import json
import sys
import time
import urllib.request

port, mode, key = sys.argv[1], sys.argv[2], sys.argv[3]
data = json.load(open("../shared/data/locomo/locomo-dev.json"))
calls = []
for number, sample in enumerate(data):
    conversation = sample["conversation"]
    whole = []
    n = 1
    while f"session_{n}" in conversation:
        when = datetime.datetime.strptime(
            conversation[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"
        )
        messages = [
            {
                "role": "user" if turn["speaker"] == conversation["speaker_a"] else "assistant",
                "content": turn["text"],
                "id": turn["dia_id"],
                "ts": (when + datetime.timedelta(seconds=30 * k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            for k, turn in enumerate(conversation[f"session_{n}"])
        ]
        if mode == "session":
            calls.append(
                {"user_id": f"conv{number}", "session_id": f"s{n}", "messages": messages, "retention": "3650d"}
            )
        else:
            whole.extend(messages)
        n += 1
    if mode != "session":
        calls.append({"user_id": f"conv{number}", "session_id": "all", "messages": whole, "retention": "3650d"})
turns = sum(len(call["messages"]) for call in calls)
start = time.time()
stored = proposed = 0
for body in calls:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/ingest",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {key}"},
    )
    report = json.load(urllib.request.urlopen(request))
    stored += report["turns_stored"]
    proposed += len(report["candidates"])
seconds = time.time() - start
print(f"{mode}: {len(calls)} calls, {turns} turns in {seconds:.2f} s = {turns / seconds:.0f} turns/s; "
      f"stored {stored}, proposed {proposed}")
