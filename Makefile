# The README's commands. Builds go to a target dir outside the clone (shared by clones,
# kept between CI runs); override with CARGO_TARGET_DIR=….
CARGO_TARGET_DIR ?= /var/tmp/chat-target
export CARGO_TARGET_DIR

# pipefail: a test run piped into the log still fails the target when it fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
TEST_LOG := $(CARGO_TARGET_DIR)/test-output.log
WEB_TEST_JSON := $(CARGO_TARGET_DIR)/web-test-results.json
E2E_LOG := $(CARGO_TARGET_DIR)/e2e-output.log

# localstripe (a Stripe fake) and moto (an S3 fake, for attachments in a bucket), both
# from PyPI, live in this venv for the tests.
CHAT_VENV ?= /var/tmp/chat-venv
export CHAT_VENV
LOCALSTRIPE_VERSION := 1.15.10
MOTO_VERSION := 5.2.5

.PHONY: run build web web-deps test test-deps test-rust test-backends test-web lint bench bench-search bench-stats types

## Build everything and start the server on its embedded defaults at http://127.0.0.1:8080
run: build
	$(CARGO_TARGET_DIR)/release/chat-server

build: web
	cargo build --release -p chat-server

## The web client, built into web/dist (the server serves it at /)
web: web-deps
	cd web && npm run build

web-deps:
	cd web && npm ci --no-audit --no-fund

## Everything CI checks: formatting, lints, and all tests on SQLite; again on Postgres and
## Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set (.ci/run sets them); the web
## client's lint, type check and unit tests; and end-to-end tests of the built client against
## the real server in Debian's headless Chromium (/usr/bin/chromium; .ci/run installs it).
## Ends with one line that sums up every run.
test: test-deps lint test-rust test-backends test-web
	@rust=$$(awk '/^test result:/ { p += $$4; f += $$6 } END { print p + 0, f + 0 }' $(TEST_LOG)); \
	web=$$(node -e 'const r = require(process.argv[1]); console.log(r.numPassedTests, r.numFailedTests)' $(WEB_TEST_JSON)); \
	e2e=$$(awk '/^# pass/ { p = $$3 } /^# fail/ { f = $$3 } END { print p + 0, f + 0 }' $(E2E_LOG)); \
	set -- $$rust $$web $$e2e; \
	echo "tests: $$(( $$1 + $$3 + $$5 )) passed, $$(( $$2 + $$4 + $$6 )) failed"

test-web: web-deps
	cd web && npm run lint && npm run typecheck
	cd web && npx vitest run --reporter=default --reporter=json --outputFile=$(WEB_TEST_JSON)
	cd web && npm run build
	@# The server binary cargo test built; the 360 px screenshot lands in web/e2e/artifacts.
	cd web && CHAT_SERVER_BIN=$(CARGO_TARGET_DIR)/debug/chat-server node --test --test-reporter=tap e2e/ 2>&1 | tee $(E2E_LOG)

## What the tests need beyond cargo and npm: Debian's Chromium (end-to-end tests), poppler's
## pdftotext (reads invoice PDFs back) and python3-venv, installed by scripts/test-deps.sh
## when they are missing (as root or with sudo; otherwise it stops with the one command to
## run); then localstripe and moto in $(CHAT_VENV).
test-deps:
	@bash scripts/test-deps.sh
	@if [ "$$($(CHAT_VENV)/bin/pip show localstripe 2>/dev/null | sed -n 's/^Version: //p')" != "$(LOCALSTRIPE_VERSION)" ] || \
		[ "$$($(CHAT_VENV)/bin/pip show moto 2>/dev/null | sed -n 's/^Version: //p')" != "$(MOTO_VERSION)" ]; then \
		echo "installing localstripe==$(LOCALSTRIPE_VERSION) and moto[server]==$(MOTO_VERSION) into $(CHAT_VENV)"; \
		python3 -m venv $(CHAT_VENV) && \
		$(CHAT_VENV)/bin/pip install --quiet --disable-pip-version-check localstripe==$(LOCALSTRIPE_VERSION) 'moto[server]==$(MOTO_VERSION)'; \
	fi

## Rewrites the web client's generated types (web/src/types/generated/) from the server's
## (chat-contract, the error codes); `make test` fails while they are stale.
types:
	UPDATE_TYPES=1 cargo test -p chat-server --lib generated_types

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings

test-rust:
	@mkdir -p $(CARGO_TARGET_DIR)
	cargo test --workspace --locked 2>&1 | tee $(TEST_LOG)

# The second run builds nothing new: it has the same workspace-wide feature set.
test-backends:
	@if [ -n "$$TEST_DATABASE_URL" ] && [ -n "$$TEST_REDIS_URL" ]; then \
		echo "== all tests again on Postgres ($$TEST_DATABASE_URL) and Redis ($$TEST_REDIS_URL)"; \
		cargo test --workspace --locked 2>&1 | tee -a $(TEST_LOG); \
	else \
		echo "== skipped: tests on Postgres and Redis (set TEST_DATABASE_URL=postgres://…/postgres and TEST_REDIS_URL=redis://…)"; \
	fi

# The standard load set (about half an hour; release builds, local Postgres and Redis when
# there), written into docs/performance.md. See loadtest/bench.sh.
bench:
	CARGO_TARGET_DIR=$(CARGO_TARGET_DIR) bash loadtest/bench.sh

# Search time at 100,000 messages of one user, on SQLite and the local Postgres (a few
# minutes); the figures go into docs/performance.md by hand. See loadtest/search-bench.sh.
bench-search:
	CARGO_TARGET_DIR=$(CARGO_TARGET_DIR) bash loadtest/search-bench.sh

# The operator's stats call at 1,000,000 answers and 100,000 users, on SQLite and the local
# Postgres (a few minutes); the figures go into docs/performance.md by hand. See
# loadtest/stats-bench.sh.
bench-stats:
	CARGO_TARGET_DIR=$(CARGO_TARGET_DIR) bash loadtest/stats-bench.sh
