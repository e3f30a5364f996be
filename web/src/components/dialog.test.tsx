import { render } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Dialog } from './dialog';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Dialog', () => {
  it('switches between modal and non-modal while it stays open', () => {
    const showModal = vi.spyOn(HTMLDialogElement.prototype, 'showModal');
    const show = vi.spyOn(HTMLDialogElement.prototype, 'show');
    const close = vi.spyOn(HTMLDialogElement.prototype, 'close');
    const view = (modal: boolean) => (
      <Dialog open modal={modal} onClose={() => undefined} title="Pay">
        <p>card</p>
      </Dialog>
    );
    const { rerender } = render(view(true));
    expect(showModal).toHaveBeenCalledTimes(1);
    expect(show).not.toHaveBeenCalled();

    rerender(view(false));
    expect(close).toHaveBeenCalledTimes(1);
    expect(show).toHaveBeenCalledTimes(1);

    rerender(view(false));
    expect(show).toHaveBeenCalledTimes(1);

    rerender(view(true));
    expect(close).toHaveBeenCalledTimes(2);
    expect(showModal).toHaveBeenCalledTimes(2);
    expect(document.querySelector('dialog')?.open).toBe(true);
  });
});
