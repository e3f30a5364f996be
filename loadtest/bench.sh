#!/usr/bin/env bash
# `make bench`: the standard load set (about half an hour) against release builds,
# written into docs/performance.md between its bench markers. Server and harness share this
# machine. Postgres and Redis (for the three-server idle run and the quota run) come from
# BENCH_DATABASE_URL and BENCH_REDIS_URL, by default the local ones; without them those
# runs are skipped and show as "not run".
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-/var/tmp/chat-target}
PG_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_bench}
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379}
PASSWORD=bench-password-1
# One interval per answer: users send again as soon as the 20 s answer has streamed.
TOKENS_PER_SEC=50 REPLY_TOKENS=1000 INTERVAL=20 BATCH_MS=30
# The real-model path: an OpenAI-compatible stub at a model's pace (120 tokens at 50/s, a
# 2.4 s answer, the first token at once), called directly and through the server.
STUB_ADDR=127.0.0.1:9300 STUB_TOKENS=120 STUB_RATE=50 STUB_FIRST_MS=0
# Back-to-back users' first messages spread over about one answer, so answers complete
# evenly over the window instead of in waves of all users at once. One user gets a longer
# window: it answers only ~0.4 times a second, and each answer is one first-token sample.
STUB_SPREAD=2.4
# Every chat scenario runs twice: with the demo model, and through a second stub at the
# demo model's pace (the `*-stub` runs), so the path to a real model is measured under the
# same loads: the model's stream over HTTP, SSE parsing, titles from the stub.
PACE_STUB_ADDR=127.0.0.1:9301
stub_secs() { if [ "$1" = 1 ]; then echo 30; else echo 20; fi; }
# Capacity searches (a stepped ramp of chat users, one tab each, at the same pace): steps
# from 200 users, 25% more each, 5 s for a step's new users to start, then a 10 s window
# (~16 s a step). A step holds with beyond-batching p99 ≤ 5 ms, no late send and nothing
# lost. About three minutes for a capacity of 3,000 (12 steps).
CAPACITY=(--start 200 --growth 1.25 --settle 5 --duration 10 --interval "$INTERVAL" --users 10000)

cd "$ROOT"
CARGO_TARGET_DIR=$TARGET cargo build --release --locked -p chat-server -p loadtest
SERVER=$TARGET/release/chat-server
LT=$TARGET/release/loadtest
WORK=$(mktemp -d /tmp/chat-bench.XXXXXX)
RESULTS=$WORK/results
mkdir -p "$RESULTS"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
# Every socket is a file; the hard limit is what one process can hold.
ulimit -n "$(ulimit -Hn)"
export BENCH_NOFILE
BENCH_NOFILE=$(ulimit -n)

# The embedded defaults, but: deltas carry `emittedAt`, long answers, and no per-address
# login or socket limit (the flood comes from one address; the hashing queue is what is
# measured, and every virtual tab connects from 127.0.0.1).
mkdir -p "$WORK/config"
cp config/plans.toml "$WORK/config/"
sed -e 's/^frame_timestamps = false/frame_timestamps = true/' \
    -e "s/^demo_reply_tokens = .*/demo_reply_tokens = $REPLY_TOKENS/" \
    -e "s/^demo_tokens_per_sec = .*/demo_tokens_per_sec = $TOKENS_PER_SEC/" \
    -e "s/^batch_ms = .*/batch_ms = $BATCH_MS/" \
    -e 's/^\(address_calls\|address_failures\|pair_failures\|email_mails\) = .*/\1 = 1000000/' \
    -e 's/^max_sockets_per_address = [0-9]*/max_sockets_per_address = 1000000/' \
    config/default.toml > "$WORK/config/default.toml"
export CONFIG_DIR=$WORK/config RUST_LOG=warn

# wait_for URL WHAT LOG: waits up to 10 s until URL answers, or stops the bench.
wait_for() {
  for _ in $(seq 100); do
    curl -fs "$1" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "$2 did not start; see $3" >&2
  exit 1
}

# start_server NAME PORT [ENV=VALUE...]: starts a server, waits for its health check.
start_server() {
  local name=$1 port=$2
  shift 2
  if curl -fs "http://127.0.0.1:$port/api/health" >/dev/null 2>&1; then
    echo "port $port is taken by another server: stop it first" >&2
    exit 1
  fi
  env DATA_DIR="$WORK/$name" BIND_ADDR="127.0.0.1:$port" "$@" "$SERVER" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  LAST_PID=$!
  wait_for "http://127.0.0.1:$port/api/health" "server $name" "$WORK/$name.log"
}
stop_server() { kill "$1"; wait "$1" 2>/dev/null || true; }

# run NAME ARGS...: one loadtest run, its report kept as NAME.json and NAME.txt.
run() {
  local name=$1
  shift
  echo "== $name: loadtest $*" >&2
  "$LT" "$@" --label "$name" --json "$RESULTS/$name.json" >"$RESULTS/$name.txt"
  cat "$RESULTS/$name.txt" >&2
}

# start_stub ADDR RATE TOKENS: a model stub (its own process) answering TOKENS tokens at
# RATE a second; its pid in STUB_PID.
start_stub() {
  local addr=$1 rate=$2 tokens=$3
  "$LT" model-stub --bind "$addr" --tokens-per-sec "$rate" --reply-tokens "$tokens" \
    --first-token-ms "$STUB_FIRST_MS" --threads 2 2>>"$WORK/model-stub.log" &
  PIDS+=($!)
  STUB_PID=$!
  wait_for "http://$addr/v1/models" "model stub on $addr" "$WORK/model-stub.log"
}
start_stub "$PACE_STUB_ADDR" "$TOKENS_PER_SEC" "$REPLY_TOKENS"
PACE_STUB=$STUB_PID
# A server's environment for the `*-stub` runs (async-openai adds /chat/completions).
VIA_PACE_STUB=(OPENAI_API_KEY=bench OPENAI_BASE_URL="http://$PACE_STUB_ADDR/v1")

# --- SQLite, one server --------------------------------------------------------------
DATA_DIR=$WORK/sqlite "$SERVER" users seed --count 10000 --password "$PASSWORD" --plan plus \
  --tokens "$WORK/users.tsv" >&2
start_server sqlite 8080
PID=$LAST_PID
COMMON=(--tokens "$WORK/users.tsv" --server-pid "$PID" --batch-ms "$BATCH_MS")
# One process holds at most `ulimit -n` sockets (minus a few): as many tabs as fit.
IDLE_USERS=$(((BENCH_NOFILE - 200) / 2))
run idle-1 idle "${COMMON[@]}" --users "$IDLE_USERS" --tabs 2 --duration 10 --procs 2
run churn churn "${COMMON[@]}" --users 1000 --tabs 1 --duration 20 --hold-ms 200
# Chat runs measure after a warm-up of one interval (every user has sent once).
run chat-5k chat "${COMMON[@]}" --users 5000 --tabs 1 --duration 30 --interval "$INTERVAL"
run chat-2tabs chat "${COMMON[@]}" --users 1000 --tabs 2 --duration 20 --interval "$INTERVAL"
run logins chat "${COMMON[@]}" --users 1000 --tabs 1 --duration 20 --interval "$INTERVAL" \
  --login-flood 128 --password "$PASSWORD"
stop_server "$PID"
# The capacity search on a fresh server: the login flood leaves ~1 GB of allocator arenas.
start_server cap-server 8080 DATA_DIR="$WORK/sqlite"
PID=$LAST_PID
run cap-server capacity --tokens "$WORK/users.tsv" --server-pid "$PID" --batch-ms "$BATCH_MS" "${CAPACITY[@]}"
stop_server "$PID"
# The same runs through the stub at the demo model's pace, on a fresh server.
start_server sqlite-stub 8080 DATA_DIR="$WORK/sqlite" "${VIA_PACE_STUB[@]}"
PID=$LAST_PID
COMMON=(--tokens "$WORK/users.tsv" --server-pid "$PID" --stub-pid "$PACE_STUB" --batch-ms "$BATCH_MS")
run chat-5k-stub chat "${COMMON[@]}" --users 5000 --tabs 1 --duration 30 --interval "$INTERVAL"
run chat-2tabs-stub chat "${COMMON[@]}" --users 1000 --tabs 2 --duration 20 --interval "$INTERVAL"
run logins-stub chat "${COMMON[@]}" --users 1000 --tabs 1 --duration 20 --interval "$INTERVAL" \
  --login-flood 128 --password "$PASSWORD"
stop_server "$PID"
start_server cap-server-stub 8080 DATA_DIR="$WORK/sqlite" "${VIA_PACE_STUB[@]}"
PID=$LAST_PID
run cap-server-stub capacity --tokens "$WORK/users.tsv" --server-pid "$PID" --stub-pid "$PACE_STUB" \
  --batch-ms "$BATCH_MS" "${CAPACITY[@]}"
stop_server "$PID"

# --- The bare relay, same loads as chat-5k and chat-2tabs ----------------------------
# start_relay: a fresh relay on 9090, its pid in BASE.
start_relay() {
  "$LT" baseline --bind 127.0.0.1:9090 --tokens-per-sec "$TOKENS_PER_SEC" \
    --reply-tokens "$REPLY_TOKENS" --batch-ms "$BATCH_MS" 2>>"$WORK/baseline.log" &
  PIDS+=($!)
  BASE=$!
  sleep 1
}
start_relay
RELAY=(--url ws://127.0.0.1:9090/api/ws --tokens "$WORK/users.tsv" --server-pid "$BASE" --batch-ms "$BATCH_MS")
run baseline chat "${RELAY[@]}" --users 5000 --tabs 1 --duration 30 --interval "$INTERVAL"
run relay-2tabs chat "${RELAY[@]}" --users 1000 --tabs 2 --duration 20 --interval "$INTERVAL"
stop_server "$BASE"
# Its capacity search on a fresh relay, as the server's.
start_relay
run cap-relay capacity --url ws://127.0.0.1:9090/api/ws --tokens "$WORK/users.tsv" --server-pid "$BASE" \
  --batch-ms "$BATCH_MS" "${CAPACITY[@]}"
stop_server "$BASE"
# At half the relay's capacity (that many streams, each to a user's two tabs), fresh each:
# the relay and the server on the same load (CPU per frame, beyond batching, pre-stream,
# tab ↔ tab), then both holding idle sockets (RSS each).
HALF=$(python3 -c 'import json,sys; print(max(100, (json.load(open(sys.argv[1])).get("capacity") or 0) // 2))' \
  "$RESULTS/cap-relay.json")
start_relay
run half-relay chat --url ws://127.0.0.1:9090/api/ws --tokens "$WORK/users.tsv" --server-pid "$BASE" \
  --batch-ms "$BATCH_MS" --users "$HALF" --tabs 2 --duration 20 --interval "$INTERVAL"
stop_server "$BASE"
start_relay
run idle-relay idle --url ws://127.0.0.1:9090/api/ws --tokens "$WORK/users.tsv" --server-pid "$BASE" \
  --users "$IDLE_USERS" --tabs 2 --duration 10 --procs 2
stop_server "$BASE"
start_server half-server 8080 DATA_DIR="$WORK/sqlite"
PID=$LAST_PID
run half-server chat --tokens "$WORK/users.tsv" --server-pid "$PID" --batch-ms "$BATCH_MS" \
  --users "$HALF" --tabs 2 --duration 20 --interval "$INTERVAL"
stop_server "$PID"
start_server half-server-stub 8080 DATA_DIR="$WORK/sqlite" "${VIA_PACE_STUB[@]}"
PID=$LAST_PID
run half-server-stub chat --tokens "$WORK/users.tsv" --server-pid "$PID" --stub-pid "$PACE_STUB" \
  --batch-ms "$BATCH_MS" --users "$HALF" --tabs 2 --duration 20 --interval "$INTERVAL"
stop_server "$PID"

# --- The real-model path: the stub called directly, then through the server ----------
start_stub "$STUB_ADDR" "$STUB_RATE" "$STUB_TOKENS"
STUB=$STUB_PID
for n in 1 50 100; do
  run "direct-$n" direct --stub "http://$STUB_ADDR" --stub-pid "$STUB" --concurrency "$n" \
    --spread "$STUB_SPREAD" --duration "$(stub_secs "$n")"
done
# The same SQLite database and users, the model now the stub (async-openai adds
# /chat/completions to the base URL). Every send starts a new conversation, so every
# answer is also a title request to the stub, as with a real model. The plus plan's
# 1,000 answers a day are far off: a user answers ~10 times a run here, ~40 in the bench.
start_server via-stub 8080 DATA_DIR="$WORK/sqlite" OPENAI_API_KEY=bench OPENAI_BASE_URL="http://$STUB_ADDR/v1"
PID=$LAST_PID
for n in 1 50 100; do
  run "stub-$n" chat --tokens "$WORK/users.tsv" --server-pid "$PID" --stub-pid "$STUB" \
    --batch-ms "$BATCH_MS" --users "$n" --tabs 1 --interval 0 --new-conversations \
    --spread "$STUB_SPREAD" --duration "$(stub_secs "$n")"
done
stop_server "$PID"
stop_server "$STUB"

# --- Postgres + Redis: two instances streaming to a user's tabs on both, 50,000 idle
# --- sessions over three servers, and quota checks --------------------------------------
if psql "${PG_URL%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${PG_URL##*/}" >/dev/null 2>&1 \
  && psql "${PG_URL%/*}/postgres" -qc "CREATE DATABASE ${PG_URL##*/}" >/dev/null 2>&1 \
  && redis-cli -u "$REDIS" ping >/dev/null 2>&1; then
  SHARED=(DATABASE_URL="$PG_URL" REDIS_URL="$REDIS" REDIS_PREFIX="bench:" JWT_SECRET=bench-secret-0123456789-0123456789-0123)
  env "${SHARED[@]}" DATA_DIR="$WORK/pg" "$SERVER" users seed --count 25000 --password "$PASSWORD" \
    --plan plus --tokens "$WORK/pg-users.tsv" >&2
  # Tabs go round-robin over the URLs: tab 1 of every user on 8081, tab 2 on 8082, so
  # every delta reaches the second tab through Redis. Same pace as chat-2tabs.
  start_server pg1 8081 "${SHARED[@]}"
  P1=$LAST_PID
  start_server pg2 8082 "${SHARED[@]}"
  P2=$LAST_PID
  run chat-2inst chat --tokens "$WORK/pg-users.tsv" --users 1000 --tabs 2 --duration 20 \
    --interval "$INTERVAL" --batch-ms "$BATCH_MS" \
    --url ws://127.0.0.1:8081/api/ws --url ws://127.0.0.1:8082/api/ws --server-pid "$P1" --server-pid "$P2"
  stop_server "$P1"
  stop_server "$P2"
  start_server pg1 8081 "${SHARED[@]}" "${VIA_PACE_STUB[@]}"
  P1=$LAST_PID
  start_server pg2 8082 "${SHARED[@]}" "${VIA_PACE_STUB[@]}"
  P2=$LAST_PID
  run chat-2inst-stub chat --tokens "$WORK/pg-users.tsv" --users 1000 --tabs 2 --duration 20 \
    --interval "$INTERVAL" --batch-ms "$BATCH_MS" --stub-pid "$PACE_STUB" \
    --url ws://127.0.0.1:8081/api/ws --url ws://127.0.0.1:8082/api/ws --server-pid "$P1" --server-pid "$P2"
  stop_server "$P1"
  stop_server "$P2"
  # Fresh servers for the idle run: its RSS per session is taken from their idle RSS.
  start_server pg1 8081 "${SHARED[@]}"
  P1=$LAST_PID
  start_server pg2 8082 "${SHARED[@]}"
  P2=$LAST_PID
  start_server pg3 8083 "${SHARED[@]}"
  P3=$LAST_PID
  run idle-3 idle --tokens "$WORK/pg-users.tsv" --users 25000 --tabs 2 --duration 10 --procs 3 \
    --url ws://127.0.0.1:8081/api/ws --url ws://127.0.0.1:8082/api/ws --url ws://127.0.0.1:8083/api/ws \
    --server-pid "$P1" --server-pid "$P2" --server-pid "$P3"
  stop_server "$P1"
  stop_server "$P2"
  stop_server "$P3"
  echo "== quota" >&2
  env "${SHARED[@]}" DATA_DIR="$WORK/pg" "$LT" quota --tokens "$WORK/pg-users.tsv" --concurrency 64 \
    --duration 10 --json "$RESULTS/quota.json" >"$RESULTS/quota.txt"
  cat "$RESULTS/quota.txt" >&2
else
  echo "no Postgres at $PG_URL or Redis at $REDIS: skipping idle-3 and quota" >&2
fi

"$LT" render --results "$RESULTS" --doc docs/performance.md --date "$(date -u +%Y-%m-%d)"
echo "wrote docs/performance.md (reports in $RESULTS)" >&2
