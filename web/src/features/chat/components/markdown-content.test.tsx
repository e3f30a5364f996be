import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { MarkdownContent } from './markdown-content';

const writeText = vi.fn<(text: string) => Promise<void>>();

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  writeText.mockReset().mockResolvedValue(undefined);
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the copy button of a code block', () => {
  it('copies the code, not its language, and says so for about two seconds', async () => {
    vi.useFakeTimers();
    render(<MarkdownContent source={'Code:\n\n```js\nconst a = "<b>";\n```'} />);
    const button = screen.getByRole('button', { name: 'Copy code' });
    expect(button.tagName).toBe('BUTTON');
    expect(button.getAttribute('type')).toBe('button');
    expect(button.textContent).toBe('Copy');
    await act(async () => {
      fireEvent.click(button);
      await Promise.resolve();
    });
    expect(writeText).toHaveBeenCalledWith('const a = "<b>";');
    expect(screen.getByRole('button', { name: 'Copied' }).textContent).toBe('Copied');
    expect(screen.getByRole('status').textContent).toBe('The code is on the clipboard.');
    act(() => {
      vi.advanceTimersByTime(2000);
    });
    expect(screen.getByRole('button', { name: 'Copy code' }).textContent).toBe('Copy');
    expect(screen.getByRole('status').textContent).toBe('');
  });

  it('says when the copy failed', async () => {
    writeText.mockRejectedValue(new Error('denied'));
    render(<MarkdownContent source={'```\nx\n```'} />);
    fireEvent.click(screen.getByRole('button', { name: 'Copy code' }));
    await screen.findByText('Copy failed', { selector: 'button' });
  });

  it('is there on every block, in the language of the page', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<MarkdownContent source={'```py\na = 1\n```\n\ntext\n\n```\nb\n```'} />);
    const buttons = screen.getAllByRole('button', { name: 'Kód másolása' });
    expect(buttons).toHaveLength(2);
    expect(buttons.map((b) => b.textContent)).toEqual(['Másolás', 'Másolás']);
    fireEvent.click(buttons[1]!);
    await screen.findByRole('button', { name: 'Másolva' });
    expect(writeText).toHaveBeenCalledWith('b');
  });

  it('stays with its block while the answer grows', () => {
    const { rerender, container } = render(<MarkdownContent source={'```\none\n```'} />);
    rerender(<MarkdownContent source={'```\none\n```\n\nmore text'} />);
    const block = container.querySelector<HTMLElement>('.code-block')!;
    expect(within(block).getAllByRole('button')).toHaveLength(1);
  });
});
