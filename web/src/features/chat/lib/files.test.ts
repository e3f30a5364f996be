import { describe, expect, it } from 'vitest';
import { storedDocument } from '@/test/chat-fixtures';
import {
  DOCUMENT_ACCEPT,
  formatFileSize,
  isDocument,
  isDocumentSource,
  isWebSource,
  newerFile,
  sourceHref,
  webSourceHref,
} from './files';

const file = (name: string, type = '') => ({ name, type });

describe('documents are told from images and other files', () => {
  it('by their name: PDF, DOCX, TXT, Markdown and CSV', () => {
    for (const name of ['a.pdf', 'b.DOCX', 'c.txt', 'd.md', 'e.markdown', 'f.csv']) expect(isDocument(file(name)), name).toBe(true);
    // Windows calls a CSV an Excel file: the name still tells.
    expect(isDocument(file('g.csv', 'application/vnd.ms-excel'))).toBe(true);
  });

  it('or by their type when the name has no extension', () => {
    expect(isDocument(file('scan', 'application/pdf'))).toBe(true);
    expect(isDocument(file('clip', 'text/plain'))).toBe(true);
  });

  it('and not an old Word file, a spreadsheet or an image', () => {
    for (const name of ['a.doc', 'b.xlsx', 'c.png', 'd.zip', 'e']) expect(isDocument(file(name)), name).toBe(false);
  });

  it('the picker offers the same extensions and types', () => {
    expect(DOCUMENT_ACCEPT.split(',')).toEqual(expect.arrayContaining(['.pdf', '.docx', '.txt', '.md', '.csv', 'application/pdf', 'text/csv']));
  });
});

describe('the newer of two copies of a document', () => {
  const at = (progress: number) => storedDocument({ progress });
  it('is the one further along, whichever came last', () => {
    expect(newerFile(at(10), at(40)).progress).toBe(40);
    expect(newerFile(at(40), at(10)).progress).toBe(40);
  });

  it('is an end (ready or failed) over any progress', () => {
    const ready = storedDocument({ status: 'ready', progress: 100 });
    const failed = storedDocument({ status: 'failed', progress: 30 });
    expect(newerFile(ready, at(100))).toBe(ready);
    expect(newerFile(at(90), failed)).toBe(failed);
    expect(newerFile(failed, at(95))).toBe(failed);
  });

  it('is the later one on a tie', () => {
    const later = at(40);
    expect(newerFile(at(40), later)).toBe(later);
  });
});

describe('sources', () => {
  it('are web pages or documents, told apart by their fields', () => {
    const sources = [
      { url: 'https://example.org/a', title: 'A page', site: 'example.org' },
      { fileId: 'd1', name: 'a.pdf', page: 1 },
    ];
    expect(sources.map(isWebSource)).toEqual([true, false]);
    expect(sources.map(isDocumentSource)).toEqual([false, true]);
  });

  it('link a web page only over http and https', () => {
    const web = (url: string) => ({ url, title: 't', site: 's' });
    expect(webSourceHref(web('https://example.org/a?b=1'))).toBe('https://example.org/a?b=1');
    expect(webSourceHref(web('http://127.0.0.1:8080/lighthouse.html'))).toBe('http://127.0.0.1:8080/lighthouse.html');
    for (const url of ['javascript:alert(1)', ' javascript:alert(1)', 'data:text/html,x', 'ftp://example.org/', 'example.org', '']) {
      expect(webSourceHref(web(url)), url).toBeNull();
    }
  });

  it('open their file, a PDF at its page', () => {
    expect(sourceHref({ fileId: 'd1', name: 'report.pdf', page: 3 })).toBe('/api/files/d1#page=3');
    expect(sourceHref({ fileId: 'd1', name: 'report.pdf', page: null })).toBe('/api/files/d1');
    expect(sourceHref({ fileId: 'd2', name: 'notes.md', page: 2 })).toBe('/api/files/d2');
  });
});

describe('file sizes', () => {
  it('read as people write them, in each language', () => {
    expect(formatFileSize(512, 'en-US')).toBe('0.5 kB');
    expect(formatFileSize(3, 'en-US')).toBe('0.1 kB');
    expect(formatFileSize(34 * 1024, 'en-US')).toBe('34 kB');
    expect(formatFileSize(1.25 * 1024 * 1024, 'en-US')).toBe('1.3 MB');
    expect(formatFileSize(1.25 * 1024 * 1024, 'hu-HU')).toBe('1,3 MB');
  });
});
