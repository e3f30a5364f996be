# The README's commands. Builds go to a target dir outside the clone (shared by clones,
# kept between CI runs); override with CARGO_TARGET_DIR=….
CARGO_TARGET_DIR ?= /var/tmp/chat-target
export CARGO_TARGET_DIR

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
## Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set (.ci/run sets them).
test: lint test-rust test-backends

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings

test-rust:
	cargo test --workspace --locked

test-backends:
	@if [ -n "$$TEST_DATABASE_URL" ] && [ -n "$$TEST_REDIS_URL" ]; then \
		echo "== API tests on Postgres ($$TEST_DATABASE_URL) and Redis ($$TEST_REDIS_URL)"; \
		cargo test --locked -p chat-server --test api; \
	else \
		echo "== skipped: API tests on Postgres and Redis (set TEST_DATABASE_URL=postgres://…/postgres and TEST_REDIS_URL=redis://…)"; \
	fi
