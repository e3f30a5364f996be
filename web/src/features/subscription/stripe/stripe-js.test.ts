import { afterEach, describe, expect, it, vi } from 'vitest';
import { forgetStripeJs, loadStripeJs, type StripeFactory } from './stripe-js';

const URL_A = 'https://js.stripe.com/v3/';
const scripts = () => [...document.head.querySelectorAll('script')];

afterEach(() => {
  scripts().forEach((script) => script.remove());
  delete window.Stripe;
  forgetStripeJs();
});

describe('loadStripeJs', () => {
  it('adds the script once however often it is asked, and resolves to Stripe', async () => {
    const first = loadStripeJs(URL_A);
    const second = loadStripeJs(URL_A);
    expect(scripts().map((script) => script.src)).toEqual([URL_A]);
    const factory = vi.fn() as unknown as StripeFactory;
    window.Stripe = factory;
    scripts()[0]!.dispatchEvent(new Event('load'));
    await expect(first).resolves.toBe(factory);
    await expect(second).resolves.toBe(factory);
    await expect(loadStripeJs(URL_A)).resolves.toBe(factory);
    expect(scripts()).toHaveLength(1);
  });

  it('fails when the script defines no Stripe', async () => {
    const loading = loadStripeJs(URL_A);
    scripts()[0]!.dispatchEvent(new Event('load'));
    await expect(loading).rejects.toThrow('did not define Stripe');
  });

  it('forgets a failed load, so the next call adds the script again', async () => {
    const failed = loadStripeJs(URL_A);
    scripts()[0]!.dispatchEvent(new Event('error'));
    await expect(failed).rejects.toThrow(`could not load ${URL_A}`);
    expect(scripts()).toHaveLength(0);
    void loadStripeJs(URL_A).catch(() => undefined);
    expect(scripts()).toHaveLength(1);
  });
});
