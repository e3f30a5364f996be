// `make test` on a fresh machine (scripts/test-deps.sh): what the tests need from Debian's
// packages is installed when the script may (root, or sudo without a password), and
// otherwise it stops with the one command to run. A fake apt-get records what it was asked;
// Chromium is made missing by pointing the check elsewhere. The machine's packages are never
// touched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const SCRIPT = resolve(import.meta.dirname, '..', '..', 'scripts', 'test-deps.sh');

/** An executable shell script in `dir`. */
function tool(dir, name, body) {
  const path = join(dir, name);
  writeFileSync(path, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Runs the script with Chromium missing; `env` adds settings. */
function run(env) {
  const dir = mkdtempSync(join(tmpdir(), 'test-deps-'));
  const calls = join(dir, 'calls');
  writeFileSync(calls, '');
  const aptGet = tool(dir, 'apt-get', `echo "$*" >> ${calls}; ${env.aptFails ? 'exit 100' : 'exit 0'}`);
  const result = spawnSync('bash', [SCRIPT], {
    env: { ...process.env, CHROMIUM_BIN: join(dir, 'no-chromium'), APT_GET: aptGet, ...env.vars(dir, calls) },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr, calls: readFileSync(calls, 'utf8') };
}

test('as root, a missing package is installed and the run goes on', () => {
  const { status, stderr, calls } = run({ vars: () => ({ EUID_OVERRIDE: '0' }) });
  assert.equal(status, 0, stderr);
  assert.match(calls, /^update -qq\ninstall -y -qq chromium/);
  assert.match(stderr, /installing chromium/);
});

test('without root, sudo that needs no password installs it', () => {
  const { status, stderr, calls } = run({
    vars: (dir) => ({ EUID_OVERRIDE: '1000', SUDO: tool(dir, 'sudo', '[ "$1" = -n ] && shift; exec "$@"') }),
  });
  assert.equal(status, 0, stderr);
  assert.match(calls, /install -y -qq chromium/);
});

test('without root or sudo, it stops at once with the one command to run', () => {
  const { status, stderr, calls } = run({
    vars: (dir) => ({ EUID_OVERRIDE: '1000', SUDO: join(dir, 'no-sudo') }),
  });
  assert.equal(status, 1);
  assert.equal(calls, '', 'nothing was installed');
  assert.match(stderr, /make test needs: chromium/);
  assert.match(stderr, /apt-get update && apt-get install -y chromium/);
});

test('a failed install stops with the command to run by hand', () => {
  const { status, stderr } = run({ aptFails: true, vars: () => ({ EUID_OVERRIDE: '0' }) });
  assert.equal(status, 1);
  assert.match(stderr, /installing chromium failed/);
  assert.match(stderr, /apt-get update && apt-get install -y chromium/);
});

test('a missing promtool installs Debian\'s prometheus package', () => {
  const { status, stderr, calls } = run({
    vars: (dir) => ({ EUID_OVERRIDE: '0', PROMTOOL: join(dir, 'no-promtool') }),
  });
  assert.equal(status, 0, stderr);
  assert.match(calls, /install -y -qq chromium.* prometheus/);
});

test('with everything there it does nothing', () => {
  const result = spawnSync('bash', [SCRIPT], {
    env: { ...process.env, CHROMIUM_BIN: '/bin/sh', APT_GET: '/bin/false', EUID_OVERRIDE: '1000', SUDO: '/nonexistent' },
    encoding: 'utf8',
  });
  // The machine running the tests has poppler, python3-venv and prometheus (make test
  // installed them).
  assert.equal(result.status, 0, result.stderr);
});
