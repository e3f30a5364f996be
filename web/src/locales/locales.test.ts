import { describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import { namespaces, resources } from './resources';

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.set(path, value);
    else flatten(value, path).forEach((v, k) => out.set(k, v));
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}|<(\w+)>/g)].map((m) => m[1] ?? m[2]).sort();

describe('locales', () => {
  it('has the same namespaces in en-US and hu-HU', () => {
    expect(Object.keys(resources['hu-HU']).sort()).toEqual(Object.keys(resources['en-US']).sort());
  });

  describe.each(namespaces)('namespace %s', (namespace) => {
    const en = flatten(resources['en-US'][namespace]);
    const hu = flatten(resources['hu-HU'][namespace]);

    it('has exactly the same keys in both languages', () => {
      expect([...hu.keys()].sort()).toEqual([...en.keys()].sort());
    });

    it('has no empty text', () => {
      for (const [key, text] of [...en, ...hu]) expect(text.trim(), key).not.toBe('');
    });

    it('names no markup after a void HTML element (Trans would drop the words inside it)', () => {
      const voidElements = ['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr'];
      for (const [key, text] of [...en, ...hu]) {
        const tags = [...text.matchAll(/<(\w+)>/g)].map((m) => m[1]?.toLowerCase());
        expect(tags.filter((tag) => tag !== undefined && voidElements.includes(tag)), key).toEqual([]);
      }
    });

    it('uses the same interpolations and markup in both languages', () => {
      for (const [key, text] of en) expect(placeholders(hu.get(key) ?? ''), key).toEqual(placeholders(text));
    });
  });
});

/**
 * Hungarian long and medium dates end in a dot ("2026. december 26."), so a sentence
 * must not add one, and a suffix cannot be glued on ("26.-ig"): every hu-HU text with a
 * date is rendered here with real dates, as the screens format them.
 */
describe('hu-HU dates', () => {
  const day = new Date('2026-12-26T10:05:00Z');
  const formats: Intl.DateTimeFormatOptions[] = [
    { dateStyle: 'long' },
    { dateStyle: 'medium' },
    { dateStyle: 'medium', timeStyle: 'short' },
    { dateStyle: 'long', timeStyle: 'short' },
  ];
  const dates = formats.map((options) => new Intl.DateTimeFormat('hu-HU', options).format(day));

  const withDate = namespaces.flatMap((namespace) =>
    [...flatten(resources['hu-HU'][namespace])]
      .filter(([, text]) => /\{\{\s*date\s*\}\}/.test(text))
      .map(([key]) => [namespace, key] as const),
  );

  it('are formatted as Hungarian dates that end in a dot', () => {
    expect(dates[0]).toBe('2026. december 26.');
    expect(dates[1]).toBe('2026. dec. 26.');
  });

  it('has texts with dates to check', () => {
    expect(withDate.length).toBeGreaterThan(10);
  });

  it.each(withDate)('%s:%s reads well with every date format', (namespace, key) => {
    const t = i18n.getFixedT('hu-HU', namespace);
    for (const date of dates) {
      const text = t(key as never, { date, plan: 'Plus', current: 'Alap', name: 'Anna', price: '10 €' }) as string;
      expect(text, `${key} with ${date}`).toContain(date);
      expect(text, text).not.toMatch(/\.\s*\./);
      expect(text, text).not.toMatch(/\.-/);
    }
  });
});

/**
 * The interface addresses the user formally ("Ön") throughout. These are the informal
 * forms a review found (imperatives, "te" and its cases, -d/-od/-ed possessives).
 */
describe('hu-HU formal address', () => {
  const INFORMAL: RegExp[] = [
    // second person singular pronouns
    /(^|[^\p{L}])(te|neked|téged|veled|tőled|rólad|nálad|hozzád|tiéd|magad)(?![\p{L}])/iu,
    // informal imperatives and verbs found in review
    /(^|[^\p{L}])(engedélyezd|folytasd|tölts|válaszd|írd|kattints|próbáld|add|nézd|kérj|jelentkezz|várj|küldd|osztottál|szeretnél|tudsz|kell jelentkezned)(?![\p{L}])/iu,
    // -d possessives of the user's things, with or without a case ending
    /(^|[^\p{L}])(adataid|beszélgetéseid|kérdéseid|neved|fiókod|jelszavad|profilod|beállításaid|számláid|fájljaid|csomagod|előfizetésed)\p{L}*/iu,
    // "az általa" about the reader is "az Ön által"
    /az általa megadott/iu,
  ];
  // Quoted example of what a user may write to the assistant, not words addressed to the user.
  const ADDRESSED_TO_THE_ASSISTANT = new Set(['chat:projects.form.instructionsHint']);

  it.each(namespaces)('%s uses no informal form towards the user', (namespace) => {
    for (const [key, text] of flatten(resources['hu-HU'][namespace])) {
      if (ADDRESSED_TO_THE_ASSISTANT.has(`${namespace}:${key}`)) continue;
      for (const pattern of INFORMAL) expect(text, `${namespace}:${key}`).not.toMatch(pattern);
    }
  });
});
