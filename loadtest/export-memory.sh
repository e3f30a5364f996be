#!/usr/bin/env bash
# Peak memory of the server while it exports an account of 100,000 messages
# (docs/performance.md, "Export memory").
#
#   [CONVERSATIONS=100] loadtest/export-memory.sh [path/to/chat-server]
#
# A throwaway data dir (SQLite): one seeded user, 100 conversations of 1,000 messages
# (400 random hex characters each) inserted straight into the database, then the server
# started and the export downloaded with curl. Memory is read from /proc/<pid>/status:
# VmHWM once the server is idle, then, after resetting the peak (clear_refs 5), VmHWM
# after the export; VmRSS is sampled every 100 ms meanwhile.
set -euo pipefail

BIN=${1:-${CARGO_TARGET_DIR:-/var/tmp/chat-target}/release/chat-server}
CONVERSATIONS=${CONVERSATIONS:-100}
PER_CONVERSATION=1000
DIR=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$DIR"' EXIT
export DATA_DIR=$DIR CONFIG_DIR=$DIR/no-config RUST_LOG=warn
unset DATABASE_URL REDIS_URL

"$BIN" users seed --count 1 --password secret12 --prefix export --plan free --tokens "$DIR/tokens.tsv"
TOKEN=$(cut -f2 "$DIR/tokens.tsv")
USER_ID=$(sqlite3 "$DIR/chat.db" "SELECT id FROM users")
TOTAL=$((CONVERSATIONS * PER_CONVERSATION))
sqlite3 "$DIR/chat.db" <<SQL
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $CONVERSATIONS - 1)
INSERT INTO conversations (id, user_id, title, model, created_at, updated_at, current_message_id)
SELECT printf('c%03d', i), '$USER_ID', printf('Conversation %d', i), 'gpt-4o-mini',
       1700000000000 + i * $PER_CONVERSATION, 1700000000000 + (i + 1) * $PER_CONVERSATION - 1,
       printf('m%06d', (i + 1) * $PER_CONVERSATION - 1)
FROM c;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $TOTAL - 1)
INSERT INTO messages (id, conversation_id, role, content, status, created_at, updated_at, parent_id)
SELECT printf('m%06d', i), printf('c%03d', i / $PER_CONVERSATION),
       CASE i % 2 WHEN 0 THEN 'user' ELSE 'assistant' END, hex(randomblob(200)), 'complete',
       1700000000000 + i, 1700000000000 + i,
       CASE WHEN i % $PER_CONVERSATION = 0 THEN NULL ELSE printf('m%06d', i - 1) END
FROM n;
SQL
echo "messages: $(sqlite3 "$DIR/chat.db" "SELECT COUNT(*) FROM messages"), database: $(du -h "$DIR/chat.db" | cut -f1)"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BIND_ADDR=127.0.0.1:$PORT "$BIN" 2>"$DIR/server.log" &
SERVER=$!
until curl -sf "http://127.0.0.1:$PORT/api/health" >/dev/null; do sleep 0.2; done
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SERVER/status"; }
# Idle once what loads after start-up (the tokenizers, in the background) has loaded.
previous=0
while (($(kb VmRSS) != previous)); do previous=$(kb VmRSS); sleep 3; done
echo "idle: VmRSS $(kb VmRSS) kB, VmHWM $(kb VmHWM) kB"
echo 5 >"/proc/$SERVER/clear_refs"

PEAK_SAMPLE=0
curl -sf -H "Authorization: Bearer $TOKEN" -o "$DIR/export.zip" \
    -w 'export: %{size_download} bytes in %{time_total} s\n' "http://127.0.0.1:$PORT/api/account/export" &
CURL=$!
while kill -0 "$CURL" 2>/dev/null; do
    rss=$(kb VmRSS)
    ((rss > PEAK_SAMPLE)) && PEAK_SAMPLE=$rss
    sleep 0.1
done
wait "$CURL"
echo "during the export: VmHWM $(kb VmHWM) kB, highest VmRSS sampled $PEAK_SAMPLE kB; after: VmRSS $(kb VmRSS) kB"
unzip -l "$DIR/export.zip" | tail -1
unzip -p "$DIR/export.zip" manifest.json | tr -d '\n '
echo
