import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomId } from './random-id';

describe('randomId', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('falls back to 32 random hex digits outside a secure context', () => {
    vi.stubGlobal('isSecureContext', false);
    const a = randomId();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(randomId()).not.toBe(a);
  });
});
