// Starts the real chat-server on embedded defaults (SQLite, log mailer, demo model,
// demo payments unless `env` configures Stripe) with a fresh data dir, serving the built
// client from web/dist.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const here = import.meta.dirname;
const targetDir = process.env.CARGO_TARGET_DIR ?? '/var/tmp/chat-target';
export const serverBin = process.env.CHAT_SERVER_BIN ?? join(targetDir, 'debug', 'chat-server');

export async function freePort() {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => ok(port));
    });
  });
}

// tracing colours its output; codes are read from plain text.
const stripAnsi = (text) => text.replace(/\u001b\[[0-9;]*m/g, '');

/** `env` adds to (or overrides) the server's environment, e.g. the Stripe settings. */
export async function startServer({ env = {} } = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-e2e-'));
  let log = '';
  // The command line (`cli` below) reads the same settings, so it sees the same database.
  const serverEnv = {
    ...process.env,
    BIND_ADDR: `127.0.0.1:${port}`,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    WEB_DIR: resolve(here, '..', 'dist'),
    CONFIG_DIR: join(dataDir, 'no-config'),
    RUST_LOG: 'info',
    DATABASE_URL: '',
    REDIS_URL: '',
    SMTP_URL: '',
    OPENAI_API_KEY: '',
    // No e2e test reverse charges a company; VIES is a port nothing listens on, never the EU's.
    VIES_URL: 'http://127.0.0.1:1/vies',
    // Nor MNB's exchange rates: a Hungarian seller's EUR invoice then states no VAT in HUF.
    HUF_RATE_URL: 'http://127.0.0.1:1/mnb',
    ...env,
  };
  const child = spawn(serverBin, [], { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk) => {
    log += stripAnsi(chunk.toString());
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i += 1) {
    try {
      const health = await fetch(`${url}/api/health`);
      if (health.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`chat-server exited:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    log: () => log,
    /** The newest 6-digit code mailed to `email` (the log transport writes mails). */
    async codeFor(email, { after = 0 } = {}) {
      for (let i = 0; i < 100; i += 1) {
        const mails = log.slice(after).split('mail (log transport)').filter((m) => m.includes(`to=${email}`));
        const last = mails.at(-1);
        const code = last?.match(/\b(\d{6})\b/)?.[1];
        if (code) return code;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no code mailed to ${email}`);
    },
    /**
     * Runs the server binary's operator command line on this server's data, e.g.
     * `['users', 'set-plan', email, 'plus']`; resolves with what it printed.
     */
    async cli(args) {
      const run = spawn(serverBin, args, { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      run.stdout.on('data', (chunk) => (output += chunk));
      run.stderr.on('data', (chunk) => (output += chunk));
      const code = await new Promise((r) => run.once('exit', r));
      if (code !== 0) throw new Error(`chat-server ${args.join(' ')} exited with ${code}:\n${stripAnsi(output)}`);
      return stripAnsi(output);
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
