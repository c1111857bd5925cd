#!/usr/bin/env bash
# The MCP Inspector's CLI (npm) against `mnemo mcp` over stdio: it lists the tools and calls
# every one of them, and each call must succeed. Usage: .ci/mcp-inspector.sh PATH/TO/mnemo
set -euo pipefail
mnemo="$(realpath "$1")"
root="$(cd "$(dirname "$0")/.." && pwd)"
inspector_dir="$root/target/mcp-inspector"
if [ ! -x "$inspector_dir/node_modules/.bin/mcp-inspector-cli" ]; then
  mkdir -p "$inspector_dir"
  (cd "$inspector_dir" && npm install --silent --no-audit --no-fund @modelcontextprotocol/inspector@0.15.0)
fi
inspector="$inspector_dir/node_modules/.bin/mcp-inspector-cli"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
db="$work/inspector.db"
"$mnemo" --db "$db" remember --user alice "I prefer aisle seats on long flights" > /dev/null

# Calls one tool (or lists them) through the Inspector; prints the JSON it answers.
inspect() {
  "$inspector" --cli "$mnemo" --db "$db" mcp --user alice "$@"
}
# The tool's own JSON answer, after checking the call did not fail.
call() {
  inspect --method tools/call --tool-name "$@" | python3 -c '
import json, sys
answer = json.load(sys.stdin)
assert not answer.get("isError"), answer
print(answer["content"][0]["text"])'
}

tools="$(inspect --method tools/list | python3 -c 'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin)["tools"])))')"
expected="memory_context memory_forget memory_list memory_remember memory_search memory_update memory_used profile_get"
[ "$tools" = "$expected" ] || { echo "tools: $tools (expected $expected)"; exit 1; }

found="$(call memory_search --tool-arg 'query=which seat do I like on planes?')"
id="$(echo "$found" | python3 -c 'import json, sys; r = json.load(sys.stdin)["results"]; assert r, "no result"; print(r[0]["id"])')"
call memory_list > /dev/null
call memory_context --tool-arg 'query=book me a flight' | grep -q "aisle" || { echo "context lacks the memory"; exit 1; }
call profile_get > /dev/null
call memory_remember --tool-arg 'content=Prefers short answers' | grep -q '"outcome":"added"' \
  || { echo "remember did not add"; exit 1; }
call memory_update --tool-arg "id=$id" --tool-arg 'content=I prefer window seats on long flights' > /dev/null
call memory_used --tool-arg "ids=[\"$id\"]" > /dev/null
call memory_forget --tool-arg "id=$id" > /dev/null
left="$("$mnemo" --db "$db" list --user alice --json)"
if echo "$left" | grep -q "seats"; then
  echo "the forgotten memory is still listed: $left"
  exit 1
fi
echo "MCP Inspector CLI: listed 8 tools and called each of them"
