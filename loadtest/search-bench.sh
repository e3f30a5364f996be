#!/usr/bin/env bash
# `make bench-search`: search time at 100,000 messages of one user (docs/performance.md,
# "Search"), on SQLite and, when it answers, on the local Postgres. Release builds
# (PROFILE=debug for the debug ones); the history is made up by
# `chat-server users seed --messages`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-/var/tmp/chat-target}
MESSAGES=${MESSAGES:-100000}
PG_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_search_bench}
PORT=8095

cd "$ROOT"
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = release ]; then
  CARGO_TARGET_DIR=$TARGET cargo build --release --locked -p chat-server -p loadtest
else
  CARGO_TARGET_DIR=$TARGET cargo build --locked -p chat-server -p loadtest
fi
SERVER=$TARGET/$PROFILE/chat-server
LT=$TARGET/$PROFILE/loadtest
WORK=$(mktemp -d /tmp/chat-search-bench.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT

# run NAME [ENV=VALUE...]: seeds one user, serves, measures.
run() {
  local name=$1
  shift
  local seeded
  seeded=$(env "$@" DATA_DIR="$WORK/$name" "$SERVER" users seed --count 1 --password bench-password-1 \
    --prefix search --messages "$MESSAGES" --tokens "$WORK/$name.tokens")
  echo "$name: $seeded"
  env "$@" DATA_DIR="$WORK/$name" BIND_ADDR="127.0.0.1:$PORT" RUST_LOG=warn "$SERVER" > "$WORK/$name.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done
  echo -n "$name: "
  "$LT" search --base "http://127.0.0.1:$PORT" --tokens "$WORK/$name.tokens"
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
}

run sqlite
if psql "${PG_URL%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${PG_URL##*/}" 2>/dev/null \
  && psql "${PG_URL%/*}/postgres" -qc "CREATE DATABASE ${PG_URL##*/}"; then
  run postgres DATABASE_URL="$PG_URL" REDIS_URL="${BENCH_REDIS_URL:-redis://127.0.0.1:6379}" REDIS_PREFIX="search-bench:"
else
  echo "postgres: not run (no server at ${PG_URL%/*})"
fi
