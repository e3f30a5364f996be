#!/usr/bin/env bash
# `make bench-stats`: the operator's stats call (`GET /api/admin/stats`) at 1,000,000
# answers and 100,000 users (docs/performance.md, "Operator stats"), on SQLite and, when
# it answers, on the local Postgres. Release builds (PROFILE=debug for the debug ones).
# The history is written with SQL (loadtest/stats/seed-*.sql, seconds); the calls are
# timed by `loadtest admin-stats` through HTTP, as the dashboard makes them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-/var/tmp/chat-target}
PG_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_stats_bench}
RUNS=${RUNS:-100}
PORT=8096

cd "$ROOT"
PROFILE=${PROFILE:-release}
if [ "$PROFILE" = release ]; then
  CARGO_TARGET_DIR=$TARGET cargo build --release --locked -p chat-server -p loadtest
else
  CARGO_TARGET_DIR=$TARGET cargo build --locked -p chat-server -p loadtest
fi
SERVER=$TARGET/$PROFILE/chat-server
LT=$TARGET/$PROFILE/loadtest
WORK=$(mktemp -d /tmp/chat-stats-bench.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# run NAME SEED_COMMAND [ENV=VALUE...]: an admin, the seeded history, the server, the calls.
# MNB is never asked: forints are converted at a fixed fallback rate.
run() {
  local name=$1 seed=$2
  shift 2
  local env=("$@" DATA_DIR="$WORK/$name" HUF_RATE_URL= HUF_RATE_FALLBACK=400 RUST_LOG=warn)
  env "${env[@]}" "$SERVER" users seed --count 1 --password bench-password-1 --prefix statsadmin \
    --tokens "$WORK/$name.tokens" >/dev/null
  env "${env[@]}" "$SERVER" users grant-admin statsadmin0@example.com >/dev/null
  local started=$SECONDS
  $seed "$(date +%s%3N)"
  echo "$name: seeded in $((SECONDS - started)) s"
  env "${env[@]}" BIND_ADDR="127.0.0.1:$PORT" "$SERVER" > "$WORK/$name.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/api/health" >/dev/null && break; sleep 0.1; done
  "$LT" admin-stats --base "http://127.0.0.1:$PORT" --tokens "$WORK/$name.tokens" --runs "$RUNS" | sed "s/^/$name: /"
  kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
}

seed_sqlite() { sed "s/:now/$1/g" loadtest/stats/seed-sqlite.sql | sqlite3 -bail "$WORK/sqlite/chat.db"; }
seed_postgres() { psql "$PG_URL" -q -v ON_ERROR_STOP=1 -v now="$1" -f loadtest/stats/seed-postgres.sql; }

run sqlite seed_sqlite
if psql "${PG_URL%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${PG_URL##*/}" 2>/dev/null \
  && psql "${PG_URL%/*}/postgres" -qc "CREATE DATABASE ${PG_URL##*/}"; then
  run postgres seed_postgres DATABASE_URL="$PG_URL" REDIS_URL="${BENCH_REDIS_URL:-redis://127.0.0.1:6379}" \
    REDIS_PREFIX="stats-bench:"
  psql "${PG_URL%/*}/postgres" -qc "DROP DATABASE ${PG_URL##*/}"
else
  echo "postgres: not run (no server at ${PG_URL%/*})"
fi
