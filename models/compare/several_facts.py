#!/usr/bin/env python3
"""Messages that say several things, through the real binary: for each extraction set, how
many messages labelled with two or more facts gave at least that many memories.

Each such message is sent as one user turn to `mnemo ingest` (its own user, a fresh
database per set, the clock at 2026-03-04T10:00:00Z), then `mnemo list` counts the user's
memories other than the turn itself. The in-process figure of the same count is printed by
`cargo test --release -p mnemo --test extraction_set -- --nocapture`.

    cargo build --release --bin mnemo
    python3 models/compare/several_facts.py target/release/mnemo testdata/extraction_set*.jsonl
"""

import json
import os
import subprocess
import sys
import tempfile

NOW = "2026-03-04T10:00:00Z"


def memories_of(binary, db, user, content):
    turn = json.dumps({"role": "user", "content": content})
    subprocess.run(
        [binary, "--db", db, "ingest", "--user", user, "--session", "s", "--now", NOW, "--json", "-"],
        input=turn, text=True, capture_output=True, check=True,
    )
    listed = subprocess.run(
        [binary, "--db", db, "list", "--user", user, "--json", "--now", "2026-03-04T10:00:01Z"],
        text=True, capture_output=True, check=True,
    ).stdout
    records = json.loads(listed)
    records = records.get("memories", records) if isinstance(records, dict) else records
    return sum(1 for r in records if r.get("kind") != "episodic")


def main(binary, sets):
    for name in sets:
        db = os.path.join(tempfile.mkdtemp(), "several.db")
        labelled = given = 0
        for line in open(name, encoding="utf-8"):
            case = json.loads(line)
            facts = case["expect"].get("facts", 0)
            if facts < 2:
                continue
            labelled += 1
            given += memories_of(binary, db, "u-" + case["id"], case["content"]) >= facts
        print(f"{name}: {given}/{labelled}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
