import { describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import { cardErrorKey, type CardErrorKey } from './card-errors';

describe('cardErrorKey', () => {
  it.each<[string, CardErrorKey]>([
    ['incomplete_number', 'number'],
    ['invalid_number', 'number'],
    ['incorrect_number', 'number'],
    ['incomplete_cvc', 'cvc'],
    ['invalid_cvc', 'cvc'],
    ['incorrect_cvc', 'cvc'],
    ['incomplete_expiry', 'expiryFormat'],
    ['invalid_expiry_month', 'month'],
    ['invalid_expiry_month_past', 'expired'],
    ['invalid_expiry_year_past', 'expired'],
    ['invalid_expiry_year', 'expired'],
    ['expired_card', 'expired'],
  ])('maps %s to the %s message', (code, key) => {
    expect(cardErrorKey({ type: 'validation_error', code })).toBe(key);
  });

  it('leaves declines, other codes and missing errors to the caller', () => {
    expect(cardErrorKey({ type: 'card_error', code: 'card_declined' })).toBeNull();
    expect(cardErrorKey({ code: 'processing_error' })).toBeNull();
    expect(cardErrorKey({ code: 'toString' })).toBeNull();
    expect(cardErrorKey({ message: 'Bad request' })).toBeNull();
    expect(cardErrorKey(undefined)).toBeNull();
    expect(cardErrorKey(null)).toBeNull();
  });

  it.each(['en-US', 'hu-HU'])('has a %s text for every message', (lng) => {
    const t = i18n.getFixedT(lng, 'subscription');
    const keys: CardErrorKey[] = ['number', 'cvc', 'expiryFormat', 'month', 'expired'];
    const texts = keys.map((key) => t(`card.errors.${key}`));
    for (const [i, text] of texts.entries()) expect(text).not.toBe(`card.errors.${keys[i]}`);
    expect(new Set(texts).size).toBe(keys.length);
  });
});
