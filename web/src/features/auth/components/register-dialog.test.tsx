import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { RegisterDialog } from './register-dialog';

function renderDialog() {
  const router = createMemoryRouter([{ path: '/', element: <RegisterDialog onClose={vi.fn()} /> }], {
    initialEntries: ['/'],
  });
  render(<RouterProvider router={router} />);
}

afterAll(async () => {
  await i18n.changeLanguage('en-US');
});

describe('RegisterDialog privacy consent', () => {
  it.each([
    ['en-US', 'privacy policy', 'I have read and accept the privacy policy.'],
    ['hu-HU', 'adatvédelmi szabályzatot', 'Elolvastam és elfogadom az adatvédelmi szabályzatot.'],
  ])('%s: the link carries the words and opens the policy in a new tab', async (language, words, label) => {
    await i18n.changeLanguage(language);
    renderDialog();
    const link = screen.getByRole('link', { name: words });
    expect(link.textContent).toBe(words);
    expect(link.getAttribute('href')).toBe('/privacy-policy');
    expect(link.getAttribute('target')).toBe('_blank');
    expect(link.getAttribute('rel')).toContain('noopener');
    // The checkbox is named by the whole sentence, the link's words included.
    expect(screen.getByRole('checkbox', { name: label })).toBeDefined();
  });
});
