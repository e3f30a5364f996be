import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// jsdom has <dialog> but (depending on its version) not its modal methods: enough of
// them for the Dialog component.
function isImplemented(): boolean {
  try {
    const dialog = document.createElement('dialog');
    dialog.showModal();
    const open = dialog.open;
    dialog.close();
    return open;
  } catch {
    return false;
  }
}

// The server socket test runs in the node environment: no DOM to patch or clean there.
const hasDom = typeof window !== 'undefined';

if (hasDom && typeof HTMLDialogElement !== 'undefined' && !isImplemented()) {
  HTMLDialogElement.prototype.showModal = function showModal(this: HTMLDialogElement) {
    this.open = true;
  };
  HTMLDialogElement.prototype.show = function show(this: HTMLDialogElement) {
    this.open = true;
  };
  HTMLDialogElement.prototype.close = function close(this: HTMLDialogElement) {
    this.open = false;
    this.dispatchEvent(new Event('close'));
  };
}

// jsdom has no matchMedia; the layout asks it for the narrow-screen breakpoint.
if (hasDom && !window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
      addListener: () => undefined,
      removeListener: () => undefined,
      dispatchEvent: () => false,
    }) as MediaQueryList;
}

afterEach(() => {
  if (!hasDom) return;
  cleanup();
  localStorage.clear();
  // Expire every cookie a test set.
  for (const cookie of document.cookie.split(';')) {
    const name = cookie.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; Max-Age=0; Path=/`;
  }
});
