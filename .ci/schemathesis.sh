#!/usr/bin/env bash
# Runs Schemathesis (its default checks, every operation of docs/openapi.json) against a live
# `mnemo serve` on a fresh database. Usage: .ci/schemathesis.sh PATH_TO_MNEMO
set -euo pipefail
cd "$(dirname "$0")/.."
mnemo="$(realpath "$1")"
work="$(mktemp -d)"
export MNEMO_DB="$work/mnemo.db"
key() { "$mnemo" --json keys create "$@" | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])'; }
MNEMO_ST_ADMIN_KEY="$(key --admin)"
MNEMO_ST_USER_KEY="$(key --user alice)"
export MNEMO_ST_ADMIN_KEY MNEMO_ST_USER_KEY
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# One client sends thousands of requests, many with bad keys on purpose: the limits that
# would stop it are raised.
"$mnemo" serve --addr "127.0.0.1:$port" --rate-limit 1000000 --failed-auth-limit 1000000 \
  >"$work/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 0.2
done
schemathesis --config-file .ci/schemathesis.toml run docs/openapi.json \
  --url "http://127.0.0.1:$port" --seed 1 --no-color
