#!/usr/bin/env bash
# Walks the sample conversation (examples/conversation.jsonl) through mnemo on a fresh
# database: what it keeps, what it holds for confirmation, what it refuses, what it finds,
# and what forgetting leaves. Run from the repository root after building:
#   cargo build --release --bin mnemo && bash examples/walkthrough.sh
# (MNEMO=path/to/mnemo to use another binary.)
set -euo pipefail
cd "$(dirname "$0")/.."
mnemo="${MNEMO:-target/release/mnemo}"
db="$(mktemp -d)/walkthrough.db"
export MNEMO_DB="$db"
now="2026-11-03T09:00:00Z"   # the morning after the conversation
run() { echo "\$ mnemo $*"; "$mnemo" --now "$now" "$@"; echo; }

run ingest --user alex --session first-chat examples/conversation.jsonl
run list --user alex --kind semantic           # the facts drawn from it
run pending --user alex                        # held for confirmation, each with why
run search --user alex "where do I live?"
run search --user alex "what do I do for work?"
run context --user alex --budget 300 "suggest a place for dinner on Saturday"
id="$("$mnemo" --now "$now" --json list --user alex --kind semantic | python3 -c '
import json, sys
print(next(m["id"] for m in json.load(sys.stdin)["memories"] if "green tea" in m["content"]))')"
text="$("$mnemo" --now "$now" --json list --user alex --kind semantic | python3 -c '
import json, sys
print(next(m["content"] for m in json.load(sys.stdin)["memories"] if "green tea" in m["content"]))')"
run forget --user alex "$id"                   # complete deletion, with its receipt
run remember --user alex "$text"               # refused (forgotten): the user asked to forget it
run remember --user alex --restate "$text"     # unless they say it again
echo "database: $db"
