# The README's commands. Builds go to a target dir outside the clone (shared by clones,
# kept between CI runs); override with CARGO_TARGET_DIR=….
CARGO_TARGET_DIR ?= /var/tmp/chat-target
export CARGO_TARGET_DIR

# pipefail: a test run piped into the log still fails the target when it fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
TEST_LOG := $(CARGO_TARGET_DIR)/test-output.log

.PHONY: run build web test test-rust test-backends lint

## Build everything and start the server on its embedded defaults at http://127.0.0.1:8080
run: build
	$(CARGO_TARGET_DIR)/release/chat-server

build: web
	cargo build --release -p chat-server

## The web client, once it exists (web/package.json), built into web/dist
web:
	@if [ -f web/package.json ]; then cd web && npm ci --no-audit --no-fund && npm run build; fi

## Everything CI checks: formatting, lints, and all tests on SQLite; again on Postgres and
## Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set (.ci/run sets them). Ends with
## one line that sums up every test run.
test: lint test-rust test-backends
	@awk '/^test result:/ { passed += $$4; failed += $$6 } \
		END { printf "tests: %d passed, %d failed\n", passed, failed }' $(TEST_LOG)

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
