import { describe, expect, it } from 'vitest';
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
