import { describe, expect, it } from 'vitest';
import { resources } from '@/locales/resources';
import { ERROR_CODES, ERROR_TEXTS } from '@/types/generated';
import { CLIENT_ERROR_CODES, CLIENT_ERROR_TEXT_KEYS, errorText, isErrorCode, serverErrorText } from './error-codes';
import { SUPPORTED_LANGUAGES } from './i18n';

type Texts = Record<string, Partial<Record<string, string>>>;

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

/** What is wrong with a table of texts by code: a code without a text, an empty one, placeholders that differ. */
function textProblems(codes: readonly string[], texts: Texts): string[] {
  const problems: string[] = [];
  for (const code of codes) {
    const text = (language: string) => texts[code]?.[language] ?? '';
    const en = text('en-US');
    for (const language of SUPPORTED_LANGUAGES) {
      if (!text(language).trim()) problems.push(`${code}: no ${language} text`);
      else if (placeholders(text(language)).join() !== placeholders(en).join()) problems.push(`${code}: ${language} placeholders differ`);
    }
  }
  return problems;
}

/** A client code's text in a language's resources (`ns:path.to.key`), or '' when it has none. */
function localeText(language: (typeof SUPPORTED_LANGUAGES)[number], key: string): string {
  const [namespace, path] = key.split(':') as [keyof (typeof resources)['en-US'], string];
  let node: unknown = resources[language][namespace];
  for (const part of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  return typeof node === 'string' ? node : '';
}

describe('the server’s error codes', () => {
  it('each have a text in both languages, with the same placeholders', () => {
    expect(textProblems(ERROR_CODES, ERROR_TEXTS)).toEqual([]);
  });

  it('are checked for real: a missing, empty or differently filled text is found', () => {
    const texts: Texts = {
      a: { 'en-US': 'At most {max}', 'hu-HU': 'Legfeljebb {max}' },
      b: { 'en-US': 'At most {max}', 'hu-HU': 'Legfeljebb' },
      c: { 'en-US': '{field} is required', 'hu-HU': ' ' },
    };
    expect(textProblems(['a', 'b', 'c', 'd'], texts)).toEqual([
      'b: hu-HU placeholders differ',
      'c: no hu-HU text',
      'd: no en-US text',
      'd: no hu-HU text',
    ]);
  });

  it('are told from other strings', () => {
    expect(isErrorCode('limit_reached')).toBe(true);
    expect(isErrorCode('limit_reahced')).toBe(false);
    expect(isErrorCode('offline')).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
  });
});

describe('the client’s own error codes', () => {
  it('each have a text in the client’s locales, in both languages', () => {
    const problems = CLIENT_ERROR_CODES.flatMap((code) =>
      SUPPORTED_LANGUAGES.filter((language) => !localeText(language, CLIENT_ERROR_TEXT_KEYS[code]).trim()).map(
        (language) => `${code}: no ${language} text (${CLIENT_ERROR_TEXT_KEYS[code]})`,
      ),
    );
    expect(problems).toEqual([]);
    expect(localeText('en-US', 'chat:errors.noSuchKey')).toBe('');
  });

  it('are none of the server’s', () => {
    expect(CLIENT_ERROR_CODES.filter((code) => isErrorCode(code))).toEqual([]);
  });
});

describe('the text of a code', () => {
  it('is the server’s, with what is known filled in', () => {
    expect(serverErrorText('too_many_projects', 'en-US', { max: 100 })).toBe('You can have at most 100 projects');
    expect(serverErrorText('too_many_projects', 'hu-HU', { max: 100 })).toBe('Legfeljebb 100 projektje lehet');
    expect(serverErrorText('field_required', 'en-US', { field: 'Name' })).toBe('Name is required');
  });

  it('is none while a placeholder stays empty, and then the generic text', () => {
    expect(serverErrorText('too_many_projects', 'en-US')).toBeNull();
    expect(errorText('field_too_long', { field: 'Title' }, 'en-US')).toBe('An error occurred');
    expect(errorText('field_too_long', { field: 'Title', max: 200 }, 'en-US')).toBe('Title must be at most 200 characters');
  });

  it('of a client code is the client’s, in the language asked for', () => {
    expect(errorText('offline', {}, 'en-US')).toBe(localeText('en-US', 'chat:errors.offline'));
    expect(errorText('network_error', {}, 'hu-HU')).toBe(localeText('hu-HU', 'errors:networkError'));
  });
});
