#!/usr/bin/env bash
# loadtest/send-path.sh NAME BINDIR: the send path of one build, for a before/after check of a
# change on it: the real-model runs of bench.sh (a stub at 50 tokens/s, 120 tokens, the first
# at once; 200 seeded Plus users) as stub-1 (30 s), stub-50 and stub-50-follow (50 users, every
# send a follow-up; 20 s each) on SQLite, then stub-50 and stub-50-follow on Postgres + Redis
# (one instance; BENCH_DATABASE_URL's server, a database chat_send_path). BINDIR holds the
# release chat-server and loadtest of the build; reports go to $RESULTS_ROOT/NAME (default
# /var/tmp/send-path). Run each build one after the other on a quiet machine.
set -euo pipefail
NAME=${1:?usage: send-path.sh NAME BINDIR} BIN=${2:?usage: send-path.sh NAME BINDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SERVER=$BIN/chat-server LT=$BIN/loadtest
WORK=$(mktemp -d /tmp/send-path-$NAME.XXXXXX)
RESULTS=${RESULTS_ROOT:-/var/tmp/send-path}/$NAME
PG_SERVER=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_bench}
PG_SERVER=${PG_SERVER%/*}
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379}
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
mkdir -p "$WORK/config"
cp $ROOT/config/plans.toml "$WORK/config/"
sed -e 's/^frame_timestamps = false/frame_timestamps = true/' \
    -e "s/^batch_ms = .*/batch_ms = 30/" \
    -e 's/^\(address_calls\|address_failures\|pair_failures\|email_mails\) = .*/\1 = 1000000/' \
    -e 's/^max_sockets_per_address = [0-9]*/max_sockets_per_address = 1000000/' \
    $ROOT/config/default.toml > "$WORK/config/default.toml"
export CONFIG_DIR=$WORK/config RUST_LOG=warn
wait_for() { for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "$2 did not start" >&2; exit 1; }
start_server() { local name=$1 port=$2; shift 2
  env DATA_DIR="$WORK/$name" BIND_ADDR="127.0.0.1:$port" "$@" "$SERVER" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!); LAST_PID=$!; wait_for "http://127.0.0.1:$port/api/health" "server $name"; }
run() { local name=$1; shift; echo "== $NAME $name" >&2
  "$LT" "$@" --label "$name" --json "$RESULTS/$name.json" >"$RESULTS/$name.txt"
  grep -E "pre-stream|first delta" "$RESULTS/$name.txt" >&2 || true; }
STUB_ADDR=127.0.0.1:9300
"$LT" model-stub --bind "$STUB_ADDR" --tokens-per-sec 50 --reply-tokens 120 --first-token-ms 0 --threads 2 2>>"$WORK/model-stub.log" &
PIDS+=($!); STUB=$!
wait_for "http://$STUB_ADDR/v1/models" stub
VIA=(OPENAI_API_KEY=bench OPENAI_BASE_URL="http://$STUB_ADDR/v1")
DATA_DIR=$WORK/sqlite "$SERVER" users seed --count 200 --password bench-password-1 --plan plus --tokens "$WORK/users.tsv" >&2
start_server sqlite 8080 DATA_DIR="$WORK/sqlite" "${VIA[@]}"; PID=$LAST_PID
C=(--tokens "$WORK/users.tsv" --server-pid "$PID" --stub-pid "$STUB" --batch-ms 30 --tabs 1 --interval 0 --spread 2.4)
run stub-1 chat "${C[@]}" --users 1 --new-conversations --duration 30
run stub-50 chat "${C[@]}" --users 50 --new-conversations --duration 20
run stub-50-follow chat "${C[@]}" --users 50 --duration 20
kill $PID; wait $PID 2>/dev/null || true
PG=$PG_SERVER/chat_send_path
psql "$PG_SERVER/postgres" -qc "DROP DATABASE IF EXISTS chat_send_path" >/dev/null
psql "$PG_SERVER/postgres" -qc "CREATE DATABASE chat_send_path" >/dev/null
redis-cli -u "$REDIS" --scan --pattern 'send-path:*' | xargs -r redis-cli -u "$REDIS" del >/dev/null
SH=(DATABASE_URL=$PG REDIS_URL=$REDIS REDIS_PREFIX=send-path: JWT_SECRET=bench-secret-0123456789-0123456789-0123)
env "${SH[@]}" DATA_DIR="$WORK/pg" "$SERVER" users seed --count 200 --password bench-password-1 --plan plus --tokens "$WORK/pg-users.tsv" >&2
start_server pg 8081 "${SH[@]}" "${VIA[@]}"; PID=$LAST_PID
C=(--url ws://127.0.0.1:8081/api/ws --tokens "$WORK/pg-users.tsv" --server-pid "$PID" --stub-pid "$STUB" --batch-ms 30 --tabs 1 --interval 0 --spread 2.4)
run pg-stub-50 chat "${C[@]}" --users 50 --new-conversations --duration 20
run pg-stub-50-follow chat "${C[@]}" --users 50 --duration 20
kill $PID; wait $PID 2>/dev/null || true
echo "reports in $RESULTS" >&2
