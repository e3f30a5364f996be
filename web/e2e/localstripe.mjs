// localstripe (PyPI, pinned in the Makefile's test-deps): a stateful Stripe fake with a fake
// Stripe.js, started per test file on a free port.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './server.mjs';

export const localstripeBin =
  process.env.LOCALSTRIPE_BIN ?? join(process.env.CHAT_VENV ?? '/var/tmp/chat-venv', 'bin', 'localstripe');

/** One line for a run without it: the command that installs it. */
export function missingLocalstripe() {
  return existsSync(localstripeBin)
    ? null
    : `localstripe is not installed (${localstripeBin}): run \`make test-deps\` (or \`make test\`, which runs it)`;
}

export async function startLocalstripe() {
  const port = await freePort();
  let log = '';
  // --from-scratch: never load another run's store (localstripe keeps it in /tmp).
  const child = spawn(localstripeBin, ['--port', String(port), '--from-scratch'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const collect = (chunk) => {
    log += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null) throw new Error(`localstripe exited:\n${log}`);
    try {
      if ((await fetch(`${url}/js.stripe.com/v3/`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i === 300) throw new Error(`localstripe did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    jsUrl: `${url}/js.stripe.com/v3/`,
    log: () => log,
    /** localstripe signs every event it sends to `target` with `secret`, as Stripe does. */
    async registerWebhook(target, secret) {
      const response = await fetch(`${url}/_config/webhooks/chat`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: target, secret }),
      });
      if (!response.ok) throw new Error(`webhook registration failed: ${response.status}`);
    },
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * localstripe's fake `confirmCardPayment` ignores the card: it only runs the 3-D Secure step
 * of a PaymentIntent that already has a card. Real Stripe.js sends the card with the
 * confirmation; this does the same through localstripe's API (create the PaymentMethod,
 * attach it where the PaymentIntent has a customer, set it, confirm). It runs in the test
 * process, so the secret key never enters the page.
 */
export function confirmWithCard(apiBase, secretKey) {
  const call = async (path, body) => {
    const response = await fetch(`${apiBase}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok || json.error) throw json.error ?? { message: `localstripe answered ${response.status}` };
    return json;
  };
  return async (clientSecret, card, billingDetails) => {
    try {
      const id = /^(pi_\w+)_secret_/.exec(clientSecret)?.[1];
      const intent = await call(`/v1/payment_intents/${id}`);
      if (intent.client_secret !== clientSecret) throw { message: 'client secret does not match' };
      const method = await call('/v1/payment_methods', {
        type: 'card',
        card: {
          number: String(card.number ?? '').replace(/\s/g, ''),
          exp_month: card.exp_month,
          exp_year: card.exp_year,
          cvc: card.cvc,
        },
        billing_details: billingDetails,
      });
      if (intent.customer) await call(`/v1/payment_methods/${method.id}/attach`, { customer: intent.customer });
      await call(`/v1/payment_intents/${id}`, { payment_method: method.id });
      const confirmed = await call(`/v1/payment_intents/${id}/confirm`, {});
      return { status: confirmed.status, error: confirmed.last_payment_error ?? null };
    } catch (error) {
      return { error };
    }
  };
}

/**
 * Appended to localstripe's Stripe.js: `confirmCardPayment` sends the card first (above),
 * then leaves a 3-D Secure card to localstripe's own authentication window.
 */
export const CONFIRM_WITH_CARD_JS = `
;(() => {
  const fakeStripe = Stripe;
  Stripe = (key, options) => {
    const stripe = fakeStripe(key, options);
    const authenticate = stripe.confirmCardPayment;
    stripe.confirmCardPayment = async (clientSecret, data) => {
      const card = (data.payment_method.card.value || {}).card || {};
      const { status, error } = await window.__localstripeConfirmWithCard(
        clientSecret, card, data.payment_method.billing_details || {});
      if (error) return { error };
      if (status === 'requires_action') return authenticate(clientSecret, data);
      return { paymentIntent: { id: clientSecret.split('_secret_')[0], status } };
    };
    return stripe;
  };
})();
`;
