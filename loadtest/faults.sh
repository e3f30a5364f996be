#!/usr/bin/env bash
# `loadtest faults` against debug builds: two chat-server instances on one Postgres database
# and a private Redis, 60 users with a tab on each, while Redis is killed and paused,
# Postgres restarts, and instance B is killed and stopped (about five minutes). Prints the
# table that docs/operations.md ("Faults: what the harness measures") shows, and writes it
# with its raw figures to FAULTS_OUT (default faults.md, and faults.json beside it).
#
# The run drops and recreates the database of FAULTS_DATABASE_URL (its name must contain
# "faults") and restarts its cluster with FAULTS_PG_RESTART: point both at a private
# cluster when others use the machine's. FAULTS_ARGS adds options (e.g. "--faults
# redis-kill,redis-pause" or "--users 20"); `loadtest faults --help` lists them.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-/var/tmp/chat-target}
DATABASE_URL=${FAULTS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/chat_faults}
PG_RESTART=${FAULTS_PG_RESTART:-pg_ctlcluster 15 main restart}
OUT=${FAULTS_OUT:-faults.md}

cd "$ROOT"
CARGO_TARGET_DIR=$TARGET cargo build --locked -p chat-server -p loadtest
# Every tab is a socket of the harness and of an instance.
ulimit -n "$(ulimit -Hn)"
# shellcheck disable=SC2086 # FAULTS_ARGS is a list of options
exec "$TARGET/debug/loadtest" faults \
  --server "$TARGET/debug/chat-server" \
  --database-url "$DATABASE_URL" \
  --pg-restart "$PG_RESTART" \
  --out "$OUT" \
  ${FAULTS_ARGS:-}
